//! Reading a trace: the footer at open, then any thread's batches on demand, so replaying
//! holds one decoded batch per thread whatever the trace's length.

use crate::error::TraceError;
use crate::format::{self, Header, Index, Kind, Row, PAGE_BATCH};
use arrow_array::cast::AsArray;
use arrow_array::types::{UInt32Type, UInt64Type, UInt8Type};
use arrow_array::{PrimitiveArray, RecordBatch};
use arrow_buffer::Buffer;
use arrow_ipc::reader::FileDecoder;
use arrow_ipc::Block;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Most rows a batch may hold (the writer makes [`format::BATCH_ROWS`]); a larger count
/// is refused before anything is decoded.
pub const MAX_BATCH_ROWS: u32 = 1 << 20;

/// Anything a trace can be read from.
pub trait Source: Read + Seek {}
impl<T: Read + Seek> Source for T {}

/// How a batch is read.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Checked,
    Unchecked,
    Markers,
}

/// The columns [`TraceReader::read_markers`] decodes: thread, kind, object, seq, parties.
const MARKER_COLUMNS: [usize; 5] = [0, 1, 7, 8, 9];

/// An open trace: its header, index and the byte range of every batch.
pub struct TraceReader<R: Source = File> {
    path: PathBuf,
    file: R,
    decoder: FileDecoder,
    markers: FileDecoder,
    blocks: Vec<Block>,
    header: Header,
    index: Index,
    per_thread: Vec<Vec<u32>>,
    page_batches: Vec<u32>,
}

/// One decoded batch: rows of one thread (or of the page table), checked.
pub struct Batch {
    /// Its number in the file.
    pub number: u32,
    /// The byte offset it starts at.
    pub offset: u64,
    kind: PrimitiveArray<UInt8Type>,
    instructions: PrimitiveArray<UInt64Type>,
    page: PrimitiveArray<UInt32Type>,
    off: PrimitiveArray<UInt32Type>,
    span: PrimitiveArray<UInt32Type>,
    count: PrimitiveArray<UInt32Type>,
    object: PrimitiveArray<UInt64Type>,
    seq: PrimitiveArray<UInt32Type>,
    parties: PrimitiveArray<UInt32Type>,
    thread: PrimitiveArray<UInt32Type>,
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
        self.kind.len()
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
        self.kind.values()
    }

    /// Row `i`, or `None` if its kind is not a trace's (an unchecked batch). A batch
    /// read for its markers ([`TraceReader::read_markers`]) has no run columns: a run's
    /// instructions, page, offset and span read as 0 and its count as 1.
    #[inline]
    pub fn try_row(&self, i: usize) -> Option<Row> {
        let or = |a: &PrimitiveArray<UInt32Type>, d: u32| a.values().get(i).copied().unwrap_or(d);
        Some(Row {
            instructions: self.instructions.values().get(i).copied().unwrap_or(0),
            kind: Kind::from_u8(self.kind.values()[i])?,
            page: or(&self.page, 0),
            offset: or(&self.off, 0),
            span: or(&self.span, 0),
            count: or(&self.count, 1),
            object: self.object.values()[i],
            seq: self.seq.values()[i],
            parties: self.parties.values()[i],
        })
    }

    /// The columns a replay reads at every row, as slices of one length (empty in a
    /// batch read for its markers).
    #[inline]
    pub fn runs(&self) -> Runs<'_> {
        Runs {
            kind: self.kind.values(),
            instructions: self.instructions.values(),
            page: self.page.values(),
            offset: self.off.values(),
            span: self.span.values(),
            count: self.count.values(),
        }
    }

    /// Row `i`'s thread (for a page row, the thread that touched the page first).
    pub fn thread(&self, i: usize) -> u32 {
        self.thread.values()[i]
    }
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
        let schema = Arc::new(schema);
        let decoder = FileDecoder::new(schema.clone(), footer.version());
        let markers =
            FileDecoder::new(schema, footer.version()).with_projection(MARKER_COLUMNS.to_vec());
        Ok(TraceReader::<R> {
            path: path.to_path_buf(),
            file,
            decoder,
            markers,
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
        self.read(number, Mode::Checked)
    }

    /// Reads batch `number` for a replay that has checked it already (its sizes are
    /// checked again, its rows not): a replay's reader guards what it indexes by.
    pub fn read_batch_unchecked(&mut self, number: u32) -> Result<Batch, TraceError> {
        self.read(number, Mode::Unchecked)
    }

    /// Reads and checks batch `number`'s synchronisation columns only (`thread`, `kind`,
    /// `object`, `seq`, `parties`; a run's page, offset, span and count read as 0, 0, 0,
    /// 1 and are not checked, nor are they decompressed): what a replay checks before it
    /// starts.
    pub fn read_markers(&mut self, number: u32) -> Result<Batch, TraceError> {
        self.read(number, Mode::Markers)
    }

    fn read(&mut self, number: u32, how: Mode) -> Result<Batch, TraceError> {
        let block = self.blocks[number as usize];
        let offset = block.offset() as u64;
        let len = block.metaDataLength() as u64 + block.bodyLength() as u64;
        let mut bytes = vec![0u8; len as usize];
        read_at(&mut self.file, &self.path, offset, &mut bytes)?;
        let path = self.path.clone();
        let bad =
            |what: String| TraceError::corrupt(&path, offset, format!("batch {number}: {what}"));
        let (thread, rows) = self.index.batches[number as usize];
        check_sizes(&bytes, block.metaDataLength() as usize, rows).map_err(&bad)?;
        let buf = Buffer::from_vec(bytes);
        let decoder = match how {
            Mode::Markers => &self.markers,
            _ => &self.decoder,
        };
        let batch: RecordBatch = decoder
            .read_record_batch(&block, &buf)
            .map_err(|e| bad(e.to_string()))?
            .ok_or_else(|| bad("not a record batch".into()))?;
        if batch.num_rows() != rows as usize {
            return Err(bad(format!(
                "{} rows where the index says {rows}",
                batch.num_rows()
            )));
        }
        if batch.columns().iter().any(|a| a.null_count() > 0) {
            return Err(bad("a column holds nulls".into()));
        }
        let c = |i: usize| batch.column(i);
        let out = if how == Mode::Markers {
            Batch {
                number,
                offset,
                thread: c(0).as_primitive::<UInt32Type>().clone(),
                kind: c(1).as_primitive::<UInt8Type>().clone(),
                instructions: PrimitiveArray::from(Vec::<u64>::new()),
                page: PrimitiveArray::from(Vec::<u32>::new()),
                off: PrimitiveArray::from(Vec::<u32>::new()),
                span: PrimitiveArray::from(Vec::<u32>::new()),
                count: PrimitiveArray::from(Vec::<u32>::new()),
                object: c(2).as_primitive::<UInt64Type>().clone(),
                seq: c(3).as_primitive::<UInt32Type>().clone(),
                parties: c(4).as_primitive::<UInt32Type>().clone(),
            }
        } else {
            Batch {
                number,
                offset,
                thread: c(0).as_primitive::<UInt32Type>().clone(),
                kind: c(1).as_primitive::<UInt8Type>().clone(),
                instructions: c(2).as_primitive::<UInt64Type>().clone(),
                page: c(3).as_primitive::<UInt32Type>().clone(),
                off: c(4).as_primitive::<UInt32Type>().clone(),
                span: c(5).as_primitive::<UInt32Type>().clone(),
                count: c(6).as_primitive::<UInt32Type>().clone(),
                object: c(7).as_primitive::<UInt64Type>().clone(),
                seq: c(8).as_primitive::<UInt32Type>().clone(),
                parties: c(9).as_primitive::<UInt32Type>().clone(),
            }
        };
        if how != Mode::Unchecked {
            self.check(&out, thread, how == Mode::Checked)
                .map_err(|(row, what)| bad(format!("row {row}: {what}")))?;
        }
        Ok(out)
    }

    /// Every row's values within what its kind allows.
    fn check(&self, b: &Batch, thread: i64, runs: bool) -> Result<(), (usize, String)> {
        let ps = self.header.page_size;
        let threads = self.index.threads;
        for i in 0..b.len() {
            let k = b.kind.values()[i];
            let Some(kind) = Kind::from_u8(k) else {
                return Err((i, format!("kind {k} is not a trace's")));
            };
            let t = b.thread.values()[i];
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

/// Before arrow decodes a batch: its message is a record batch of `rows` rows, and no
/// buffer, compressed or not, holds more than eight bytes a row (so corrupt lengths cannot
/// make the decoder allocate beyond what the batch can need).
fn check_sizes(bytes: &[u8], meta_len: usize, rows: u32) -> Result<(), String> {
    // The message: a continuation marker and a length, then the flatbuffer.
    if meta_len < 8 || bytes.len() < meta_len {
        return Err("a message header shorter than its prefix".into());
    }
    let fb = &bytes[8..meta_len];
    let message =
        arrow_ipc::root_as_message(fb).map_err(|e| format!("the message does not decode: {e}"))?;
    let batch = message
        .header_as_record_batch()
        .ok_or("the message is not a record batch")?;
    if batch.length() != rows as i64 {
        return Err(format!(
            "{} rows where the index says {rows}",
            batch.length()
        ));
    }
    let body = &bytes[meta_len..];
    let most = rows as u64 * 8 + 64;
    let compressed = batch.compression().is_some();
    for b in batch.buffers().into_iter().flatten() {
        let (off, len) = (b.offset(), b.length());
        if off < 0 || len < 0 || (off as u64).saturating_add(len as u64) > body.len() as u64 {
            return Err(format!(
                "a buffer at {off} of {len} bytes lies outside the batch"
            ));
        }
        if compressed && len >= 8 {
            let at = off as usize;
            let raw = i64::from_le_bytes(body[at..at + 8].try_into().expect("8 bytes"));
            if raw > most as i64 {
                return Err(format!(
                    "a buffer says it decompresses to {raw} bytes, more than {rows} rows hold"
                ));
            }
        } else if !compressed && len as u64 > most {
            return Err(format!(
                "a buffer of {len} bytes, more than {rows} rows hold"
            ));
        }
    }
    Ok(())
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
