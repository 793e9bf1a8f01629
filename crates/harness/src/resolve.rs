//! Resolving a run configuration: preset → config file → command-line choices → `--set`
//! overrides → typed, validated [`RunConfig`].

use crate::presets;
use numaplace_core::RunConfig;
use std::fmt;

/// An error in what the user gave (a name, a file, a value): reported with exit code 2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserError(pub String);

impl UserError {
    /// A new error with `msg`.
    pub fn new(msg: impl Into<String>) -> UserError {
        UserError(msg.into())
    }
}

impl fmt::Display for UserError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UserError {}

/// What the command line adds to a configuration file.
#[derive(Clone, Debug, Default)]
pub struct Overrides {
    /// `--machine`: a preset name.
    pub machine: Option<String>,
    /// `--workload`: a workload kind.
    pub workload: Option<String>,
    /// `--policy`: a policy kind.
    pub policy: Option<String>,
    /// `--seed`.
    pub seed: Option<u64>,
    /// `--set path.to.field=value`, in order.
    pub sets: Vec<String>,
}

/// Default workload of a bare `numaplace run`.
pub const DEFAULT_WORKLOAD: &str = "jacobi";
/// Default policy of a bare `numaplace run`.
pub const DEFAULT_POLICY: &str = "static";

/// Parses a configuration file's text; errors name the file and the line.
pub fn parse_file(origin: &str, text: &str) -> Result<toml::Table, UserError> {
    text.parse::<toml::Table>().map_err(|e| {
        let loc = e
            .span()
            .map(|s| {
                let line = text[..s.start.min(text.len())].matches('\n').count() + 1;
                format!(":{line}")
            })
            .unwrap_or_default();
        UserError::new(format!("{origin}{loc}: malformed TOML: {}", e.message()))
    })
}

/// Resolves a configuration from an optional file (origin name and parsed table) and the
/// command-line overrides.
pub fn resolve(file: Option<(&str, toml::Table)>, ov: &Overrides) -> Result<RunConfig, UserError> {
    let (origin, mut doc) = match file {
        Some((o, t)) => (o.to_string(), t),
        None => ("command line".to_string(), toml::Table::new()),
    };
    // Machine: the preset's data under the file's overrides.
    let file_machine = match doc.remove("machine") {
        None => toml::Table::new(),
        Some(toml::Value::String(name)) => {
            let mut t = toml::Table::new();
            t.insert("preset".into(), toml::Value::String(name));
            t
        }
        Some(toml::Value::Table(t)) => t,
        Some(_) => {
            return Err(UserError::new(format!(
                "{origin}: `machine` must be a preset name or a table"
            )))
        }
    };
    let preset_name = match (&ov.machine, file_machine.get("preset")) {
        (Some(m), _) => m.clone(),
        (None, Some(toml::Value::String(p))) => p.clone(),
        (None, Some(_)) => {
            return Err(UserError::new(format!(
                "{origin}: machine.preset must be a string"
            )))
        }
        (None, None) => presets::DEFAULT_MACHINE.to_string(),
    };
    let mut machine = presets::preset_table(&preset_name)?;
    let mut file_machine = file_machine;
    file_machine.remove("preset");
    merge(&mut machine, file_machine);
    doc.insert("machine".into(), toml::Value::Table(machine));

    for (key, chosen, default) in [
        ("workload", &ov.workload, DEFAULT_WORKLOAD),
        ("policy", &ov.policy, DEFAULT_POLICY),
    ] {
        let mut table = match doc.remove(key) {
            None => toml::Table::new(),
            Some(toml::Value::Table(t)) => t,
            Some(toml::Value::String(kind)) => {
                let mut t = toml::Table::new();
                t.insert("kind".into(), toml::Value::String(kind));
                t
            }
            Some(_) => {
                return Err(UserError::new(format!(
                    "{origin}: `{key}` must be a table or a kind name"
                )))
            }
        };
        let file_kind = table
            .get("kind")
            .and_then(|k| k.as_str())
            .map(str::to_string);
        let kind = match (chosen, file_kind) {
            (Some(c), Some(f)) if *c != f => {
                // Another kind's parameters do not apply to the one chosen on the command line.
                table.clear();
                c.clone()
            }
            (Some(c), _) => c.clone(),
            (None, Some(f)) => f,
            (None, None) => default.to_string(),
        };
        table.insert("kind".into(), toml::Value::String(kind));
        doc.insert(key.into(), toml::Value::Table(table));
    }
    if let Some(seed) = ov.seed {
        doc.insert("seed".into(), toml::Value::Integer(seed as i64));
    }
    for s in &ov.sets {
        apply_set(&mut doc, s)?;
    }
    let mut cfg: RunConfig =
        serde_path_to_error::deserialize(toml::Value::Table(doc)).map_err(|e| {
            let path = e.path().to_string();
            let inner = e.into_inner();
            let msg = inner.message().to_string();
            if path == "." || path.is_empty() {
                UserError::new(format!("{origin}: invalid configuration: {msg}"))
            } else {
                UserError::new(format!(
                    "{origin}: invalid configuration at `{path}`: {msg}"
                ))
            }
        })?;
    crate::inputs::load_inputs(&mut cfg).map_err(|e| UserError::new(format!("{origin}: {e}")))?;
    // Validate everything the core checks before running (names the field).
    cfg.engine()
        .map_err(|e| UserError::new(format!("{origin}: invalid configuration: {e}")))?;
    Ok(cfg)
}

/// Deep-merges `over` into `base`: tables merge, everything else replaces.
pub fn merge(base: &mut toml::Table, over: toml::Table) {
    for (k, v) in over {
        match (base.get_mut(&k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => merge(b, o),
            (_, v) => {
                base.insert(k, v);
            }
        }
    }
}

/// Applies one `path.to.field=value` override. The value is read as a TOML value (number,
/// boolean, string in quotes, array, inline table); anything that is not one is taken as a
/// bare string.
pub fn apply_set(doc: &mut toml::Table, s: &str) -> Result<(), UserError> {
    let (path, raw) = s
        .split_once('=')
        .ok_or_else(|| UserError::new(format!("--set `{s}`: expected path.to.field=value")))?;
    let path = path.trim();
    if path.is_empty() || path.split('.').any(|p| p.trim().is_empty()) {
        return Err(UserError::new(format!(
            "--set `{s}`: `{path}` is not a field path"
        )));
    }
    let raw = raw.trim();
    let value = format!("v = {raw}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(raw.to_string()));
    let parts: Vec<&str> = path.split('.').map(str::trim).collect();
    let mut table = doc;
    for (i, p) in parts.iter().enumerate() {
        if i + 1 == parts.len() {
            table.insert(p.to_string(), value);
            return Ok(());
        }
        let entry = table
            .entry(p.to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        table = match entry {
            toml::Value::Table(t) => t,
            _ => {
                return Err(UserError::new(format!(
                    "--set `{s}`: `{}` is a value, not a table",
                    parts[..=i].join(".")
                )))
            }
        };
    }
    Ok(())
}
