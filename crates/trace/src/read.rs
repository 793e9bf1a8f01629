//! Reading a trace: the footer at open, then any thread's batches on demand, so replaying
//! holds one decoded batch per thread whatever the trace's length.

use crate::error::TraceError;
use crate::format::{self, Header, Index, Kind, Row, PAGE_BATCH};
use arrow_ipc::Block;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

/// Most rows a batch may hold (the writer makes [`format::BATCH_ROWS`]); a larger count
/// is refused before anything is decoded.
pub const MAX_BATCH_ROWS: u32 = 1 << 20;

/// Anything a trace can be read from.
pub trait Source: Read + Seek {}
impl<T: Read + Seek> Source for T {}

/// The columns, by their place in the schema ([`format::fields`]).
const THREAD: usize = 0;
const KIND: usize = 1;
const INSTRUCTIONS: usize = 2;
const PAGE: usize = 3;
const OFFSET: usize = 4;
const SPAN: usize = 5;
const COUNT: usize = 6;
const OBJECT: usize = 7;
const SEQ: usize = 8;
const PARTIES: usize = 9;
/// How many columns a trace has.
const COLUMNS: usize = 10;

/// A set of columns, a bit per column.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
struct Columns(u16);

impl Columns {
    const fn of(cols: &[usize]) -> Columns {
        let mut bits = 0u16;
        let mut i = 0;
        while i < cols.len() {
            bits |= 1 << cols[i];
            i += 1;
        }
        Columns(bits)
    }
    fn has(self, c: usize) -> bool {
        self.0 & (1 << c) != 0
    }
}

/// Every column.
const ALL: Columns = Columns((1 << COLUMNS) - 1);
/// What a replay reads at every row.
const RUNS: Columns = Columns::of(&[KIND, INSTRUCTIONS, PAGE, OFFSET, SPAN, COUNT]);
/// What a replay reads at a marker besides: decoded when the replay meets one.
const MARKER_FIELDS: Columns = Columns::of(&[OBJECT, SEQ, PARTIES]);
/// What checking the synchronisation reads.
const MARKERS: Columns = Columns::of(&[THREAD, KIND, OBJECT, SEQ, PARTIES]);

/// An open trace: its header, index and the byte range of every batch.
pub struct TraceReader<R: Source = File> {
    path: PathBuf,
    file: R,
    blocks: Vec<Block>,
    header: Header,
    index: Index,
    per_thread: Vec<Vec<u32>>,
    page_batches: Vec<u32>,
}

/// One decoded batch: rows of one thread (or of the page table).
///
/// The reader decodes the IPC body itself, into the batch's own vectors, rather than
/// through arrow's decoder: a replay reads batch after batch into the same [`Batch`], so
/// nothing is allocated once its vectors have grown, and only the columns it reads are
/// decompressed. (Arrow's decoder allocates every column afresh, 2.7 MB a batch of
/// 65,536 rows: the kernel's zeroing of those pages was a tenth of a long replay's CPU
/// time.)
#[derive(Default)]
pub struct Batch {
    /// Its number in the file.
    pub number: u32,
    /// The byte offset it starts at.
    pub offset: u64,
    rows: usize,
    /// The columns that hold this batch's values (the others read as empty).
    decoded: Columns,
    thread: Vec<u32>,
    kind: Vec<u8>,
    instructions: Vec<u64>,
    page: Vec<u32>,
    off: Vec<u32>,
    span: Vec<u32>,
    count: Vec<u32>,
    object: Vec<u64>,
    seq: Vec<u32>,
    parties: Vec<u32>,
    /// The batch's message and body as read, kept so that a column can be decoded later.
    raw: Vec<u8>,
    meta_len: usize,
    compressed: bool,
    /// Each column's values buffer: (offset, length) in the body.
    buffers: [(usize, usize); COLUMNS],
    /// A decompressed buffer longer than its column needs (a writer may pad).
    scratch: Vec<u8>,
    zstd: Option<zstd::bulk::Decompressor<'static>>,
}

/// A batch's run columns ([`Batch::runs`]): what a replay reads at every row without
/// building a [`Row`].
pub struct Runs<'a> {
    /// Each row's kind, as stored.
    pub kind: &'a [u8],
    /// Instructions before each row.
    pub instructions: &'a [u64],
    /// A run's page.
    pub page: &'a [u32],
    /// A run's lowest byte in its page.
    pub offset: &'a [u32],
    /// A run's bytes from its offset.
    pub span: &'a [u32],
    /// A run's references.
    pub count: &'a [u32],
}

impl Batch {
    /// Rows.
    pub fn len(&self) -> usize {
        self.rows
    }

    /// Whether it has no rows.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Row `i` of a checked batch ([`TraceReader::read_batch`]; panics on a kind that
    /// is not a trace's, which a checked batch never holds).
    #[inline]
    pub fn row(&self, i: usize) -> Row {
        self.try_row(i).expect("kinds are checked on reading")
    }

    /// Each row's kind, as stored (checked by [`TraceReader::read_batch`] only).
    pub fn kinds(&self) -> &[u8] {
        self.col(KIND, &self.kind)
    }

    /// Row `i`, or `None` if its kind is not a trace's (an unchecked batch). A column the
    /// read left out reads as 0 (a run's count as 1): a batch read for its markers
    /// ([`TraceReader::read_markers_into`]) has no run columns, one read for a replay
    /// ([`TraceReader::read_runs_into`]) no marker fields until
    /// [`TraceReader::decode_marker_fields`].
    #[inline]
    pub fn try_row(&self, i: usize) -> Option<Row> {
        let or = |c: usize, a: &[u32], d: u32| self.col(c, a).get(i).copied().unwrap_or(d);
        Some(Row {
            instructions: self
                .col(INSTRUCTIONS, &self.instructions)
                .get(i)
                .copied()
                .unwrap_or(0),
            kind: Kind::from_u8(*self.col(KIND, &self.kind).get(i)?)?,
            page: or(PAGE, &self.page, 0),
            offset: or(OFFSET, &self.off, 0),
            span: or(SPAN, &self.span, 0),
            count: or(COUNT, &self.count, 1),
            object: self.col(OBJECT, &self.object).get(i).copied().unwrap_or(0),
            seq: or(SEQ, &self.seq, 0),
            parties: or(PARTIES, &self.parties, 0),
        })
    }

    /// Column `c`'s values, `v`, when they are this batch's (else none: the vectors
    /// keep an earlier batch's values, so that their memory is reused).
    #[inline]
    fn col<'a, T>(&self, c: usize, v: &'a [T]) -> &'a [T] {
        if self.decoded.has(c) {
            v
        } else {
            &[]
        }
    }

    /// The columns a replay reads at every row, as slices of one length (empty in a
    /// batch read for its markers).
    #[inline]
    pub fn runs(&self) -> Runs<'_> {
        Runs {
            kind: self.col(KIND, &self.kind),
            instructions: self.col(INSTRUCTIONS, &self.instructions),
            page: self.col(PAGE, &self.page),
            offset: self.col(OFFSET, &self.off),
            span: self.col(SPAN, &self.span),
            count: self.col(COUNT, &self.count),
        }
    }

    /// Row `i`'s thread (for a page row, the thread that touched the page first); 0 in
    /// a batch read for a replay.
    pub fn thread(&self, i: usize) -> u32 {
        self.col(THREAD, &self.thread).get(i).copied().unwrap_or(0)
    }

    /// Whether the marker fields (object, seq, parties) hold this batch's values.
    pub fn has_marker_fields(&self) -> bool {
        self.decoded.has(OBJECT)
    }

    /// Takes in the batch read into `raw` (`meta_len` bytes of message, then the body):
    /// checks its message against the index's `rows` and locates every column's buffer.
    fn locate(&mut self, rows: u32) -> Result<(), String> {
        let meta_len = self.meta_len;
        let bytes = &self.raw;
        // The message: a continuation marker and a length, then the flatbuffer.
        if meta_len < 8 || bytes.len() < meta_len {
            return Err("a message header shorter than its prefix".into());
        }
        let message = arrow_ipc::root_as_message(&bytes[8..meta_len])
            .map_err(|e| format!("the message does not decode: {e}"))?;
        let batch = message
            .header_as_record_batch()
            .ok_or("the message is not a record batch")?;
        if batch.length() != rows as i64 {
            return Err(format!(
                "{} rows where the index says {rows}",
                batch.length()
            ));
        }
        let nodes = batch.nodes().ok_or("the message lists no columns")?;
        if nodes.len() != COLUMNS {
            return Err(format!("{} columns, not {COLUMNS}", nodes.len()));
        }
        for n in nodes.iter() {
            if n.length() != rows as i64 {
                return Err(format!(
                    "a column of {} rows in a batch of {rows}",
                    n.length()
                ));
            }
            if n.null_count() != 0 {
                return Err("a column holds nulls".into());
            }
        }
        let compression = batch.compression();
        self.compressed = match compression.map(|c| c.codec()) {
            None => false,
            Some(arrow_ipc::CompressionType::ZSTD) => true,
            Some(c) => {
                return Err(format!(
                    "buffers compressed with {c:?}; a trace's are compressed with zstd"
                ))
            }
        };
        let body = bytes.len() - meta_len;
        let buffers = batch.buffers().ok_or("the message lists no buffers")?;
        // A primitive column has two buffers: its validity bitmap (empty: no nulls)
        // and its values.
        if buffers.len() != 2 * COLUMNS {
            return Err(format!(
                "{} buffers, not the {} of {COLUMNS} columns",
                buffers.len(),
                2 * COLUMNS
            ));
        }
        for (i, b) in buffers.iter().enumerate() {
            let (off, len) = (b.offset(), b.length());
            if off < 0 || len < 0 || (off as u64).saturating_add(len as u64) > body as u64 {
                return Err(format!(
                    "a buffer at {off} of {len} bytes lies outside the batch"
                ));
            }
            if i % 2 == 1 {
                self.buffers[i / 2] = (off as usize, len as usize);
            }
        }
        self.rows = rows as usize;
        Ok(())
    }

    /// Decodes the columns of `cols` not decoded yet.
    fn decode(&mut self, cols: Columns) -> Result<(), String> {
        let want = cols.0 & !self.decoded.0;
        let Batch {
            rows,
            thread,
            kind,
            instructions,
            page,
            off,
            span,
            count,
            object,
            seq,
            parties,
            raw,
            meta_len,
            compressed,
            buffers,
            scratch,
            zstd,
            ..
        } = self;
        let mut src = Body {
            body: &raw[*meta_len..],
            rows: *rows,
            compressed: *compressed,
            scratch,
            zstd,
        };
        for c in (0..COLUMNS).filter(|&c| want & (1 << c) != 0) {
            let b = buffers[c];
            match c {
                THREAD => src.fill(thread, b),
                KIND => src.fill(kind, b),
                INSTRUCTIONS => src.fill(instructions, b),
                PAGE => src.fill(page, b),
                OFFSET => src.fill(off, b),
                SPAN => src.fill(span, b),
                COUNT => src.fill(count, b),
                OBJECT => src.fill(object, b),
                SEQ => src.fill(seq, b),
                _ => src.fill(parties, b),
            }
            .map_err(|e| format!("column {}: {e}", format::fields()[c].name()))?;
        }
        self.decoded.0 |= want;
        Ok(())
    }
}

/// A value type of a column: stored little-endian.
trait Value: bytemuck::Pod + Default {
    /// The value stored little-endian as `self`, in the host's order.
    fn le_to_host(self) -> Self;
}

macro_rules! value {
    ($($t:ty),*) => {$(
        impl Value for $t {
            #[inline]
            fn le_to_host(self) -> Self {
                <$t>::from_le(self)
            }
        }
    )*};
}
value!(u8, u32, u64);

/// Where a batch's columns are decoded from.
struct Body<'a> {
    body: &'a [u8],
    rows: usize,
    compressed: bool,
    scratch: &'a mut Vec<u8>,
    zstd: &'a mut Option<zstd::bulk::Decompressor<'static>>,
}

impl Body<'_> {
    /// Decodes the values buffer at `(off, len)` of the body into `out` (`rows` values).
    fn fill<T: Value>(
        &mut self,
        out: &mut Vec<T>,
        (off, len): (usize, usize),
    ) -> Result<(), String> {
        let rows = self.rows;
        let need = rows * std::mem::size_of::<T>();
        // Every value is written below, so a vector kept from an earlier batch is only
        // cut to length or grown (zero-filling just what it gains).
        if out.len() < rows {
            out.resize(rows, T::default());
        } else {
            out.truncate(rows);
        }
        if rows == 0 {
            return Ok(());
        }
        let dst: &mut [u8] = bytemuck::cast_slice_mut(out.as_mut_slice());
        let buf = &self.body[off..off + len];
        let short = |have: usize| format!("{have} bytes where {rows} rows need {need}");
        if !self.compressed {
            dst.copy_from_slice(buf.get(..need).ok_or_else(|| short(len))?);
        } else {
            // A compressed buffer is its uncompressed length (8 bytes, little-endian; -1:
            // stored as it is), then the zstd frame.
            let (prefix, data) = buf.split_first_chunk::<8>().ok_or_else(|| short(len))?;
            let declared = i64::from_le_bytes(*prefix);
            if declared == -1 {
                dst.copy_from_slice(data.get(..need).ok_or_else(|| short(data.len()))?);
            } else if declared == need as i64 {
                let got = decompressor(self.zstd)?
                    .decompress_to_buffer(data, dst)
                    .map_err(|e| format!("zstd: {e}"))?;
                if got != need {
                    return Err(format!("decompressed to {}", short(got)));
                }
            } else if declared > need as i64 && declared as u64 <= rows as u64 * 8 + 64 {
                // Longer than the rows need (a writer may pad; but no more than eight
                // bytes a row, so a corrupt length cannot make the reader allocate beyond
                // what a batch can need).
                self.scratch.clear();
                self.scratch.resize(declared as usize, 0);
                let got = decompressor(self.zstd)?
                    .decompress_to_buffer(data, self.scratch.as_mut_slice())
                    .map_err(|e| format!("zstd: {e}"))?;
                dst.copy_from_slice(
                    self.scratch[..got]
                        .get(..need)
                        .ok_or_else(|| format!("decompressed to {}", short(got)))?,
                );
            } else {
                return Err(format!(
                    "a buffer says it decompresses to {}",
                    short(declared.max(0) as usize)
                ));
            }
        }
        if cfg!(target_endian = "big") {
            for x in out.iter_mut() {
                *x = x.le_to_host();
            }
        }
        Ok(())
    }
}

/// The batch's zstd decompressor, made at its first use.
fn decompressor<'a>(
    z: &'a mut Option<zstd::bulk::Decompressor<'static>>,
) -> Result<&'a mut zstd::bulk::Decompressor<'static>, String> {
    if z.is_none() {
        *z = Some(zstd::bulk::Decompressor::new().map_err(|e| format!("zstd: {e}"))?);
    }
    Ok(z.as_mut().expect("made above"))
}

impl TraceReader<File> {
    /// Opens `path` and reads its footer, header and index; refuses a file that is not a
    /// complete trace of this format.
    pub fn open(path: &Path) -> Result<TraceReader<File>, TraceError> {
        let file = File::open(path).map_err(|e| TraceError::io(path, e))?;
        TraceReader::from_source(file, path)
    }
}

impl<R: Source> TraceReader<R> {
    /// Reads a trace from `file` (`path` names it in errors).
    pub fn from_source(mut file: R, path: &Path) -> Result<TraceReader<R>, TraceError> {
        let len = file
            .seek(SeekFrom::End(0))
            .map_err(|e| TraceError::io(path, e))?;
        let bad = |offset: u64, what: String| TraceError::corrupt(path, offset, what);
        if len < 16 {
            return Err(bad(
                0,
                format!("{len} bytes: too short for a trace (an Arrow IPC file with its footer)"),
            ));
        }
        let mut head = [0u8; 6];
        // (Reads below check their range against `len`.)
        read_at(&mut file, path, 0, &mut head)?;
        if &head != b"ARROW1" {
            return Err(bad(0, "not a trace: no Arrow IPC file magic".into()));
        }
        let mut tail = [0u8; 10];
        read_at(&mut file, path, len - 10, &mut tail)?;
        let footer_len = arrow_ipc::reader::read_footer_length(tail).map_err(|_| {
            bad(
                len - 10,
                "truncated: the file does not end with a trace's footer (was the recording stopped?)"
                    .into(),
            )
        })? as u64;
        if footer_len + 10 + 8 > len {
            return Err(bad(
                len - 10,
                format!("a footer of {footer_len} bytes does not fit in the file's {len}"),
            ));
        }
        let footer_start = len - 10 - footer_len;
        let mut footer_bytes = vec![0u8; footer_len as usize];
        read_at(&mut file, path, footer_start, &mut footer_bytes)?;
        let footer = arrow_ipc::root_as_footer(&footer_bytes)
            .map_err(|e| bad(footer_start, format!("the footer does not decode: {e}")))?;
        let fb_schema = footer
            .schema()
            .ok_or_else(|| bad(footer_start, "the footer holds no schema".into()))?;
        if fb_schema.endianness() != arrow_ipc::Endianness::Little {
            return Err(bad(
                footer_start,
                "a big-endian file: a trace's columns are little-endian".into(),
            ));
        }
        let schema = arrow_ipc::convert::try_fb_to_schema(fb_schema)
            .map_err(|e| bad(footer_start, format!("the footer's schema: {e}")))?;
        if schema.fields().len() != format::fields().len()
            || schema
                .fields()
                .iter()
                .zip(format::fields())
                .any(|(a, b)| a.name() != b.name() || a.data_type() != b.data_type())
        {
            return Err(bad(
                footer_start,
                "the columns are not a numaplace trace's (thread, kind, instructions, page, offset, span, count, object, seq, parties)".into(),
            ));
        }
        let meta = schema.metadata();
        match meta.get(format::VERSION_KEY) {
            Some(v) if v == format::VERSION => {}
            Some(v) => {
                return Err(bad(
                    footer_start,
                    format!(
                        "trace format version {v}; this numaplace reads version {}",
                        format::VERSION
                    ),
                ))
            }
            None => {
                return Err(bad(
                    footer_start,
                    "not a numaplace trace: no format version".into(),
                ))
            }
        }
        let header: Header = meta
            .get(format::HEADER_KEY)
            .ok_or_else(|| bad(footer_start, "no header in the schema metadata".into()))
            .and_then(|h| {
                serde_json::from_str(h).map_err(|e| bad(footer_start, format!("the header: {e}")))
            })?;
        if !header.page_size.is_power_of_two() || !(64..=1 << 30).contains(&header.page_size) {
            return Err(bad(
                footer_start,
                format!(
                    "page size {} is not a power of two from 64 to 2^30",
                    header.page_size
                ),
            ));
        }
        let index: Index = footer
            .custom_metadata()
            .into_iter()
            .flatten()
            .find(|kv| kv.key() == Some(format::INDEX_KEY))
            .and_then(|kv| kv.value())
            .ok_or_else(|| bad(footer_start, "no index in the footer".into()))
            .and_then(|s| {
                serde_json::from_str(s).map_err(|e| bad(footer_start, format!("the index: {e}")))
            })?;
        let blocks: Vec<Block> = footer
            .recordBatches()
            .map(|b| b.iter().copied().collect())
            .unwrap_or_default();
        if blocks.len() != index.batches.len() {
            return Err(bad(
                footer_start,
                format!(
                    "the footer lists {} batches, the index {}",
                    blocks.len(),
                    index.batches.len()
                ),
            ));
        }
        if index.threads > numaplace_core::estimate::MAX_THREADS {
            return Err(bad(
                footer_start,
                format!("{} threads: more than numaplace runs", index.threads),
            ));
        }
        if index.totals.len() != index.threads as usize {
            return Err(bad(
                footer_start,
                format!(
                    "totals for {} threads, not {}",
                    index.totals.len(),
                    index.threads
                ),
            ));
        }
        let mut per_thread = vec![Vec::new(); index.threads as usize];
        let mut page_batches = Vec::new();
        let mut page_rows = 0u64;
        for (i, (b, &(thread, rows))) in blocks.iter().zip(&index.batches).enumerate() {
            let start = b.offset() as u64;
            let end = (b.offset() as u64)
                .checked_add(b.metaDataLength() as u64)
                .and_then(|x| x.checked_add(b.bodyLength() as u64));
            if b.offset() < 8 || b.metaDataLength() <= 0 || end.is_none_or(|e| e > footer_start) {
                return Err(bad(
                    footer_start,
                    format!("batch {i} at byte offset {start} runs past the footer"),
                ));
            }
            if rows > MAX_BATCH_ROWS {
                return Err(bad(
                    footer_start,
                    format!("batch {i} has {rows} rows; a trace's batches hold at most {MAX_BATCH_ROWS}"),
                ));
            }
            if thread == PAGE_BATCH {
                page_batches.push(i as u32);
                page_rows += rows as u64;
            } else if (0..index.threads as i64).contains(&thread) {
                per_thread[thread as usize].push(i as u32);
            } else {
                return Err(bad(
                    footer_start,
                    format!(
                        "batch {i} belongs to thread {thread}, beyond the {} threads",
                        index.threads
                    ),
                ));
            }
        }
        if page_rows != index.pages as u64 {
            return Err(bad(
                footer_start,
                format!("{page_rows} page rows for {} pages", index.pages),
            ));
        }
        Ok(TraceReader::<R> {
            path: path.to_path_buf(),
            file,
            blocks,
            header,
            index,
            per_thread,
            page_batches,
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What was recorded.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The footer's index: threads, pages, batches, totals, notes.
    pub fn index(&self) -> &Index {
        &self.index
    }

    /// Thread `t`'s batches, in its order.
    pub fn batches_of(&self, t: u32) -> &[u32] {
        &self.per_thread[t as usize]
    }

    /// Reads and checks batch `number`: every row within what its kind allows.
    pub fn read_batch(&mut self, number: u32) -> Result<Batch, TraceError> {
        let mut b = Batch::default();
        self.read_into(number, ALL, &mut b)?;
        self.check_rows(&b, true)?;
        Ok(b)
    }

    /// Reads batch `number` into `into` for a replay that has checked its markers
    /// already: the run columns (kind, instructions, page, offset, span, count), sizes
    /// checked, rows not (a replay checks what it indexes by as it goes). The marker
    /// fields are decoded when the replay meets a marker
    /// ([`TraceReader::decode_marker_fields`]).
    pub fn read_runs_into(&mut self, number: u32, into: &mut Batch) -> Result<(), TraceError> {
        self.read_into(number, RUNS, into)
    }

    /// Decodes the marker fields (object, seq, parties) of a batch read by
    /// [`TraceReader::read_runs_into`].
    pub fn decode_marker_fields(&self, b: &mut Batch) -> Result<(), TraceError> {
        b.decode(MARKER_FIELDS).map_err(|what| {
            TraceError::corrupt(&self.path, b.offset, format!("batch {}: {what}", b.number))
        })
    }

    /// Reads batch `number`'s synchronisation columns into `into` and checks them
    /// (`thread`, `kind`, `object`, `seq`, `parties`; a run's page, offset, span and
    /// count read as 0, 0, 0, 1 and are not checked, nor are they decompressed): what a
    /// replay checks before it starts.
    pub fn read_markers_into(&mut self, number: u32, into: &mut Batch) -> Result<(), TraceError> {
        self.read_into(number, MARKERS, into)?;
        self.check_rows(into, false)
    }

    fn read_into(&mut self, number: u32, cols: Columns, b: &mut Batch) -> Result<(), TraceError> {
        let block = self.blocks[number as usize];
        let offset = block.offset() as u64;
        let len = block.metaDataLength() as u64 + block.bodyLength() as u64;
        // Nothing of an earlier batch is this one's, even if the read fails.
        (b.decoded, b.rows) = (Columns::default(), 0);
        b.number = number;
        b.offset = offset;
        b.meta_len = block.metaDataLength() as usize;
        b.raw.clear();
        b.raw.resize(len as usize, 0);
        read_at(&mut self.file, &self.path, offset, &mut b.raw)?;
        let (_, rows) = self.index.batches[number as usize];
        b.locate(rows)
            .and_then(|()| b.decode(cols))
            .map_err(|what| {
                TraceError::corrupt(&self.path, offset, format!("batch {number}: {what}"))
            })
    }

    /// Checks a batch's rows: every row within what its kind allows (with `runs`, a run's
    /// fields too).
    fn check_rows(&self, b: &Batch, runs: bool) -> Result<(), TraceError> {
        let (thread, _) = self.index.batches[b.number as usize];
        self.check(b, thread, runs).map_err(|(row, what)| {
            TraceError::corrupt(
                &self.path,
                b.offset,
                format!("batch {}: row {row}: {what}", b.number),
            )
        })
    }

    /// Every row's values within what its kind allows.
    fn check(&self, b: &Batch, thread: i64, runs: bool) -> Result<(), (usize, String)> {
        let ps = self.header.page_size;
        let threads = self.index.threads;
        for i in 0..b.len() {
            let k = b.kinds()[i];
            let Some(kind) = Kind::from_u8(k) else {
                return Err((i, format!("kind {k} is not a trace's")));
            };
            let t = b.thread(i);
            if thread == PAGE_BATCH {
                if kind != Kind::Page {
                    return Err((i, format!("a {} row among the page rows", kind.name())));
                }
                if t >= threads {
                    return Err((
                        i,
                        format!("page first touched by thread {t}, beyond the {threads}"),
                    ));
                }
                continue;
            }
            if t as i64 != thread {
                return Err((i, format!("thread {t} in a batch of thread {thread}")));
            }
            if !runs && matches!(kind, Kind::Read | Kind::Write) {
                continue;
            }
            let r = b.row(i);
            match kind {
                Kind::Read | Kind::Write => {
                    if r.page >= self.index.pages {
                        return Err((
                            i,
                            format!(
                                "page {} beyond the trace's {} pages",
                                r.page, self.index.pages
                            ),
                        ));
                    }
                    if r.count == 0 {
                        return Err((i, "a run of no references".into()));
                    }
                    if r.offset as u64 + r.span as u64 > ps {
                        return Err((
                            i,
                            format!(
                                "offset {} + span {} pass the page size {ps}",
                                r.offset, r.span
                            ),
                        ));
                    }
                }
                Kind::Create | Kind::Start | Kind::Join if r.object >= threads as u64 => {
                    return Err((
                        i,
                        format!(
                            "{} names thread {}, beyond the {threads}",
                            kind.name(),
                            r.object
                        ),
                    ));
                }
                Kind::Barrier if r.parties == 0 => {
                    return Err((i, "a barrier of no parties".into()));
                }
                Kind::Fork | Kind::Enter if r.parties == 0 || r.seq >= r.parties => {
                    return Err((i, format!("member {} of a team of {}", r.seq, r.parties)));
                }
                Kind::Page => return Err((i, "a page row in a thread's batch".into())),
                _ => {}
            }
        }
        Ok(())
    }

    /// The page table: each page's virtual address, by index.
    pub fn page_table(&mut self) -> Result<Vec<u64>, TraceError> {
        Ok(self.pages()?.into_iter().map(|(a, _)| a).collect())
    }

    /// The page table with each page's first toucher: (virtual address, the thread that
    /// touched it first), by index.
    pub fn pages(&mut self) -> Result<Vec<(u64, u32)>, TraceError> {
        let mut table = Vec::with_capacity(self.index.pages as usize);
        for b in self.page_batches.clone() {
            let batch = self.read_batch(b)?;
            for i in 0..batch.len() {
                let r = batch.row(i);
                if r.page as usize != table.len() {
                    return Err(TraceError::corrupt(
                        &self.path,
                        batch.offset,
                        format!(
                            "batch {b}: row {i}: page {} where page {} comes next",
                            r.page,
                            table.len()
                        ),
                    ));
                }
                table.push((r.object, batch.thread(i)));
            }
        }
        Ok(table)
    }
}

fn read_at<R: Source>(
    file: &mut R,
    path: &Path,
    offset: u64,
    buf: &mut [u8],
) -> Result<(), TraceError> {
    file.seek(SeekFrom::Start(offset))
        .and_then(|_| file.read_exact(buf))
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::UnexpectedEof => TraceError::corrupt(
                path,
                offset,
                format!("truncated: {} bytes expected here", buf.len()),
            ),
            _ => TraceError::io(path, e),
        })
}
