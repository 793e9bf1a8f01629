//! Resolving a run configuration: preset → config file → command-line choices → `--set`
//! overrides → typed, validated [`RunConfig`].

// Public here too: they were defined in this module before `error.rs`, and
// `resolve::UserError` stays a valid path.
pub use crate::error::{UserError, ValueSource};
use crate::presets;
use numaplace_core::RunConfig;

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
pub const DEFAULT_WORKLOAD: &str =
    <numaplace_core::component::Workloads as numaplace_core::registry::Family>::DEFAULT_KIND;
/// Default policy of a bare `numaplace run`.
pub const DEFAULT_POLICY: &str =
    <numaplace_core::component::Policies as numaplace_core::registry::Family>::DEFAULT_KIND;

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
    resolve_inner(file, None, ov)
}

/// Resolves a configuration file's text (its errors name the line of the field) with the
/// command-line overrides.
pub fn resolve_text(origin: &str, text: &str, ov: &Overrides) -> Result<RunConfig, UserError> {
    let table = parse_file(origin, text)?;
    resolve_inner(Some((origin, table)), Some(text), ov)
}

fn resolve_inner(
    file: Option<(&str, toml::Table)>,
    text: Option<&str>,
    ov: &Overrides,
) -> Result<RunConfig, UserError> {
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

    let programs = doc.contains_key("program");
    if programs {
        programs_table(&mut doc, &origin, ov)?;
    }
    for (key, chosen, default) in [
        ("workload", &ov.workload, DEFAULT_WORKLOAD),
        ("policy", &ov.policy, DEFAULT_POLICY),
    ] {
        if key == "workload" && programs {
            continue;
        }
        let table = take_component(&mut doc, key, &origin)?;
        doc.insert(
            key.into(),
            toml::Value::Table(with_kind(table, chosen, default)),
        );
    }
    if let Some(seed) = ov.seed {
        // TOML integers stop at 2^63 - 1; larger seeds travel as strings.
        let v = i64::try_from(seed)
            .map(toml::Value::Integer)
            .unwrap_or_else(|_| toml::Value::String(seed.to_string()));
        doc.insert("seed".into(), v);
    }
    for s in &ov.sets {
        apply_set(&mut doc, s)?;
    }
    let mut cfg = typed(doc, &origin, text, &ov.sets)?;
    crate::inputs::load_inputs(&mut cfg).map_err(|e| UserError::new(format!("{origin}: {e}")))?;
    // Validate everything the core checks before running, without allocating anything
    // the configuration sizes (names the field, and its line when it is in the file).
    cfg.estimate()
        .map_err(|e| field_error(&origin, text, &ov.sets, &e.field, &e.message))?;
    Ok(cfg)
}

/// Removes the component section `key` (a table, or a kind name) from `doc`.
fn take_component(
    doc: &mut toml::Table,
    key: &str,
    origin: &str,
) -> Result<toml::Table, UserError> {
    match doc.remove(key) {
        None => Ok(toml::Table::new()),
        Some(toml::Value::Table(t)) => Ok(t),
        Some(toml::Value::String(kind)) => {
            let mut t = toml::Table::new();
            t.insert("kind".into(), toml::Value::String(kind));
            Ok(t)
        }
        Some(_) => Err(UserError::new(format!(
            "{origin}: `{key}` must be a table or a kind name"
        ))),
    }
}

/// A component's table with its kind settled: the command line's choice (whose kind's
/// parameters then replace another kind's), the file's, or the default.
fn with_kind(mut table: toml::Table, chosen: &Option<String>, default: &str) -> toml::Table {
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
    table
}

/// Checks a multiprogrammed run's `[[program]]` list and settles each program's
/// workload kind (a table or a kind name; no default: a program names what it runs).
fn programs_table(doc: &mut toml::Table, origin: &str, ov: &Overrides) -> Result<(), UserError> {
    if doc.contains_key("workload") {
        return Err(UserError::new(format!(
            "{origin}: a run has either one `[workload]` or a list of `[[program]]` tables, \
             not both"
        )));
    }
    if ov.workload.is_some() {
        return Err(UserError::new(format!(
            "--workload chooses the workload of a one-program run; {origin} lists \
             `[[program]]` tables: set `program[i].workload.kind` instead"
        )));
    }
    let Some(toml::Value::Array(list)) = doc.get_mut("program") else {
        return Err(UserError::new(format!(
            "{origin}: `program` must be a list of tables (`[[program]]`)"
        )));
    };
    if list.is_empty() {
        return Err(UserError::new(format!(
            "{origin}: `program` lists no program; give at least one `[[program]]` or use \
             `[workload]`"
        )));
    }
    for (i, p) in list.iter_mut().enumerate() {
        let toml::Value::Table(t) = p else {
            return Err(UserError::new(format!(
                "{origin}: program[{i}] must be a table"
            )));
        };
        if !t.contains_key("workload") {
            return Err(UserError::new(format!(
                "{origin}: program[{i}].workload: missing; every program names its workload \
                 (`workload = {{ kind = \"...\" }}`)"
            )));
        }
        let w = take_component(t, "workload", &format!("{origin}: program[{i}]"))?;
        t.insert(
            "workload".into(),
            toml::Value::Table(with_kind(w, &None, DEFAULT_WORKLOAD)),
        );
    }
    Ok(())
}

/// Turns the merged document into a typed configuration. The sections chosen by `kind`
/// (workload, policy, scheduler) are read into their own configuration types first, so
/// an error names the field inside them rather than the section.
fn typed(
    doc: toml::Table,
    origin: &str,
    text: Option<&str>,
    sets: &[String],
) -> Result<RunConfig, UserError> {
    use numaplace_core::component::{SchedulerConfig, WorkloadConfig};
    use numaplace_core::PolicyConfig;
    type Parse = fn(
        &str,
        toml::Value,
        &mut serde_path_to_error::Track,
    ) -> Option<Result<(), toml::de::Error>>;
    let sections: [(&str, Vec<&str>, Parse); 3] = [
        ("workload", WorkloadConfig::kinds(), |k, v, t| {
            WorkloadConfig::deserialize_kind(k, serde_path_to_error::Deserializer::new(v, t))
                .map(|r| r.map(drop))
        }),
        ("policy", PolicyConfig::kinds(), |k, v, t| {
            PolicyConfig::deserialize_kind(k, serde_path_to_error::Deserializer::new(v, t))
                .map(|r| r.map(drop))
        }),
        ("scheduler", SchedulerConfig::kinds(), |k, v, t| {
            SchedulerConfig::deserialize_kind(k, serde_path_to_error::Deserializer::new(v, t))
                .map(|r| r.map(drop))
        }),
    ];
    // Each program's workload is a section of its own too.
    let mut located: Vec<(String, Vec<&str>, Parse, &toml::Table)> = Vec::new();
    for (key, kinds, parse) in &sections {
        if let Some(toml::Value::Table(t)) = doc.get(*key) {
            located.push((key.to_string(), kinds.clone(), *parse, t));
        }
    }
    if let Some(toml::Value::Array(list)) = doc.get("program") {
        let (_, kinds, parse) = &sections[0];
        for (i, p) in list.iter().enumerate() {
            if let Some(toml::Value::Table(t)) = p.get("workload") {
                located.push((format!("program[{i}].workload"), kinds.clone(), *parse, t));
            }
        }
    }
    for (key, kinds, parse, t) in located {
        let key = key.as_str();
        let mut rest = t.clone();
        let kind = match rest.remove("kind") {
            Some(toml::Value::String(k)) => k,
            Some(_) => {
                return Err(field_error(
                    origin,
                    text,
                    sets,
                    &format!("{key}.kind"),
                    "must be a string",
                ))
            }
            None => continue,
        };
        let mut track = serde_path_to_error::Track::new();
        match parse(&kind, toml::Value::Table(rest), &mut track) {
            None => {
                return Err(field_error(
                    origin,
                    text,
                    sets,
                    &format!("{key}.kind"),
                    &format!(
                        "unknown {} `{kind}`; known: {}",
                        key.rsplit('.').next().unwrap_or(key),
                        kinds.join(", ")
                    ),
                ))
            }
            Some(Err(e)) => {
                let (path, msg) = error_path(&track.path().to_string(), e.message());
                let path = if path.is_empty() {
                    key.to_string()
                } else {
                    format!("{key}.{path}")
                };
                return Err(field_error(origin, text, sets, &path, &msg));
            }
            Some(Ok(())) => {}
        }
    }
    serde_path_to_error::deserialize(toml::Value::Table(doc)).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let (path, msg) = error_path(&path, inner.message());
        if path.is_empty() {
            UserError::new(format!("{origin}: invalid configuration: {msg}"))
        } else {
            field_error(origin, text, sets, &path, &msg)
        }
    })
}

/// The full dotted path of a deserialization error and its message: serde reports an
/// unknown field at the table that holds it, so the field's name is appended.
fn error_path(path: &str, msg: &str) -> (String, String) {
    let path = if path == "." { "" } else { path };
    if let Some(rest) = msg.strip_prefix("unknown field `") {
        if let Some(end) = rest.find('`') {
            let field = &rest[..end];
            let full = if path.is_empty() {
                field.to_string()
            } else if path == field || path.ends_with(&format!(".{field}")) {
                path.to_string()
            } else {
                format!("{path}.{field}")
            };
            return (full, format!("unknown field{}", &rest[end + 1..]));
        }
    }
    (path.to_string(), msg.to_string())
}

/// An error about the field at dotted `path`: `origin:line: path: message` when the field
/// is written in the file, else naming where the value came from.
pub fn field_error(
    origin: &str,
    text: Option<&str>,
    sets: &[String],
    path: &str,
    msg: &str,
) -> UserError {
    let from_set = sets.iter().any(|s| {
        s.split_once('=').is_some_and(|(p, _)| {
            let p = p.trim();
            path == p || path.starts_with(&format!("{p}.")) || p.starts_with(&format!("{path}."))
        })
    });
    let given = if from_set {
        ValueSource::Set
    } else {
        ValueSource::File {
            origin: origin.to_string(),
            line: text.and_then(|t| line_of(t, path)),
        }
    };
    UserError::Field {
        given,
        field: path.to_string(),
        message: msg.to_string(),
    }
}

/// The line of `text` (a TOML document) where the dotted `path` is written: the deepest
/// key of the path present in the document (array indices are skipped).
pub fn line_of(text: &str, path: &str) -> Option<usize> {
    let doc = toml_edit::ImDocument::parse(text).ok()?;
    let mut table: &dyn toml_edit::TableLike = doc.as_table();
    let mut span = None;
    for part in path.split('.') {
        let (key, index) = split_index(part);
        let Some((k, item)) = table.get_key_value(key) else {
            break;
        };
        span = k.span().or_else(|| item.span()).or(span);
        // `name[i]` steps into the i-th table of a list of tables.
        let item_table: Option<&dyn toml_edit::TableLike> = match index {
            None => item.as_table_like(),
            Some(i) => match item {
                toml_edit::Item::ArrayOfTables(a) => a.get(i).map(|t| {
                    let t: &dyn toml_edit::TableLike = t;
                    t
                }),
                _ => item
                    .as_array()
                    .and_then(|a| a.get(i))
                    .and_then(|v| v.as_inline_table())
                    .map(|t| {
                        let t: &dyn toml_edit::TableLike = t;
                        t
                    }),
            },
        };
        if index.is_some() {
            if let Some(t) = item_table {
                // The element's first key marks where it is written.
                if let Some((k, _)) = t.iter().next().and_then(|(k, _)| t.get_key_value(k)) {
                    span = k.span().or(span);
                }
            }
        }
        match item_table {
            Some(t) => table = t,
            None => break,
        }
    }
    let start = span?.start;
    Some(text[..start.min(text.len())].matches('\n').count() + 1)
}

/// A path segment `name[i]` as its name and index; `name` alone has none.
fn split_index(part: &str) -> (&str, Option<usize>) {
    match part.split_once('[') {
        Some((name, rest)) => (name, rest.strip_suffix(']').and_then(|i| i.parse().ok())),
        None => (part, None),
    }
}

/// The machine of `--machine` and `--set`, with an error naming the field it is about
/// (serde reports an unknown field at the table that holds it).
pub fn machine_config(table: toml::Table) -> Result<numaplace_core::MachineConfig, UserError> {
    serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let at = if path == "." || path.is_empty() {
            String::new()
        } else {
            format!("machine.{path}: ")
        };
        UserError::new(format!("invalid machine: {at}{}", inner.message()))
    })
}

/// The preset `name` with `sets` (`path.to.field=value`, paths inside the machine)
/// applied, read and checked as `machine show NAME --set ...` does.
pub fn machine_preset(
    name: &str,
    sets: &[String],
) -> Result<numaplace_core::MachineConfig, UserError> {
    let mut table = presets::preset_table(name)?;
    for s in sets {
        apply_set(&mut table, s)?;
    }
    let cfg = machine_config(table)?;
    numaplace_core::Machine::new(cfg.clone())
        .map_err(|e| UserError::new(format!("machine {name}: {e}")))?;
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
    // `program[1].start_ns` and `program.1.start_ns` both name an element of a list.
    let parts = numaplace_study::path_segments(path);
    let mut here = Place::Table(doc);
    for (i, p) in parts.iter().enumerate() {
        let last = i + 1 == parts.len();
        let slot = match here {
            Place::Table(table) => {
                if last {
                    table.insert(p.to_string(), value);
                    return Ok(());
                }
                table
                    .entry(p.to_string())
                    .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            }
            Place::Array(list) => {
                let len = list.len();
                let Some(slot) = p.parse::<usize>().ok().and_then(|k| list.get_mut(k)) else {
                    return Err(UserError::new(format!(
                        "--set `{s}`: `{}` has {len} elements; `{p}` is not one of them",
                        parts[..i].join(".")
                    )));
                };
                if last {
                    *slot = value;
                    return Ok(());
                }
                slot
            }
        };
        here = match slot {
            toml::Value::Table(t) => Place::Table(t),
            toml::Value::Array(a) => Place::Array(a),
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

/// Where a `--set` path has reached: a table or a list.
enum Place<'a> {
    Table(&'a mut toml::Table),
    Array(&'a mut Vec<toml::Value>),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bad_field_in_a_file_is_a_typed_error_with_its_path_and_line() {
        let text = "[workload]\nkind = \"jacobi\"\nn = 0\n";
        let e = resolve_text("x.toml", text, &Overrides::default()).unwrap_err();
        assert_eq!(e.field(), Some("workload.n"), "{e}");
        match &e {
            UserError::Field {
                given: ValueSource::File { origin, line },
                ..
            } => {
                assert_eq!(origin, "x.toml");
                assert_eq!(*line, Some(3));
            }
            other => panic!("not a field error from the file: {other:?}"),
        }
        assert!(e.to_string().starts_with("x.toml:3: workload.n: "), "{e}");
    }

    #[test]
    fn a_bad_set_value_names_the_option_and_the_field() {
        let ov = Overrides {
            sets: vec!["workload.n=0".into()],
            ..Default::default()
        };
        let e = resolve(None, &ov).unwrap_err();
        assert!(matches!(
            &e,
            UserError::Field {
                given: ValueSource::Set,
                ..
            }
        ));
        assert!(e.to_string().starts_with("--set workload.n: "), "{e}");
    }

    fn larowe(cfg: &RunConfig) -> numaplace_core::policy::dunx::Setting {
        cfg.policy
            .get::<numaplace_core::policy::LaroweConfig>()
            .expect("larowe")
            .setting()
    }

    #[test]
    fn scan_delay_infinity_is_read_from_a_file_and_from_set_and_integers_still_are() {
        use numaplace_core::NsOrInf;
        for text in [
            "[policy]\nkind = \"larowe\"\nscan_delay_ns = \"inf\"\n",
            "[policy]\nkind = \"larowe\"\nscan_delay_ns = inf\n",
        ] {
            let cfg = resolve_text("x.toml", text, &Overrides::default()).unwrap();
            assert_eq!(larowe(&cfg).scan_delay, NsOrInf::Inf, "{text}");
        }
        for set in ["inf", "infinity", "\"inf\"", "2000000000"] {
            let ov = Overrides {
                policy: Some("larowe".into()),
                sets: vec![format!("policy.scan_delay_ns={set}")],
                ..Default::default()
            };
            let want = if set == "2000000000" {
                NsOrInf::Ns(2_000_000_000)
            } else {
                NsOrInf::Inf
            };
            assert_eq!(
                larowe(&resolve(None, &ov).unwrap()).scan_delay,
                want,
                "{set}"
            );
        }
    }

    #[test]
    fn a_policy_preset_is_set_like_a_machine_preset_and_bad_values_name_their_field() {
        let text = "[policy]\nkind = \"larowe\"\npreset = \"gauss\"\nsample_passes = 3\n";
        let cfg = resolve_text("x.toml", text, &Overrides::default()).unwrap();
        let s = larowe(&cfg);
        assert_eq!(s.freeze_window, numaplace_core::NsOrInf::Ns(125_000_000));
        assert_eq!(s.defrost_trigger, 4);
        assert_eq!(s.sample_passes, 3);
        for (text, field, line) in [
            (
                "[policy]\nkind = \"larowe\"\npreset = \"gauss-gp1000\"\n",
                "policy.preset",
                3,
            ),
            (
                "[policy]\nkind = \"larowe\"\nscan_delay_ns = \"never\"\n",
                "policy.scan_delay_ns",
                3,
            ),
            (
                "[policy]\nkind = \"larowe\"\nscan_delay_ns = -1\n",
                "policy.scan_delay_ns",
                3,
            ),
            (
                "[policy]\nkind = \"larowe\"\nscan_delay_ns = 10\n",
                "policy.scan_delay_ns",
                3,
            ),
            (
                "[policy]\nkind = \"larowe\"\n\nrecent_mod = 70000\n",
                "policy.recent_mod",
                4,
            ),
            (
                "[policy]\nkind = \"dunx\"\ntrigger_method = -70000\n",
                "policy.trigger_method",
                3,
            ),
            (
                "[policy]\nkind = \"dunx\"\nfreeze_window_ns = -3\n",
                "policy.freeze_window_ns",
                3,
            ),
        ] {
            let e = resolve_text("x.toml", text, &Overrides::default()).unwrap_err();
            assert_eq!(e.field(), Some(field), "{text}: {e}");
            assert!(
                e.to_string()
                    .starts_with(&format!("x.toml:{line}: {field}: ")),
                "{e}"
            );
        }
        let ov = Overrides {
            policy: Some("larowe".into()),
            sets: vec!["policy.sample_passes=-1".into()],
            ..Default::default()
        };
        let e = resolve(None, &ov).unwrap_err();
        assert!(
            e.to_string().starts_with("--set policy.sample_passes: "),
            "{e}"
        );
    }

    #[test]
    fn a_run_over_the_memory_limit_is_a_limit_error_naming_the_driving_field() {
        let ov = Overrides {
            sets: vec!["workload.n=512".into(), "report.per_page=false".into()],
            ..Default::default()
        };
        let cfg = resolve(None, &ov).unwrap();
        let limits = crate::Limits {
            max_bytes: 1000,
            bytes_source: "a test".into(),
            max_ops: u64::MAX,
        };
        let e = crate::admit(&cfg, &limits).unwrap_err();
        assert!(matches!(e, UserError::Limit { .. }), "{e:?}");
        assert_eq!(e.field(), Some("workload.n"));
    }
}
