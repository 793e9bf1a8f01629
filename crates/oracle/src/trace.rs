//! The trace file: every reference run of a run in execution order, with the machine's
//! cost table and, at the end, the policy's own movements per page.
//!
//! Layout (little endian):
//! - `NPTRACE1`, then a u32 length and a JSON [`Header`] (the machine configuration,
//!   which carries the whole cost table, and the resolved run configuration);
//! - blocks of records: u32 record count, u32 byte length, then the records; each
//!   record is LEB128 varints of `node << 1 | write`, `target << 1 | cached` (the copy
//!   that served it, and whether at the cached price), the issue-time delta (zigzag),
//!   the page delta (zigzag) and the word count, deltas from the previous record of the
//!   block (a block decodes on its own); about 5-8 bytes a run;
//! - an empty block (count 0), a JSON [`Footer`] (totals and the per-page movement
//!   counts of the policy), its u64 length and `NPTREND1`.
//!
//! The writer buffers one block (up to [`BLOCK_RECORDS`] records) and writes it whole,
//! so recording costs a few bytes of memory per run in flight, whatever the run's
//! length; the reader streams blocks the same way.

use numaplace_core::observe::{ObservedRun, RefObserver};
use numaplace_core::MachineConfig;
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::rc::Rc;

const MAGIC: &[u8; 8] = b"NPTRACE1";
const END_MAGIC: &[u8; 8] = b"NPTREND1";
/// Records per block.
pub const BLOCK_RECORDS: usize = 1 << 16;

/// Records a parallel pass over a trace (the solvers', the capacity bound's) reads
/// before dealing them to its shards.
pub const CHUNK_RECORDS: usize = 1 << 20;

/// What a trace starts with.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Header {
    /// The machine (its cost table prices the model).
    pub machine: MachineConfig,
    /// The policy that ran.
    pub policy: String,
    /// The resolved run configuration, as JSON (for provenance).
    #[serde(default)]
    pub config: serde_json::Value,
}

/// One page's movements under the policy, from the run's per-page report.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageMoves {
    /// Migrations.
    pub migrations: u64,
    /// Replications.
    pub replications: u64,
    /// Coherency faults.
    pub coherency_faults: u64,
    /// Copies dropped by coherency faults (every copy ever made less those left).
    pub copies_dropped: u64,
}

/// What a trace ends with.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Footer {
    /// Reference runs recorded.
    pub records: u64,
    /// Words referenced.
    pub words: u64,
    /// Pages of the run.
    pub npages: u64,
    /// The run's makespan (ns).
    pub makespan_ns: u64,
    /// Per page (indexed by page number), the policy's movements; empty when the run
    /// kept no per-page report.
    pub pages: Vec<PageMoves>,
}

/// A decoded record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record {
    /// Issue time (ns).
    pub time: u64,
    /// Page.
    pub page: u32,
    /// The node of the referencing thread.
    pub node: u16,
    /// The node whose copy served the run.
    pub target: u16,
    /// Whether it wrote.
    pub write: bool,
    /// Whether it was served at the cached price.
    pub cached: bool,
    /// Words.
    pub count: u32,
}

fn put_varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

fn get_varint(buf: &[u8], pos: &mut usize) -> io::Result<u64> {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = *buf.get(*pos).ok_or_else(|| corrupt("record cut short"))?;
        *pos += 1;
        if shift > 63 {
            return Err(corrupt("varint too long"));
        }
        v |= ((b & 0x7f) as u64) << shift;
        if b & 0x80 == 0 {
            return Ok(v);
        }
        shift += 7;
    }
}

fn corrupt(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("not a valid trace: {what}"),
    )
}

/// Writes a trace: header, blocks, footer.
pub struct TraceWriter<W: Write> {
    out: W,
    block: Vec<u8>,
    in_block: u32,
    prev_time: u64,
    prev_page: u32,
    cached_price: bool,
    records: u64,
    words: u64,
    error: Option<io::Error>,
}

impl<W: Write> TraceWriter<W> {
    /// Starts a trace on `out` with `header`.
    pub fn new(mut out: W, header: &Header) -> io::Result<TraceWriter<W>> {
        let h = serde_json::to_vec(header)?;
        out.write_all(MAGIC)?;
        out.write_all(&(h.len() as u32).to_le_bytes())?;
        out.write_all(&h)?;
        Ok(TraceWriter {
            out,
            block: Vec::with_capacity(BLOCK_RECORDS * 8),
            in_block: 0,
            prev_time: 0,
            prev_page: 0,
            cached_price: header.machine.costs.cached_read_ns.is_some(),
            records: 0,
            words: 0,
            error: None,
        })
    }

    /// Appends one record.
    pub fn push(&mut self, r: &Record) {
        let b = &mut self.block;
        put_varint(b, (r.node as u64) << 1 | r.write as u64);
        put_varint(b, (r.target as u64) << 1 | r.cached as u64);
        let dt = r.time.wrapping_sub(self.prev_time) as i64;
        put_varint(b, ((dt << 1) ^ (dt >> 63)) as u64);
        let dp = r.page as i64 - self.prev_page as i64;
        put_varint(b, ((dp << 1) ^ (dp >> 63)) as u64);
        put_varint(b, r.count as u64);
        self.prev_time = r.time;
        self.prev_page = r.page;
        self.in_block += 1;
        self.records += 1;
        self.words += r.count as u64;
        if self.in_block as usize >= BLOCK_RECORDS {
            self.flush_block();
        }
    }

    fn flush_block(&mut self) {
        if self.in_block == 0 || self.error.is_some() {
            self.block.clear();
            self.in_block = 0;
            return;
        }
        let r = self
            .out
            .write_all(&self.in_block.to_le_bytes())
            .and_then(|_| self.out.write_all(&(self.block.len() as u32).to_le_bytes()))
            .and_then(|_| self.out.write_all(&self.block));
        if let Err(e) = r {
            self.error = Some(e);
        }
        self.block.clear();
        self.in_block = 0;
        self.prev_time = 0;
        self.prev_page = 0;
    }

    /// Records written so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Ends the trace with `footer` (its record and word totals are filled in) and
    /// returns the writer; the first write error, if any, is returned here.
    pub fn finish(mut self, mut footer: Footer) -> io::Result<W> {
        self.flush_block();
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        footer.records = self.records;
        footer.words = self.words;
        let f = serde_json::to_vec(&footer)?;
        self.out.write_all(&0u32.to_le_bytes())?;
        self.out.write_all(&0u32.to_le_bytes())?;
        self.out.write_all(&f)?;
        self.out.write_all(&(f.len() as u64).to_le_bytes())?;
        self.out.write_all(END_MAGIC)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// The engine's observer that records into a shared [`TraceWriter`] (the caller keeps
/// the other handle and finishes the trace after the run).
pub struct Recorder(pub Rc<RefCell<TraceWriter<BufWriter<File>>>>);

impl RefObserver for Recorder {
    fn reference(&mut self, run: &ObservedRun) {
        let mut w = self.0.borrow_mut();
        let cached = w.cached_price && !run.write && run.target == run.node && run.copies.len() > 1;
        w.push(&Record {
            time: run.start.0,
            page: run.vpn.0,
            node: run.node.0,
            target: run.target.0,
            write: run.write,
            cached,
            count: run.count,
        });
    }
}

/// Reads a trace: the header at once, the footer from the end, the records block by
/// block.
pub struct TraceReader {
    input: BufReader<File>,
    /// The header.
    pub header: Header,
    /// The footer.
    pub footer: Footer,
    buf: Vec<u8>,
    done: bool,
}

impl TraceReader {
    /// Opens `path`, reading its header and footer.
    pub fn open(path: &Path) -> io::Result<TraceReader> {
        let mut f = File::open(path)?;
        let len = f.seek(SeekFrom::End(0))?;
        if len < 32 {
            return Err(corrupt("too short"));
        }
        f.seek(SeekFrom::End(-16))?;
        let mut tail = [0u8; 16];
        f.read_exact(&mut tail)?;
        if &tail[8..] != END_MAGIC {
            return Err(corrupt("no end mark (the recording did not finish)"));
        }
        let flen = u64::from_le_bytes(tail[..8].try_into().unwrap_or_default());
        if flen > len - 16 {
            return Err(corrupt("footer length"));
        }
        f.seek(SeekFrom::End(-16 - flen as i64))?;
        let mut fb = vec![0u8; flen as usize];
        f.read_exact(&mut fb)?;
        let footer: Footer = serde_json::from_slice(&fb)?;
        f.seek(SeekFrom::Start(0))?;
        let mut input = BufReader::with_capacity(1 << 20, f);
        let mut magic = [0u8; 8];
        input.read_exact(&mut magic)?;
        if &magic != MAGIC {
            return Err(corrupt("not a numaplace trace"));
        }
        let mut l = [0u8; 4];
        input.read_exact(&mut l)?;
        let hlen = u32::from_le_bytes(l) as u64;
        if hlen > len {
            return Err(corrupt("header length"));
        }
        let mut hb = vec![0u8; hlen as usize];
        input.read_exact(&mut hb)?;
        let header: Header = serde_json::from_slice(&hb)?;
        Ok(TraceReader {
            input,
            header,
            footer,
            buf: Vec::new(),
            done: false,
        })
    }

    /// Calls `f` with every record left, in order, a block at a time (never the whole
    /// trace in memory).
    pub fn for_each(&mut self, mut f: impl FnMut(&Record)) -> io::Result<()> {
        let mut block = Vec::new();
        while self.next_block(&mut block)? {
            block.iter().for_each(&mut f);
            block.clear();
        }
        Ok(())
    }

    /// Appends the next block's records to `out`; false at the end of the records.
    pub fn next_block(&mut self, out: &mut Vec<Record>) -> io::Result<bool> {
        if self.done {
            return Ok(false);
        }
        let mut l = [0u8; 8];
        self.input.read_exact(&mut l)?;
        let count = u32::from_le_bytes(l[..4].try_into().unwrap_or_default()) as usize;
        let bytes = u32::from_le_bytes(l[4..].try_into().unwrap_or_default()) as usize;
        if count == 0 {
            self.done = true;
            return Ok(false);
        }
        if count > BLOCK_RECORDS || bytes > count * 40 {
            return Err(corrupt("block size"));
        }
        self.buf.resize(bytes, 0);
        self.input.read_exact(&mut self.buf)?;
        let b = &self.buf;
        let mut pos = 0;
        let (mut time, mut page) = (0u64, 0i64);
        for _ in 0..count {
            let x = get_varint(b, &mut pos)?;
            let y = get_varint(b, &mut pos)?;
            if x >> 1 > u16::MAX as u64 || y >> 1 > u16::MAX as u64 {
                return Err(corrupt("node out of range"));
            }
            let dt = get_varint(b, &mut pos)?;
            time = time.wrapping_add(((dt >> 1) as i64 ^ -((dt & 1) as i64)) as u64);
            let dp = get_varint(b, &mut pos)?;
            page += (dp >> 1) as i64 ^ -((dp & 1) as i64);
            let count = get_varint(b, &mut pos)?;
            if !(0..=u32::MAX as i64).contains(&page) || count > u32::MAX as u64 {
                return Err(corrupt("page or count out of range"));
            }
            out.push(Record {
                time,
                page: page as u32,
                node: (x >> 1) as u16,
                target: (y >> 1) as u16,
                write: x & 1 != 0,
                cached: y & 1 != 0,
                count: count as u32,
            });
        }
        Ok(true)
    }
}
