//! Traces recorded elsewhere: Valgrind lackey's text (`valgrind --tool=lackey
//! --trace-mem=yes`), imported as a one-thread trace.
//!
//! Lackey writes a line per instruction (`I  ADDR,SIZE`) and per data access (` L`, ` S`,
//! ` M` for a load, a store, a modify, `ADDR,SIZE` in hexadecimal); lines of Valgrind's own
//! (`==PID== ...`) and blank lines are skipped. A modify is a read and a write, as
//! `numaplace record` counts it. Lackey does not say which thread made an access nor mark
//! synchronisation, so the import is one thread: a multi-threaded program's accesses are
//! all on it, in the order Valgrind ran them.

use crate::error::TraceError;
use crate::format::{Event, Header, Index};
use crate::write::TraceWriter;
use std::io::{BufRead, Write};
use std::path::Path;

/// The run being folded: direction, lowest byte, end, references, and the instructions
/// between the previous run's first reference and its own.
struct Pending {
    write: bool,
    lo: u64,
    end: u64,
    count: u32,
    before: u64,
}

/// Reads lackey's text from `input` (named `source` in errors) and writes it as a trace of
/// `header` (one thread) to `out`.
pub fn import<R: BufRead, W: Write>(
    input: R,
    source: &Path,
    header: Header,
    out: W,
    out_path: &Path,
) -> Result<Index, TraceError> {
    let shift = header.page_size.trailing_zeros();
    let mut w = TraceWriter::new(out, out_path, &header)?;
    let mut pending: Option<Pending> = None;
    // Instructions since the pending run's first reference (or the start).
    let mut since = 0u64;
    let mut lines = 0u64;
    for (i, line) in input.lines().enumerate() {
        let n = i as u64 + 1;
        lines = n;
        let line = line.map_err(|e| TraceError::io(source, e))?;
        let bad = |what: String| TraceError::Line {
            path: source.to_path_buf(),
            line: n,
            what,
        };
        if line.trim().is_empty() || line.starts_with("==") || line.starts_with("--") {
            continue;
        }
        let (tag, rest) = line.split_at(2.min(line.len()));
        let accesses: &[bool] = match tag {
            "I " => {
                parse(rest).map_err(&bad)?;
                since += 1;
                continue;
            }
            " L" => &[false],
            " S" => &[true],
            " M" => &[false, true],
            _ => {
                return Err(bad(format!(
                    "`{}`: not a lackey line (I, L, S or M and ADDRESS,SIZE)",
                    line.chars().take(40).collect::<String>()
                )))
            }
        };
        let (addr, size) = parse(rest).map_err(&bad)?;
        let page_end = ((addr >> shift) + 1) << shift;
        let end = addr.saturating_add(size.max(1)).min(page_end);
        for &write in accesses {
            match &mut pending {
                Some(p)
                    if p.write == write && p.lo >> shift == addr >> shift && p.count < u32::MAX =>
                {
                    p.count += 1;
                    p.lo = p.lo.min(addr);
                    p.end = p.end.max(end);
                }
                _ => {
                    if let Some(p) = pending.take() {
                        push(&mut w, &p, &bad)?;
                    }
                    pending = Some(Pending {
                        write,
                        lo: addr,
                        end,
                        count: 1,
                        before: since,
                    });
                    since = 0;
                }
            }
        }
    }
    let bad = |what: String| TraceError::Line {
        path: source.to_path_buf(),
        line: lines,
        what,
    };
    if let Some(p) = pending.take() {
        push(&mut w, &p, &bad)?;
    }
    w.push(0, since, Event::Exit)
        .map_err(|e| bad(e.to_string()))?;
    w.finish(vec![
        "imported from Valgrind lackey's text: one thread, no synchronisation".into(),
    ])
}

fn push<W: Write>(
    w: &mut TraceWriter<W>,
    p: &Pending,
    bad: &dyn Fn(String) -> TraceError,
) -> Result<(), TraceError> {
    w.push(
        0,
        p.before,
        Event::Run {
            write: p.write,
            address: p.lo,
            count: p.count,
            span: (p.end - p.lo) as u32,
        },
    )
    .map_err(|e| bad(e.to_string()))
}

/// `ADDR,SIZE` (hexadecimal address, decimal size) after the line's tag.
fn parse(rest: &str) -> Result<(u64, u64), String> {
    let s = rest.trim();
    let (a, z) = s
        .split_once(',')
        .ok_or_else(|| format!("`{s}`: expected ADDRESS,SIZE"))?;
    let addr = u64::from_str_radix(a.trim(), 16)
        .map_err(|_| format!("`{a}`: not a hexadecimal address"))?;
    let size: u64 = z
        .trim()
        .parse()
        .map_err(|_| format!("`{z}`: not a size in bytes"))?;
    if size > 4096 {
        return Err(format!(
            "an access of {size} bytes: more than lackey records"
        ));
    }
    Ok((addr, size))
}
