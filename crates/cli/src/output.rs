//! Standard output: a closed pipe ends quietly, and `--json -` leaves it to the JSON alone.

use crate::failure::Failure;
use anyhow::Context;
use std::path::PathBuf;

/// Writes `text` to standard output; a closed pipe (`numaplace list | head -1`) ends the
/// program quietly with success instead of a panic.
pub fn out(text: &str) -> Result<(), Failure> {
    use std::io::Write;
    let mut o = std::io::stdout().lock();
    o.write_all(text.as_bytes())
        .and_then(|()| o.flush())
        .map_err(stdout_failure)
}

/// A failed write to standard output: a closed pipe ends quietly, anything else fails.
fn stdout_failure(e: std::io::Error) -> Failure {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        Failure::closed_pipe()
    } else {
        Failure {
            code: 1,
            err: anyhow::Error::new(e).context("writing to standard output"),
        }
    }
}

/// Prints `report`, and the JSON `value()` to `json` when asked (`-`: standard output
/// gets only the JSON and the report goes to standard error).
pub fn emit(
    report: String,
    json: Option<PathBuf>,
    value: impl FnOnce() -> serde_json::Value,
) -> Result<(), Failure> {
    emit_streamed(report, json, |w| serde_json::to_writer_pretty(w, &value()))
}

/// The command as it was typed, for a page to say what made it: `numaplace` and the
/// arguments, each quoted when the shell would need it.
pub fn command_line() -> String {
    let mut out = String::from("numaplace");
    for arg in std::env::args_os().skip(1) {
        let a = arg.to_string_lossy();
        let plain = !a.is_empty()
            && a.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./=,:+@%".contains(c));
        out.push(' ');
        if plain {
            out.push_str(&a);
        } else {
            out.push('\'');
            out.push_str(&a.replace('\'', "'\\''"));
            out.push('\'');
        }
    }
    out
}

/// Writes a page to `path` and says so on standard error.
pub fn write_page(path: &std::path::Path, page: &str) -> Result<(), Failure> {
    std::fs::write(path, page).with_context(|| format!("writing {}", path.display()))?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// Prints `report`, and when asked writes the JSON record to `json` with `write`, which
/// streams it (`-`: standard output gets only the JSON and the report goes to standard
/// error): a record with a per-page list is never held whole, as text or as values.
pub fn emit_streamed(
    report: String,
    json: Option<PathBuf>,
    write: impl FnOnce(&mut dyn std::io::Write) -> serde_json::Result<()>,
) -> Result<(), Failure> {
    let to_stdout = json.as_ref().is_some_and(|p| p.as_os_str() == "-");
    if to_stdout {
        eprint!("{report}");
    } else {
        out(&report)?;
    }
    match json {
        Some(path) => write_streamed(&path, write),
        None => Ok(()),
    }
}

/// Writes a JSON record to `path` (`-`: standard output) with `write`, which streams it,
/// and a final newline.
pub fn write_streamed(
    path: &std::path::Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> serde_json::Result<()>,
) -> Result<(), Failure> {
    use std::io::Write;
    if path.as_os_str() == "-" {
        let mut o = std::io::BufWriter::new(std::io::stdout().lock());
        write(&mut o)
            .map_err(std::io::Error::from)
            .and_then(|()| o.write_all(b"\n"))
            .and_then(|()| o.flush())
            .map_err(stdout_failure)
    } else {
        let file =
            std::fs::File::create(path).with_context(|| format!("writing {}", path.display()))?;
        let mut w = std::io::BufWriter::new(file);
        write(&mut w)
            .map_err(std::io::Error::from)
            .and_then(|()| w.write_all(b"\n"))
            .and_then(|()| w.flush())
            .with_context(|| format!("writing {}", path.display()))?;
        Ok(())
    }
}
