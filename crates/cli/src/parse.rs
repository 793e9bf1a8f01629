//! Value parsers that the options of more than one command use.

/// A count such as `5e9` or `20000`, at least 1.
pub fn parse_count(s: &str) -> Result<u64, String> {
    let v: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("`{s}`: expected a count such as 5e9"))?;
    if !v.is_finite() || v < 1.0 || v > u64::MAX as f64 {
        return Err(format!("`{s}`: expected a count of at least 1"));
    }
    Ok(v as u64)
}
