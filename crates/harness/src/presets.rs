//! Machine presets: data files with the papers' figures, compiled into the binary.

use crate::error::UserError;

/// Name of the machine a bare `numaplace run` uses.
pub const DEFAULT_MACHINE: &str = "butterfly-plus";

/// Every preset as (name, TOML text).
pub const PRESETS: &[(&str, &str)] = &[
    (
        "butterfly-plus",
        include_str!("../presets/butterfly-plus.toml"),
    ),
    (
        "butterfly-plus-sat",
        include_str!("../presets/butterfly-plus-sat.toml"),
    ),
    (
        "butterfly-plus-local",
        include_str!("../presets/butterfly-plus-local.toml"),
    ),
    ("gp1000", include_str!("../presets/gp1000.toml")),
    ("tc2000", include_str!("../presets/tc2000.toml")),
    ("origin2000", include_str!("../presets/origin2000.toml")),
    ("epyc-2s", include_str!("../presets/epyc-2s.toml")),
    ("tiered", include_str!("../presets/tiered.toml")),
    ("xeon-2s", include_str!("../presets/xeon-2s.toml")),
    ("cxl-expander", include_str!("../presets/cxl-expander.toml")),
    ("optane-hemem", include_str!("../presets/optane-hemem.toml")),
];

/// Preset names.
pub fn names() -> Vec<&'static str> {
    PRESETS.iter().map(|(n, _)| *n).collect()
}

/// The preset `name` as a TOML table.
pub fn preset_table(name: &str) -> Result<toml::Table, UserError> {
    let (_, text) = PRESETS.iter().find(|(n, _)| *n == name).ok_or_else(|| {
        UserError::new(format!(
            "unknown machine `{name}`; known machines: {}",
            names().join(", ")
        ))
    })?;
    let mut t: toml::Table = text
        .parse()
        .map_err(|e| UserError::new(format!("built-in preset `{name}` is malformed: {e}")))?;
    t.insert("preset".into(), toml::Value::String(name.to_string()));
    Ok(t)
}
