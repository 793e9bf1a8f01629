//! The recorder's raw stream (`recorder/RAW.md`): what the Valgrind tool writes to its
//! pipe, turned into a trace as it arrives.
//!
//! Little-endian: a 32-byte header (`NPRAW001`, the folding page size, two reserved
//! words), then 32-byte records `{u8 kind, u8 flags, u16 0, u32 thread, u64 a, u64 b,
//! u64 instr}`, ending with an END record that counts the records before it. A stream
//! that stops before its END record (the program was killed, the tool failed) is refused
//! with the byte offset where it stopped.

use crate::error::TraceError;
use crate::format::{Event, Header, Index};
use crate::write::TraceWriter;
use std::io::{Read, Write};
use std::path::Path;

/// The raw stream's magic.
pub const MAGIC: &[u8; 8] = b"NPRAW001";
const RECORD: usize = 32;

/// Notes the recorder may make, by code: what the trace cannot replay faithfully.
pub fn note_text(code: u64) -> String {
    match code {
        1 => "OpenMP tasks: a task's references are replayed on the thread that ran it".into(),
        2 => "a parallel region nested in another: replayed as part of the outer region's thread"
            .into(),
        3 => "the old GOMP_parallel_start ABI: its regions are not marked".into(),
        4 => "reader-writer locks: not re-timed (their waits are not in the trace)".into(),
        5 => "a recursive or error-checking mutex locked again by its holder".into(),
        c => format!("recorder note {c}"),
    }
}

/// What a conversion read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Converted {
    /// The trace's index as written.
    pub index: Index,
    /// Bytes of raw stream read.
    pub raw_bytes: u64,
}

/// Reads a raw stream from `input` (named `source` in errors) and writes it as a trace of
/// `header` (whose page size is replaced by the stream's) to `out`. `progress` is called
/// with the bytes read so far now and then.
pub fn convert<R: Read, W: Write + Send + 'static>(
    mut input: R,
    source: &Path,
    mut header: Header,
    out: W,
    out_path: &Path,
    mut progress: impl FnMut(u64),
) -> Result<Converted, TraceError> {
    let mut head = [0u8; 32];
    read_full(&mut input, source, 0, &mut head)?;
    if &head[..8] != MAGIC {
        return Err(TraceError::corrupt(
            source,
            0,
            "not the recorder's raw stream (no NPRAW001 header)",
        ));
    }
    header.page_size = u64::from_le_bytes(head[8..16].try_into().expect("8 bytes"));
    let mut w = TraceWriter::new_threaded(out, out_path, &header)?;
    let mut notes: Vec<u64> = Vec::new();
    let mut offset = 32u64;
    let mut records = 0u64;
    let mut buf = vec![0u8; RECORD * 4096];
    let mut pending = 0usize;
    loop {
        let n = input
            .read(&mut buf[pending..])
            .map_err(|e| TraceError::io(source, e))?;
        if n == 0 {
            return Err(TraceError::corrupt(
                source,
                offset,
                format!(
                    "the stream ends after {records} records without its END record (did the program or the recorder stop early?)"
                ),
            ));
        }
        let have = pending + n;
        let whole = have - have % RECORD;
        for rec in buf[..whole].chunks_exact(RECORD) {
            let kind = rec[0];
            let flags = rec[1];
            let thread = u32::from_le_bytes(rec[4..8].try_into().expect("4 bytes"));
            let a = u64::from_le_bytes(rec[8..16].try_into().expect("8 bytes"));
            let b = u64::from_le_bytes(rec[16..24].try_into().expect("8 bytes"));
            let instr = u64::from_le_bytes(rec[24..32].try_into().expect("8 bytes"));
            let lo = b as u32;
            let hi = (b >> 32) as u32;
            let small = |v: u64, what: &str| -> Result<u32, TraceError> {
                u32::try_from(v).map_err(|_| {
                    TraceError::corrupt(source, offset, format!("{what} {v} does not fit 32 bits"))
                })
            };
            let event = match kind {
                0 => {
                    if a != records {
                        return Err(TraceError::corrupt(
                            source,
                            offset,
                            format!("END counts {a} records; {records} came"),
                        ));
                    }
                    let notes = notes.iter().map(|&c| note_text(c)).collect();
                    let index = w.finish(notes)?;
                    progress(offset + RECORD as u64);
                    return Ok(Converted {
                        index,
                        raw_bytes: offset + RECORD as u64,
                    });
                }
                1 => {
                    if lo == 0 {
                        return Err(TraceError::corrupt(
                            source,
                            offset,
                            "a run of no references",
                        ));
                    }
                    Event::Run {
                        write: flags & 1 != 0,
                        address: a,
                        count: lo,
                        span: hi,
                    }
                }
                2 => Event::Create {
                    child: small(a, "thread")?,
                },
                3 => Event::Start {
                    parent: small(a, "thread")?,
                },
                4 => Event::Exit,
                5 => Event::Join {
                    thread: small(a, "thread")?,
                },
                6 => Event::Acquire {
                    key: a,
                    number: small(b, "acquisition")?,
                },
                7 => Event::Release {
                    key: a,
                    number: small(b, "release")?,
                },
                8 => Event::Barrier {
                    key: a,
                    arrival: lo,
                    parties: hi,
                },
                9 => Event::Fork {
                    region: small(a, "region")?,
                    team: small(b, "team")?,
                },
                10 => Event::Enter {
                    region: small(a, "region")?,
                    team: lo,
                    index: hi,
                },
                11 => Event::Leave {
                    region: small(a, "region")?,
                },
                12 => {
                    if !notes.contains(&a) {
                        notes.push(a);
                    }
                    offset += RECORD as u64;
                    records += 1;
                    continue;
                }
                k => {
                    return Err(TraceError::corrupt(
                        source,
                        offset,
                        format!("record kind {k} is not the recorder's"),
                    ))
                }
            };
            w.push(thread, instr, event).map_err(|e| match e {
                TraceError::Invalid(what) => TraceError::corrupt(source, offset, what),
                other => other,
            })?;
            offset += RECORD as u64;
            records += 1;
        }
        buf.copy_within(whole..have, 0);
        pending = have - whole;
        progress(offset);
    }
}

fn read_full<R: Read>(
    input: &mut R,
    source: &Path,
    offset: u64,
    buf: &mut [u8],
) -> Result<(), TraceError> {
    input.read_exact(buf).map_err(|e| match e.kind() {
        std::io::ErrorKind::UnexpectedEof => TraceError::corrupt(
            source,
            offset,
            "the stream ends before its header (did the recorder start?)",
        ),
        _ => TraceError::io(source, e),
    })
}
