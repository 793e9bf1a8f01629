//! `numaplace list`: every component with a line on each, and with `--fields` its
//! configuration fields.

use crate::failure::Failure;
use crate::output::out;
use clap::Args;
use numaplace_core::component::{SchedulerConfig, WorkloadConfig};
use numaplace_core::fields::{flatten, FieldInfo, Fields};
use numaplace_core::{MachineConfig, PolicyConfig};
use numaplace_harness::presets;

/// `numaplace list`.
#[derive(Args, Debug)]
pub struct ListArgs {
    /// Also list every configuration field: its default, allowed range, unit and
    /// meaning (the ranges are the ones validation enforces).
    #[arg(long)]
    fields: bool,
}

/// Prints the list `a` asks for.
pub fn run(a: ListArgs) -> Result<(), Failure> {
    list(a.fields)
}

fn list(fields: bool) -> Result<(), Failure> {
    let mut o = String::from("machines:\n");
    for name in presets::names() {
        let t = presets::preset_table(name)?;
        let d = t.get("description").and_then(|d| d.as_str()).unwrap_or("");
        o.push_str(&format!("  {name:<18} {d}\n"));
    }
    if fields {
        o.push_str("  fields of every machine (values from the preset; `machine show NAME`):\n");
        field_lines(&mut o, MachineConfig::fields(), None);
        o.push_str("run:\n");
        field_lines(
            &mut o,
            numaplace_core::ReportConfig::fields(),
            toml::Value::try_from(numaplace_core::ReportConfig::default()).ok(),
        );
    }
    // One section per registry: each component's name and description, and with
    // `--fields` its parameters.
    type Presets = &'static [(&'static str, &'static str)];
    fn section<C: serde::Serialize>(
        o: &mut String,
        title: &str,
        all: Vec<C>,
        name: impl Fn(&C) -> (&'static str, &'static str, &'static [FieldInfo], Presets),
        fields: bool,
    ) {
        o.push_str(title);
        o.push_str(":\n");
        for c in all {
            let (kind, desc, declared, presets) = name(&c);
            o.push_str(&format!("  {kind:<18} {desc}\n"));
            if !presets.is_empty() {
                let names: Vec<&str> = presets.iter().map(|p| p.0).collect();
                o.push_str(&format!(
                    "  {:<18} presets (`preset = \"NAME\"`): {}\n",
                    "",
                    names.join(", ")
                ));
            }
            if fields {
                field_lines(o, declared, toml::Value::try_from(&c).ok());
            }
        }
    }
    section(
        &mut o,
        "workloads",
        WorkloadConfig::all(),
        |c| (c.kind(), c.describe(), c.fields(), c.presets()),
        fields,
    );
    section(
        &mut o,
        "policies",
        PolicyConfig::all(),
        |c| (c.kind(), c.describe(), c.fields(), c.presets()),
        fields,
    );
    section(
        &mut o,
        "schedulers",
        SchedulerConfig::all(),
        |c| (c.kind(), c.describe(), c.fields(), c.presets()),
        fields,
    );
    out(&o)
}

/// One line per field: dotted name, default (when `defaults` is given), range with
/// unit, and the field's doc, in columns as wide as this block needs.
fn field_lines(o: &mut String, declared: &[FieldInfo], defaults: Option<toml::Value>) {
    let rows: Vec<[String; 4]> = flatten(declared)
        .into_iter()
        .map(|(name, f)| {
            let default = defaults
                .as_ref()
                .and_then(|d| name.split('.').try_fold(d, |v, k| v.get(k)))
                .map(|v| match v {
                    toml::Value::String(s) => format!("\"{s}\""),
                    v => v.to_string(),
                })
                .unwrap_or_else(|| "-".into());
            let range = match (f.range(), f.unit) {
                (r, "") => r,
                (r, u) if r.is_empty() => u.to_string(),
                (r, u) => format!("{r} {u}"),
            };
            [name, default, range, f.doc.to_string()]
        })
        .collect();
    let width = |i: usize| rows.iter().map(|r| r[i].len()).max().unwrap_or(0);
    let (w0, w1, w2) = (width(0), width(1), width(2));
    for [name, default, range, doc] in &rows {
        o.push_str(&format!(
            "      {name:<w0$}  {default:<w1$}  {range:<w2$}  {doc}\n"
        ));
    }
}
