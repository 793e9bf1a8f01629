//! A spec's run points: the axes, trials and base in effect in each mode, counted and
//! generated from their index.

use super::{Axis, QuickSpec, Spec, SpecError};
use crate::value::set_dotted;

/// One run of a sweep: an axis combination and a trial.
#[derive(Debug, Clone, PartialEq)]
pub struct RunPoint {
    /// Position in the full expansion (0-based, stable for a given spec).
    pub index: usize,
    /// Stable identifier, `r` followed by the zero-padded index (`r000017`).
    pub id: String,
    /// The axis values of this run, in axis order (dotted path, value).
    pub settings: Vec<(String, toml::Value)>,
    /// Trial number within the combination (0-based).
    pub trial: u64,
    /// Random seed of this run (`seed_base + trial`).
    pub seed: u64,
    /// Full run configuration: base with quick overrides and settings
    /// applied, and top-level `seed` set.
    pub config: toml::Table,
}

/// Axis values effective in the given mode.
pub fn effective_axes(spec: &Spec, quick: bool) -> Vec<Axis> {
    let mut axes = narrowed_axes(spec, quick);
    if let (Some(q), true) = (&spec.quick, quick) {
        for a in axes.iter_mut() {
            let Some(by_label) = q.cases.get(&a.field) else {
                continue;
            };
            for (label, value) in a.labels.iter().zip(a.values.iter_mut()) {
                if let (Some(extra), toml::Value::Table(t)) = (by_label.get(label), value) {
                    t.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
                }
            }
        }
    }
    axes
}

/// Axis values in the given mode, quick axes narrowed or replaced.
fn narrowed_axes(spec: &Spec, quick: bool) -> Vec<Axis> {
    spec.axes
        .iter()
        .map(|a| {
            let values = match (&spec.quick, quick) {
                (Some(q), true) => q.axes.get(&a.field).cloned(),
                _ => None,
            };
            match values {
                Some(picked) if !a.labels.is_empty() => {
                    let (values, labels) = picked
                        .iter()
                        .filter_map(|p| {
                            let i = a
                                .labels
                                .iter()
                                .position(|l| Some(l.as_str()) == p.as_str())?;
                            Some((a.values[i].clone(), a.labels[i].clone()))
                        })
                        .unzip();
                    Axis {
                        field: a.field.clone(),
                        values,
                        labels,
                    }
                }
                values => Axis {
                    field: a.field.clone(),
                    values: values.unwrap_or_else(|| a.values.clone()),
                    labels: a.labels.clone(),
                },
            }
        })
        .collect()
}

/// Trials effective in the given mode.
pub fn effective_trials(spec: &Spec, quick: bool) -> u64 {
    match (&spec.quick, quick) {
        (
            Some(QuickSpec {
                trials: Some(t), ..
            }),
            true,
        ) => *t,
        _ => spec.trials,
    }
}

/// Base configuration effective in the given mode (quick overrides applied).
pub fn effective_base(spec: &Spec, quick: bool) -> toml::Table {
    let mut base = spec.base.clone();
    if let (Some(q), true) = (&spec.quick, quick) {
        for (k, v) in &q.base {
            set_dotted(&mut base, k, v.clone());
        }
    }
    base
}

/// Number of run points of the expansion, or `None` on overflow. Counted from
/// the axes' lengths with checked arithmetic: nothing is expanded.
pub fn point_count(spec: &Spec, quick: bool) -> Option<usize> {
    let mut n = usize::try_from(effective_trials(spec, quick)).ok()?;
    for len in effective_axis_lens(spec, quick) {
        n = n.checked_mul(len)?;
    }
    Some(n)
}

/// The number of values of each effective axis, without cloning them.
fn effective_axis_lens(spec: &Spec, quick: bool) -> Vec<usize> {
    spec.axes
        .iter()
        .map(|a| match (&spec.quick, quick) {
            (Some(q), true) => q.axes.get(&a.field).map_or(a.values.len(), Vec::len),
            _ => a.values.len(),
        })
        .collect()
}

/// How the number of runs comes about, e.g. `2 values of machine.nodes × 3 values of
/// workload.n × 5 trials`, for messages about the size of a sweep.
pub fn count_breakdown(spec: &Spec, quick: bool) -> String {
    let mut parts: Vec<String> = spec
        .axes
        .iter()
        .zip(effective_axis_lens(spec, quick))
        .map(|(a, n)| format!("{n} value{} of {}", plural(n), a.field))
        .collect();
    let t = effective_trials(spec, quick);
    parts.push(format!("{t} trial{}", plural(t as usize)));
    parts.join(" × ")
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// A spec's run points in one mode, generated on demand from their index: a
/// sweep never needs to hold every point (each carries a whole configuration).
#[derive(Debug, Clone)]
pub struct Expansion {
    axes: Vec<Axis>,
    trials: u64,
    seed_base: u64,
    base: toml::Table,
    len: usize,
}

impl Expansion {
    /// The expansion of `spec` in the given mode. Fails only when the number of
    /// runs overflows (which [`parse_spec`] already rejects).
    pub fn new(spec: &Spec, quick: bool) -> Result<Expansion, SpecError> {
        let Some(len) = point_count(spec, quick) else {
            return Err(SpecError::Invalid {
                origin: spec.origin.clone(),
                field: "axis".into(),
                message: format!(
                    "the number of runs overflows ({})",
                    count_breakdown(spec, quick)
                ),
            });
        };
        Ok(Expansion {
            axes: effective_axes(spec, quick),
            trials: effective_trials(spec, quick).max(1),
            seed_base: spec.seed_base,
            base: effective_base(spec, quick),
            len,
        })
    }

    /// Number of run points.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are no run points.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Trials per axis combination (consecutive indices, trial innermost).
    pub fn trials(&self) -> u64 {
        self.trials
    }

    /// The run point at `index` (`None` past the end): the cartesian product of
    /// the axes (first axis outermost) with trials innermost.
    pub fn point(&self, index: usize) -> Option<RunPoint> {
        if index >= self.len {
            return None;
        }
        // Mixed-radix decode: trials is the fastest digit, then the last axis.
        let trials = self.trials as usize;
        let trial = (index % trials) as u64;
        let mut rest = index / trials;
        let mut choice = vec![0usize; self.axes.len()];
        for (k, a) in self.axes.iter().enumerate().rev() {
            choice[k] = rest % a.values.len();
            rest /= a.values.len();
        }
        let mut config = self.base.clone();
        let mut settings: Vec<(String, toml::Value)> = Vec::with_capacity(self.axes.len());
        for (a, &c) in self.axes.iter().zip(&choice) {
            if a.labels.is_empty() {
                set_dotted(&mut config, &a.field, a.values[c].clone());
                settings.push((a.field.clone(), a.values[c].clone()));
            } else {
                if let toml::Value::Table(t) = &a.values[c] {
                    for (k, v) in t {
                        set_dotted(&mut config, k, v.clone());
                    }
                }
                settings.push((a.field.clone(), toml::Value::String(a.labels[c].clone())));
            }
        }
        // `parse_spec` checked that every seed fits a TOML integer.
        let seed = self.seed_base.saturating_add(trial);
        config.insert(
            "seed".into(),
            toml::Value::Integer(i64::try_from(seed).unwrap_or(i64::MAX)),
        );
        Some(RunPoint {
            index,
            id: point_id(index),
            settings,
            trial,
            seed,
            config,
        })
    }

    /// Every run point in index order, generated one at a time.
    pub fn points(&self) -> impl Iterator<Item = RunPoint> + '_ {
        (0..self.len).filter_map(|i| self.point(i))
    }
}

/// Expands a spec into its run points: the cartesian product of the axes
/// (first axis outermost) with trials innermost, numbered from 0. Holds every
/// point at once; sweeps use [`Expansion`] instead.
pub fn expand(spec: &Spec, quick: bool) -> Vec<RunPoint> {
    match Expansion::new(spec, quick) {
        Ok(e) => e.points().collect(),
        Err(_) => Vec::new(),
    }
}

/// The identifier of the run at `index` (`r000017`).
pub fn point_id(index: usize) -> String {
    format!("r{index:06}")
}
