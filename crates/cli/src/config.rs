//! Reading configuration files and machines, with errors naming the file or field at fault.

use crate::failure::Failure;
use numaplace_core::MachineConfig;
use numaplace_harness::{resolve, Overrides, UserError};
use std::path::PathBuf;

/// The text of the file at `path` with its name for messages; a file that cannot be read
/// is bad input.
pub fn read_text(path: &PathBuf) -> Result<(String, String), Failure> {
    let origin = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| UserError::new(format!("{origin}: cannot read: {e}")))?;
    Ok((origin, text))
}

/// A run's configuration: the file (if any) with the command line's overrides, resolved
/// as `numaplace run` resolves it.
pub fn run_config(
    file: Option<&PathBuf>,
    ov: &Overrides,
) -> Result<numaplace_harness::RunConfig, Failure> {
    Ok(match file {
        Some(path) => {
            let (origin, text) = read_text(path)?;
            numaplace_harness::resolve_text(&origin, &text, ov)?
        }
        None => resolve(None, ov)?,
    })
}

/// The machine of `--machine` and `--set`, with an error naming the field it is about
/// (serde reports an unknown field at the table that holds it).
pub fn machine_from_table(table: toml::Table) -> Result<MachineConfig, Failure> {
    Ok(numaplace_harness::resolve::machine_config(table)?)
}
