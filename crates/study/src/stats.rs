//! Descriptive statistics and Student-t confidence intervals.
//!
//! The t quantile is computed from the regularized incomplete beta function
//! (continued fraction) and inverted by bisection; this is exact to well
//! beyond the 3–4 digits printed tables give, and avoids a heavy dependency.

use serde::Serialize;

/// Arithmetic mean; `None` for an empty sample.
pub fn mean(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        None
    } else {
        Some(xs.iter().sum::<f64>() / xs.len() as f64)
    }
}

/// Sample standard deviation (divisor n − 1); `None` for fewer than 2 values.
pub fn sample_sd(xs: &[f64]) -> Option<f64> {
    if xs.len() < 2 {
        return None;
    }
    let m = mean(xs)?;
    let ss: f64 = xs.iter().map(|x| (x - m) * (x - m)).sum();
    Some((ss / (xs.len() - 1) as f64).sqrt())
}

/// Natural log of the gamma function for x > 0 (Lanczos, g = 7, n = 9).
pub fn ln_gamma(x: f64) -> f64 {
    const G: f64 = 7.0;
    const COEF: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        // Reflection keeps the series in its accurate region.
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = COEF[0];
    let t = x + G + 0.5;
    for (i, c) in COEF.iter().enumerate().skip(1) {
        a += c / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// Regularized incomplete beta function I_x(a, b) for a, b > 0, 0 <= x <= 1.
pub fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    let front = ln_front.exp();
    // The continued fraction converges fast for x < (a+1)/(a+b+2); use the
    // symmetry I_x(a,b) = 1 − I_{1−x}(b,a) otherwise.
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_cf(a, b, x) / a
    } else {
        1.0 - front * beta_cf(b, a, 1.0 - x) / b
    }
}

/// Continued fraction for the incomplete beta, evaluated with the modified
/// Lentz method.
fn beta_cf(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    const EPS: f64 = 1e-15;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..10_000 {
        let m = m as f64;
        // Even step.
        let num = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        d = 1.0 + num * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + num / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        // Odd step.
        let num = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        d = 1.0 + num * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + num / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let delta = d * c;
        h *= delta;
        if (delta - 1.0).abs() < EPS {
            break;
        }
    }
    h
}

/// Cumulative distribution function of Student's t with `df` degrees of
/// freedom.
pub fn t_cdf(t: f64, df: f64) -> f64 {
    if t.is_nan() || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    let x = df / (df + t * t);
    let tail = 0.5 * incomplete_beta(df / 2.0, 0.5, x);
    if t >= 0.0 {
        1.0 - tail
    } else {
        tail
    }
}

/// Quantile of Student's t: the `t` with `t_cdf(t, df) == p`, for 0 < p < 1
/// and df > 0; `NaN` outside that domain.
pub fn t_quantile(p: f64, df: f64) -> f64 {
    if !(p > 0.0 && p < 1.0) || df.is_nan() || df <= 0.0 {
        return f64::NAN;
    }
    if p == 0.5 {
        return 0.0;
    }
    if p < 0.5 {
        return -t_quantile(1.0 - p, df);
    }
    // Bracket, then bisect: monotone and robust for every df.
    let mut lo = 0.0;
    let mut hi = 1.0;
    while t_cdf(hi, df) < p {
        lo = hi;
        hi *= 2.0;
        if hi > 1e300 {
            return f64::INFINITY;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if t_cdf(mid, df) < p {
            lo = mid;
        } else {
            hi = mid;
        }
        if hi - lo <= 1e-13 * hi {
            break;
        }
    }
    0.5 * (lo + hi)
}

/// The two-sided critical value t_{(1+level)/2, df}, e.g. 2.861 for
/// level 0.99 and df 19.
pub fn t_critical(level: f64, df: f64) -> f64 {
    t_quantile(0.5 + level / 2.0, df)
}

/// Half-width of the two-sided Student-t confidence interval of the mean at
/// `level` (e.g. 0.99): t · s / √n. `None` for fewer than 2 values or a level
/// outside (0, 1).
pub fn ci_half_width(xs: &[f64], level: f64) -> Option<f64> {
    if !(level > 0.0 && level < 1.0) {
        return None;
    }
    let sd = sample_sd(xs)?;
    let n = xs.len() as f64;
    Some(t_critical(level, n - 1.0) * sd / n.sqrt())
}

/// Half-width of the confidence interval at `level` of the ratio of two means,
/// mean(num) / mean(den), from independent samples (a speedup: one-processor runs over
/// p-processor runs). First-order (delta method): the ratio's relative variance is the sum
/// of the two means' relative variances; the critical value is Student's t with the
/// smaller sample's degrees of freedom, which errs wide. `None` when either sample has
/// fewer than 2 values, a mean is zero or the level is outside (0, 1).
pub fn ratio_ci_half_width(num: &[f64], den: &[f64], level: f64) -> Option<f64> {
    if !(level > 0.0 && level < 1.0) {
        return None;
    }
    let (a, b) = (mean(num)?, mean(den)?);
    if a == 0.0 || b == 0.0 {
        return None;
    }
    let (sa, sb) = (sample_sd(num)?, sample_sd(den)?);
    let rel_var = (sa / a).powi(2) / num.len() as f64 + (sb / b).powi(2) / den.len() as f64;
    let df = (num.len().min(den.len()) - 1) as f64;
    Some(t_critical(level, df) * (a / b).abs() * rel_var.sqrt())
}

/// Summary statistics of one group of runs (same unit as the metric).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// Mean.
    pub mean: f64,
    /// Sample standard deviation (`None` when n < 2).
    pub sd: Option<f64>,
    /// Confidence-interval half-width at `level` (`None` when n < 2).
    pub ci_half: Option<f64>,
    /// Confidence level of `ci_half`.
    pub level: f64,
    /// Smallest value.
    pub min: f64,
    /// Largest value.
    pub max: f64,
}

impl Summary {
    /// Summarizes a sample; `None` when it is empty.
    pub fn of(xs: &[f64], level: f64) -> Option<Summary> {
        let mean = mean(xs)?;
        Some(Summary {
            n: xs.len(),
            mean,
            sd: sample_sd(xs),
            ci_half: ci_half_width(xs, level),
            level,
            min: xs.iter().copied().fold(f64::INFINITY, f64::min),
            max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        })
    }

    /// Lower and upper ends of the confidence interval (the mean itself when
    /// it cannot be computed).
    pub fn ci(&self) -> (f64, f64) {
        let h = self.ci_half.unwrap_or(0.0);
        (self.mean - h, self.mean + h)
    }
}

/// Which statistic of a group of runs a number stands for: the mean, or an end of the
/// Student-t confidence interval of the mean (as LaRowe et al. report their runs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Statistic {
    /// The mean.
    #[default]
    Mean,
    /// The lower end of the confidence interval of the mean.
    CiLow,
    /// The upper end of the confidence interval of the mean.
    CiHigh,
}

impl Statistic {
    /// The statistic of `xs`, the interval at `level`; `None` without values, or for an
    /// interval with fewer than two.
    pub fn of(self, xs: &[f64], level: f64) -> Option<f64> {
        let m = mean(xs)?;
        match self {
            Statistic::Mean => Some(m),
            Statistic::CiLow => Some(m - ci_half_width(xs, level)?),
            Statistic::CiHigh => Some(m + ci_half_width(xs, level)?),
        }
    }

    /// A short name for tables (`mean`, `99% CI low`, `99% CI high`).
    pub fn describe(self, level: f64) -> String {
        let pct = crate::value::fmt_num(level * 100.0);
        match self {
            Statistic::Mean => "mean".to_string(),
            Statistic::CiLow => format!("{pct}% CI low"),
            Statistic::CiHigh => format!("{pct}% CI high"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_ends_are_the_mean_minus_and_plus_the_half_width() {
        let xs = [1.0, 2.0, 3.0, 4.0];
        let h = ci_half_width(&xs, 0.99).unwrap();
        assert_eq!(Statistic::Mean.of(&xs, 0.99), Some(2.5));
        assert_eq!(Statistic::CiLow.of(&xs, 0.99), Some(2.5 - h));
        assert_eq!(Statistic::CiHigh.of(&xs, 0.99), Some(2.5 + h));
        assert_eq!(Statistic::CiLow.of(&[1.0], 0.99), None);
        assert_eq!(Statistic::Mean.of(&[], 0.99), None);
        assert_eq!(Statistic::CiHigh.describe(0.99), "99% CI high");
    }

    fn close(a: f64, b: f64, tol: f64) -> bool {
        (a - b).abs() <= tol
    }

    #[test]
    fn student_t_quantiles_match_textbook_tables() {
        // (two-sided level, df, tabulated critical value)
        let table = [
            (0.99, 19.0, 2.861),
            (0.95, 9.0, 2.262),
            (0.95, 1.0, 12.706),
            (0.99, 1.0, 63.657),
            (0.90, 1.0, 6.314),
            (0.95, 4.0, 2.776),
            (0.99, 29.0, 2.756),
            (0.90, 10.0, 1.812),
            (0.95, 30.0, 2.042),
            (0.99, 4.0, 4.604),
            (0.95, 1000.0, 1.962),
        ];
        for (level, df, want) in table {
            let got = t_critical(level, df);
            assert!(
                close(got, want, 6e-4),
                "level {level} df {df}: {got} vs {want}"
            );
        }
    }

    #[test]
    fn t_cdf_is_symmetric_and_inverts_quantile() {
        for df in [1.0, 2.5, 7.0, 40.0] {
            assert!(close(t_cdf(0.0, df), 0.5, 1e-12));
            for p in [0.01, 0.2, 0.75, 0.999] {
                let t = t_quantile(p, df);
                assert!(close(t_cdf(t, df), p, 1e-10));
                assert!(close(t_quantile(1.0 - p, df), -t, 1e-8));
            }
        }
    }

    #[test]
    fn known_sample_mean_sd_and_ci() {
        let xs = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        let s = Summary::of(&xs, 0.95).unwrap();
        assert_eq!(s.n, 8);
        assert!(close(s.mean, 5.0, 1e-12));
        assert!(close(s.sd.unwrap(), (32.0f64 / 7.0).sqrt(), 1e-12));
        // t_{0.975,7} = 2.365; half-width = 2.365 * 2.138 / sqrt(8) = 1.788
        assert!(close(s.ci_half.unwrap(), 1.788, 1e-3));
        assert_eq!((s.min, s.max), (2.0, 9.0));
    }

    #[test]
    fn ci_half_width_for_twenty_runs_uses_t_2_861() {
        // 20 values with sample sd exactly 1: alternate ±a around 10.
        let a = (19.0f64 / 20.0).sqrt();
        let xs: Vec<f64> = (0..20)
            .map(|i| if i % 2 == 0 { 10.0 + a } else { 10.0 - a })
            .collect();
        let h = ci_half_width(&xs, 0.99).unwrap();
        assert!(close(h, 2.861 / 20f64.sqrt(), 2e-4), "{h}");
    }

    #[test]
    fn ratio_ci_of_exact_samples_is_zero_and_grows_with_their_spread() {
        assert_eq!(
            ratio_ci_half_width(&[8.0, 8.0], &[2.0, 2.0], 0.95),
            Some(0.0)
        );
        let tight = ratio_ci_half_width(&[7.9, 8.1], &[2.0, 2.0], 0.95).unwrap();
        let wide = ratio_ci_half_width(&[7.0, 9.0], &[2.0, 2.0], 0.95).unwrap();
        assert!(tight > 0.0 && wide > tight);
    }

    #[test]
    fn ratio_ci_is_the_delta_method_with_the_smaller_samples_t() {
        // num: mean 10 (n = 5); den: mean 2 (n = 4); ratio 5; the critical value is
        // t_{0.975,3} = 3.182, from the smaller sample.
        let num = [9.0, 11.0, 10.0, 10.5, 9.5];
        let sd_num = sample_sd(&num).unwrap();
        let den = [2.1, 1.9, 2.1, 1.9];
        let sd_den = sample_sd(&den).unwrap();
        let rel = (sd_num / 10.0).powi(2) / 5.0 + (sd_den / 2.0).powi(2) / 4.0;
        let h = ratio_ci_half_width(&num, &den, 0.95).unwrap();
        assert!(close(h, 3.182 * 5.0 * rel.sqrt(), 1e-3), "{h}");
    }

    #[test]
    fn ratio_ci_needs_two_values_on_each_side_and_nonzero_means() {
        assert_eq!(ratio_ci_half_width(&[1.0], &[1.0, 2.0], 0.95), None);
        assert_eq!(ratio_ci_half_width(&[1.0, 2.0], &[0.0, 0.0], 0.95), None);
        assert_eq!(ratio_ci_half_width(&[1.0, 2.0], &[1.0, 2.0], 1.0), None);
    }

    #[test]
    fn degenerate_samples_have_no_interval() {
        assert_eq!(mean(&[]), None);
        assert_eq!(ci_half_width(&[1.0], 0.99), None);
        let s = Summary::of(&[3.0], 0.99).unwrap();
        assert_eq!((s.sd, s.ci_half, s.ci()), (None, None, (3.0, 3.0)));
        assert!(t_quantile(1.5, 3.0).is_nan());
    }
}
