//! `numaplace machine show`, `workload show`, `policy show` and `scheduler show`: one
//! command family (a component's resolved values as a run configuration section), so one
//! module.

use crate::failure::Failure;
use crate::output::out;
use anyhow::Context;
use clap::{Args, Subcommand};
use numaplace_core::component::{SchedulerConfig, WorkloadConfig};
use numaplace_core::{Machine, MachineConfig, PolicyConfig};
use numaplace_harness::{text, UserError};

/// `numaplace machine`, `workload`, `policy` or `scheduler`: the family's subcommand.
#[derive(Args, Debug)]
pub struct ShowArgs {
    #[command(subcommand)]
    command: ShowCommand,
}

#[derive(Subcommand, Debug)]
enum ShowCommand {
    /// Print a component's resolved values as a TOML run configuration section, which
    /// `numaplace run --config FILE` reads back to the same run.
    Show {
        /// Its name (see `numaplace list`).
        name: String,
        /// Overrides, e.g. `--set nodes=4`.
        #[arg(long = "set", value_name = "FIELD=VALUE")]
        sets: Vec<String>,
    },
}

/// Runs `a` for the component family `section`: `machine`, `workload`, `policy` or
/// `scheduler`.
pub fn run(section: &str, a: ShowArgs) -> Result<(), Failure> {
    let ShowCommand::Show { name, sets } = a.command;
    match section {
        "machine" => machine_show(&name, &sets),
        _ => section_show(section, &name, &sets),
    }
}

/// Prints `[section]` of a run configuration for the component `name` with `sets`
/// applied: the defaults of every parameter, readable back by `run --config`.
fn section_show(section: &str, name: &str, sets: &[String]) -> Result<(), Failure> {
    let kinds = match section {
        "workload" => WorkloadConfig::kinds(),
        "policy" => PolicyConfig::kinds(),
        _ => SchedulerConfig::kinds(),
    };
    if !kinds.contains(&name) {
        return Err(UserError::new(format!(
            "no {section} `{name}`; known: {}",
            kinds.join(", ")
        ))
        .into());
    }
    // Every configuration type defaults its fields, so the kind alone gives the defaults.
    let mut base = toml::Table::new();
    base.insert("kind".into(), toml::Value::String(name.into()));
    let mut doc = toml::Table::new();
    doc.insert(section.into(), toml::Value::Table(base));
    for s in sets {
        let prefixed = format!("{section}.{}", s.trim());
        numaplace_harness::resolve::apply_set(&mut doc, &prefixed)?;
    }
    // Read it back into its typed configuration, so what is printed is valid and complete.
    let table = doc
        .remove(section)
        .unwrap_or(toml::Value::Table(toml::Table::new()));
    let typed = |e: toml::de::Error| UserError::new(format!("{section}: {}", e.message()));
    let (value, presets) = match section {
        "workload" => {
            let c = table.try_into::<WorkloadConfig>().map_err(typed)?;
            (toml::Value::try_from(&c), c.presets())
        }
        "policy" => {
            let c = table.try_into::<PolicyConfig>().map_err(typed)?;
            (toml::Value::try_from(&c), c.presets())
        }
        _ => {
            let c = table.try_into::<SchedulerConfig>().map_err(typed)?;
            (toml::Value::try_from(&c), c.presets())
        }
    };
    let value = value.context("serialising the section")?;
    // The named settings as comments (`--set preset='"NAME"'` shows one).
    let mut listed = String::new();
    if !presets.is_empty() {
        listed.push_str("# presets (`preset = \"NAME\"`, other fields override it):\n");
        for (p, source) in presets {
            listed.push_str(&format!("#   {p:<16} {source}\n"));
        }
    }
    let mut shown = toml::Table::new();
    shown.insert(section.into(), value);
    let body = toml::to_string_pretty(&shown).context("serialising the section")?;
    out(&format!(
        "# {section} `{name}`: every parameter with its value; `numaplace run --config FILE` reads this\n{listed}{body}"
    ))
}

fn machine_show(name: &str, sets: &[String]) -> Result<(), Failure> {
    let cfg: MachineConfig = numaplace_harness::resolve::machine_preset(name, sets)?;
    let m =
        Machine::new(cfg.clone()).map_err(|e| UserError::new(format!("machine {name}: {e}")))?;
    let mut doc = toml::Table::new();
    doc.insert(
        "machine".into(),
        toml::Value::try_from(&cfg).context("serialising the machine")?,
    );
    let body = toml::to_string_pretty(&doc).context("serialising the machine")?;
    // The summary as comments: the output is a run configuration `run --config` reads.
    let summary: String = text::machine_summary(&m)
        .lines()
        .map(|l| format!("# {l}\n"))
        .collect();
    out(&format!("{summary}{body}"))
}
