//! Small helpers over TOML and JSON values shared by every module: dotted
//! paths, conversions, equality that treats `2` and `2.0` alike, and labels.

use serde_json::Value as Json;

/// Sets `value` at the dotted `path` (e.g. `"machine.costs.remote_read_ns"`)
/// inside `table`, creating intermediate tables as needed. A numeric segment
/// (`"program.1.start_ns"`, also written `"program[1].start_ns"`) steps into an
/// existing list's element.
///
/// An intermediate key that already holds a non-table value (or a list without
/// that element) is replaced by a table: the spec validator reports such
/// conflicts before any run is expanded, so at run time this never silently
/// discards configuration. Returns `true` when no such replacement was needed.
pub fn set_dotted(table: &mut toml::Table, path: &str, value: toml::Value) -> bool {
    let parts = path_segments(path);
    let mut clean = true;
    let (last, steps) = match parts.split_last() {
        Some(x) => x,
        None => return clean,
    };
    let mut current = table;
    let mut i = 0;
    while i < steps.len() {
        let entry = current
            .entry(steps[i].to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        // A list's element, when the next segment numbers one that exists.
        let index = steps
            .get(i + 1)
            .and_then(|n| n.parse::<usize>().ok())
            .filter(|&k| matches!(&*entry, toml::Value::Array(a) if a.get(k).is_some_and(|e| e.is_table())));
        let next = match (entry, index) {
            (toml::Value::Array(a), Some(k)) => {
                i += 1;
                &mut a[k]
            }
            (e, _) => e,
        };
        if !next.is_table() {
            clean = false;
            *next = toml::Value::Table(toml::Table::new());
        }
        current = match next {
            toml::Value::Table(t) => t,
            // Just made sure it is a table above.
            _ => return false,
        };
        i += 1;
    }
    current.insert(last.to_string(), value);
    clean
}

/// The segments of a dotted path, a list index written `name[i]` made a segment of
/// its own: `program[1].start_ns` and `program.1.start_ns` both give `program`, `1`,
/// `start_ns`. Segments are trimmed.
pub fn path_segments(path: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    for p in path.split('.').map(str::trim) {
        match p.split_once('[') {
            Some((name, rest)) => {
                parts.push(name.trim());
                parts.push(rest.strip_suffix(']').unwrap_or(rest).trim());
            }
            None => parts.push(p),
        }
    }
    parts
}

/// Reads the value at the dotted `path` inside a JSON value. Object keys are
/// matched literally; a numeric segment indexes an array (`"threads.0.refs"`).
/// A key that itself contains dots (e.g. a settings map keyed by dotted
/// paths) is found too, because the full remaining path is tried first.
pub fn get_dotted<'a>(value: &'a Json, path: &str) -> Option<&'a Json> {
    if path.is_empty() {
        return Some(value);
    }
    if let Json::Object(map) = value {
        if let Some(v) = map.get(path) {
            return Some(v);
        }
    }
    let (head, rest) = match path.split_once('.') {
        Some((h, r)) => (h, Some(r)),
        None => (path, None),
    };
    let next = match value {
        Json::Object(map) => map.get(head)?,
        Json::Array(items) => items.get(head.parse::<usize>().ok()?)?,
        _ => return None,
    };
    match rest {
        Some(r) => get_dotted(next, r),
        None => Some(next),
    }
}

/// The dotted paths a metric reads: one, or the two of a quotient
/// `numerator / denominator` (e.g. `refs.local / refs.total`, a share that no run
/// record holds as a field of its own). Paths never contain `/`.
pub fn metric_paths(metric: &str) -> Vec<&str> {
    metric.split('/').map(str::trim).collect()
}

/// The value of a metric (see [`metric_paths`]) in a run's result: the number at its
/// path, or the quotient of its two (none when the denominator is 0).
pub fn metric_of(value: &Json, metric: &str) -> Option<f64> {
    let num = |p: &str| get_dotted(value, p).and_then(as_f64);
    match metric_paths(metric).as_slice() {
        [p] => num(p),
        [n, d] => {
            let d = num(d)?;
            (d != 0.0).then_some(num(n)? / d)
        }
        _ => None,
    }
}

/// The parts of `value` that [`get_dotted`] finds at the given paths, in a
/// new value of the same shape (so `get_dotted` finds them there too). An
/// array met on the way is kept whole. A `null` or non-object `value` is
/// returned as is.
pub fn project(value: &Json, paths: &[String]) -> Json {
    if !value.is_object() {
        return value.clone();
    }
    let mut out = Json::Object(serde_json::Map::new());
    for p in paths {
        project_into(value, p, &mut out);
    }
    out
}

fn project_into(src: &Json, path: &str, dst: &mut Json) {
    let (Json::Object(from), Json::Object(to)) = (src, dst) else {
        return;
    };
    // Same order of lookup as `get_dotted`: the whole remaining path first.
    if let Some(v) = from.get(path) {
        to.insert(path.to_string(), v.clone());
        return;
    }
    let Some((head, rest)) = path.split_once('.') else {
        return;
    };
    let Some(next) = from.get(head) else {
        return;
    };
    if !next.is_object() {
        to.insert(head.to_string(), next.clone());
        return;
    }
    let slot = to
        .entry(head.to_string())
        .or_insert_with(|| Json::Object(serde_json::Map::new()));
    project_into(next, rest, slot);
}

/// Reads the value at the dotted `path` inside a TOML table.
pub fn get_dotted_toml<'a>(table: &'a toml::Table, path: &str) -> Option<&'a toml::Value> {
    let mut parts = path.split('.');
    let first = parts.next()?;
    let mut current = table.get(first)?;
    for part in parts {
        current = match current {
            toml::Value::Table(t) => t.get(part)?,
            toml::Value::Array(a) => a.get(part.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(current)
}

/// Converts a TOML value to JSON. Datetimes become their TOML text; a
/// non-finite float becomes `null` (JSON cannot carry it).
pub fn toml_to_json(value: &toml::Value) -> Json {
    match value {
        toml::Value::String(s) => Json::String(s.clone()),
        toml::Value::Integer(i) => Json::from(*i),
        toml::Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(Json::Number)
            .unwrap_or(Json::Null),
        toml::Value::Boolean(b) => Json::Bool(*b),
        toml::Value::Datetime(d) => Json::String(d.to_string()),
        toml::Value::Array(a) => Json::Array(a.iter().map(toml_to_json).collect()),
        toml::Value::Table(t) => Json::Object(
            t.iter()
                .map(|(k, v)| (k.clone(), toml_to_json(v)))
                .collect(),
        ),
    }
}

/// Converts a TOML table to a JSON object.
pub fn table_to_json(table: &toml::Table) -> Json {
    toml_to_json(&toml::Value::Table(table.clone()))
}

/// Equality of JSON values where numbers compare by numeric value, so a
/// setting written `2` matches a selector written `2.0`.
pub fn values_equal(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => match (x.as_f64(), y.as_f64()) {
                (Some(f), Some(g)) => f == g,
                _ => x == y,
            },
        },
        (Json::Array(x), Json::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| values_equal(p, q))
        }
        (Json::Object(x), Json::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| values_equal(v, w)))
        }
        _ => a == b,
    }
}

/// The numeric value of a JSON number (or of a boolean as 0/1), if any.
pub fn as_f64(value: &Json) -> Option<f64> {
    match value {
        Json::Number(n) => n.as_f64(),
        Json::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        _ => None,
    }
}

/// A short human label for a value: strings without quotes, numbers as
/// written, anything else as compact JSON.
pub fn label(value: &Json) -> String {
    match value {
        Json::String(s) => s.clone(),
        Json::Null => "-".to_string(),
        other => other.to_string(),
    }
}

/// Orders two JSON values for display: numbers numerically, strings
/// lexically, numbers before strings, everything else by its JSON text.
pub fn compare_values(a: &Json, b: &Json) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    match (as_f64(a), as_f64(b)) {
        (Some(x), Some(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => label(a).cmp(&label(b)),
    }
}

/// Parses a command-line style value: TOML syntax when it parses as a TOML
/// value (`4`, `2.5`, `true`, `"x"`), otherwise the raw text as a string.
pub fn parse_loose_value(text: &str) -> Json {
    let wrapped = format!("v = {text}");
    match wrapped.parse::<toml::Table>() {
        Ok(t) => t.get("v").map(toml_to_json).unwrap_or(Json::Null),
        Err(_) => Json::String(text.to_string()),
    }
}

/// Formats a number compactly for tables: integers below 1e9 in full, very
/// large or small magnitudes in scientific notation, otherwise 4 significant
/// decimals.
pub fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    let a = x.abs();
    if x.fract() == 0.0 && a < 1e9 {
        format!("{x:.0}")
    } else if a >= 1e6 || (a < 1e-3 && a > 0.0) {
        format!("{x:.4e}")
    } else {
        let s = format!("{x:.4}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_quotient_metric_divides_its_two_paths_and_has_no_value_over_zero() {
        let v: Json = serde_json::json!({"refs": {"local": 3, "total": 4}, "zero": 0});
        assert_eq!(metric_of(&v, "refs.local / refs.total"), Some(0.75));
        assert_eq!(metric_of(&v, "refs.local"), Some(3.0));
        assert_eq!(metric_of(&v, "refs.local / zero"), None);
        assert_eq!(metric_of(&v, "refs.local / missing"), None);
        assert_eq!(metric_paths("a.b/ c.d "), vec!["a.b", "c.d"]);
    }

    #[test]
    fn project_keeps_exactly_what_get_dotted_finds() {
        let v = json!({
            "makespan_ns": 5,
            "refs": {"local": 1, "remote": 2},
            "threads": [{"refs": 3}, {"refs": 4}],
            "config": {"machine": {"nodes": 4, "preset": "x"}, "seed": 1},
            "a.b": 7,
        });
        let paths: Vec<String> = [
            "refs.remote",
            "threads.1.refs",
            "config.machine.nodes",
            "a.b",
            "missing.path",
        ]
        .map(String::from)
        .to_vec();
        let p = project(&v, &paths);
        assert_eq!(
            p,
            json!({
                "refs": {"remote": 2},
                "threads": [{"refs": 3}, {"refs": 4}],
                "config": {"machine": {"nodes": 4}},
                "a.b": 7,
            })
        );
        for path in &paths {
            assert_eq!(get_dotted(&p, path), get_dotted(&v, path), "{path}");
        }
        assert_eq!(project(&Json::Null, &paths), Json::Null);
    }

    #[test]
    fn set_dotted_creates_nested_tables() {
        let mut t = toml::Table::new();
        assert!(set_dotted(&mut t, "machine.costs.remote_read_ns", 5.into()));
        assert_eq!(
            get_dotted_toml(&t, "machine.costs.remote_read_ns"),
            Some(&toml::Value::Integer(5))
        );
    }

    #[test]
    fn set_dotted_steps_into_a_list_of_tables_by_index() {
        let mut t: toml::Table = "[[program]]\nstart_ns = 0\n[[program]]\nstart_ns = 0\n"
            .parse()
            .unwrap();
        assert!(set_dotted(&mut t, "program.1.start_ns", 5.into()));
        assert!(set_dotted(&mut t, "program[0].workload.n", 64.into()));
        assert_eq!(
            get_dotted_toml(&t, "program.1.start_ns"),
            Some(&toml::Value::Integer(5))
        );
        assert_eq!(
            get_dotted_toml(&t, "program.0.workload.n"),
            Some(&toml::Value::Integer(64))
        );
        assert_eq!(t["program"].as_array().map(|a| a.len()), Some(2));
    }

    #[test]
    fn get_dotted_walks_objects_arrays_and_dotted_keys() {
        let v = json!({"a": {"b": [1, {"c": 3}]}, "x.y": 7});
        assert_eq!(get_dotted(&v, "a.b.1.c"), Some(&json!(3)));
        assert_eq!(get_dotted(&v, "x.y"), Some(&json!(7)));
        assert_eq!(get_dotted(&v, "a.z"), None);
    }

    #[test]
    fn numbers_compare_by_value() {
        assert!(values_equal(&json!(2), &json!(2.0)));
        assert!(!values_equal(&json!(2), &json!("2")));
    }

    #[test]
    fn loose_values_parse_as_toml_or_string() {
        assert_eq!(parse_loose_value("4"), json!(4));
        assert_eq!(parse_loose_value("uma"), json!("uma"));
    }
}
