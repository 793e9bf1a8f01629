//! Writing a trace: events per thread in, an Arrow IPC file out, streamed (memory grows
//! with threads and pages, not with the trace's length).

use crate::error::TraceError;
use crate::format::{self, Event, Header, Index, Kind, ThreadTotals, BATCH_ROWS, PAGE_BATCH};
use arrow_array::{ArrayRef, RecordBatch, UInt32Array, UInt64Array, UInt8Array};
use arrow_ipc::writer::{FileWriter, IpcWriteOptions};
use arrow_ipc::CompressionType;
use arrow_schema::SchemaRef;
use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Pages remembered by their fold page number's low bits, so the page of a run on one of
/// a thread's recent pages is found without hashing.
const RECENT: usize = 4096;

/// Rows of one thread waiting to become a batch (or of the page table).
#[derive(Default)]
struct Rows {
    kind: Vec<u8>,
    instructions: Vec<u64>,
    page: Vec<u32>,
    offset: Vec<u32>,
    span: Vec<u32>,
    count: Vec<u32>,
    object: Vec<u64>,
    seq: Vec<u32>,
    parties: Vec<u32>,
}

impl Rows {
    #[allow(clippy::too_many_arguments)]
    fn push(
        &mut self,
        kind: Kind,
        instructions: u64,
        page: u32,
        offset: u32,
        span: u32,
        count: u32,
        object: u64,
        seq: u32,
        parties: u32,
    ) {
        self.kind.push(kind as u8);
        self.instructions.push(instructions);
        self.page.push(page);
        self.offset.push(offset);
        self.span.push(span);
        self.count.push(count);
        self.object.push(object);
        self.seq.push(seq);
        self.parties.push(parties);
    }

    fn len(&self) -> usize {
        self.kind.len()
    }

    /// Buffers for a whole batch, so filling one never reallocates.
    fn reserve(&mut self) {
        self.kind.reserve(BATCH_ROWS);
        self.instructions.reserve(BATCH_ROWS);
        self.page.reserve(BATCH_ROWS);
        self.offset.reserve(BATCH_ROWS);
        self.span.reserve(BATCH_ROWS);
        self.count.reserve(BATCH_ROWS);
        self.object.reserve(BATCH_ROWS);
        self.seq.reserve(BATCH_ROWS);
        self.parties.reserve(BATCH_ROWS);
    }

    /// The rows as a batch of `schema`, leaving the buffers empty for the next.
    fn take(&mut self, schema: &SchemaRef, thread: u32) -> RecordBatch {
        let n = self.len();
        let cols: Vec<ArrayRef> = vec![
            Arc::new(UInt32Array::from(vec![thread; n])),
            Arc::new(UInt8Array::from(std::mem::take(&mut self.kind))),
            Arc::new(UInt64Array::from(std::mem::take(&mut self.instructions))),
            Arc::new(UInt32Array::from(std::mem::take(&mut self.page))),
            Arc::new(UInt32Array::from(std::mem::take(&mut self.offset))),
            Arc::new(UInt32Array::from(std::mem::take(&mut self.span))),
            Arc::new(UInt32Array::from(std::mem::take(&mut self.count))),
            Arc::new(UInt64Array::from(std::mem::take(&mut self.object))),
            Arc::new(UInt32Array::from(std::mem::take(&mut self.seq))),
            Arc::new(UInt32Array::from(std::mem::take(&mut self.parties))),
        ];
        RecordBatch::try_new(schema.clone(), cols).expect("columns match the schema")
    }
}

/// A trace being written. Events of each thread are given in the thread's order; threads
/// may interleave in any way. [`TraceWriter::finish`] writes the page table and the footer:
/// a trace not finished is truncated, and readers refuse it.
pub struct TraceWriter<W: Write> {
    path: PathBuf,
    out: Sink<W>,
    schema: SchemaRef,
    shift: u32,
    threads: Vec<Rows>,
    totals: Vec<ThreadTotals>,
    /// Fold page number -> index in the page table (first touch order).
    pages: HashMap<u64, u32>,
    /// Recently used entries of `pages`, by the fold page number's low bits.
    recent: Vec<(u64, u32)>,
    /// The page table: each page's fold page number and the thread that touched it first.
    table: Vec<(u64, u32)>,
    index: Index,
}

impl TraceWriter<std::io::BufWriter<std::fs::File>> {
    /// Creates the file `path` for a trace of `header`.
    pub fn create(path: &Path, header: &Header) -> Result<Self, TraceError> {
        let file = std::fs::File::create(path).map_err(|e| TraceError::io(path, e))?;
        TraceWriter::new(std::io::BufWriter::new(file), path, header)
    }
}

impl<W: Write + Send + 'static> TraceWriter<W> {
    /// A trace of `header` written to `out` by a thread of its own, which encodes and
    /// compresses each batch while this one fills the next (recording is bound by the
    /// writing otherwise). The bytes are those [`TraceWriter::new`] writes.
    pub fn new_threaded(out: W, path: &Path, header: &Header) -> Result<Self, TraceError> {
        let mut w = TraceWriter::new(out, path, header)?;
        let Sink::Here(file) = std::mem::replace(&mut w.out, Sink::Gone) else {
            unreachable!("a new writer writes here")
        };
        // A few batches in flight bound the memory.
        let (tx, rx) = std::sync::mpsc::sync_channel::<RecordBatch>(4);
        let done = std::thread::spawn(move || {
            let mut file = *file;
            for batch in rx {
                file.write(&batch)?;
            }
            Ok(file)
        });
        w.out = Sink::Thread { tx, done };
        Ok(w)
    }
}

impl<W: Write> TraceWriter<W> {
    /// A trace of `header` written to `out` (`path` names it in errors).
    pub fn new(out: W, path: &Path, header: &Header) -> Result<Self, TraceError> {
        if !header.page_size.is_power_of_two() || !(64..=1 << 30).contains(&header.page_size) {
            return Err(TraceError::Invalid(format!(
                "a trace's page size must be a power of two from 64 bytes to 1 GiB, not {}",
                header.page_size
            )));
        }
        let schema = format::schema(header);
        let options = IpcWriteOptions::default()
            .try_with_compression(Some(CompressionType::ZSTD))
            .map_err(|e| TraceError::Invalid(e.to_string()))?;
        let out = Sink::Here(Box::new(
            FileWriter::try_new_with_options(out, &schema, options)
                .map_err(|e| arrow_error(path, e))?,
        ));
        Ok(TraceWriter {
            path: path.to_path_buf(),
            out,
            schema,
            shift: header.page_size.trailing_zeros(),
            threads: Vec::new(),
            totals: Vec::new(),
            pages: HashMap::new(),
            recent: vec![(u64::MAX, 0); RECENT],
            table: Vec::new(),
            index: Index::default(),
        })
    }

    /// Appends `event` to thread `thread`'s stream, `instructions` after its previous
    /// event began.
    pub fn push(&mut self, thread: u32, instructions: u64, event: Event) -> Result<(), TraceError> {
        let t = thread as usize;
        if t >= self.threads.len() {
            if thread >= numaplace_core::estimate::MAX_THREADS {
                return Err(TraceError::Invalid(format!(
                    "thread {thread}: a trace holds at most {} threads",
                    numaplace_core::estimate::MAX_THREADS
                )));
            }
            self.threads.resize_with(t + 1, || {
                let mut r = Rows::default();
                r.reserve();
                r
            });
            self.totals.resize_with(t + 1, ThreadTotals::default);
        }
        let tot = &mut self.totals[t];
        tot.events += 1;
        tot.instructions = tot.instructions.saturating_add(instructions);
        let kind = event.kind();
        let (mut page, mut offset, mut span, mut count) = (0, 0, 0, 0);
        let (mut object, mut seq, mut parties) = (0u64, 0u32, 0u32);
        match event {
            Event::Run {
                write,
                address,
                count: c,
                span: s,
            } => {
                let fold = address >> self.shift;
                let slot = (fold as usize) % RECENT;
                page = if self.recent[slot].0 == fold {
                    self.recent[slot].1
                } else {
                    if self.table.len() >= u32::MAX as usize && !self.pages.contains_key(&fold) {
                        return Err(TraceError::Invalid(format!(
                            "a trace holds at most {} pages",
                            u32::MAX
                        )));
                    }
                    let next = self.table.len() as u32;
                    let id = *self.pages.entry(fold).or_insert_with(|| {
                        self.table.push((fold, thread));
                        next
                    });
                    self.recent[slot] = (fold, id);
                    id
                };
                offset = (address & ((1u64 << self.shift) - 1)) as u32;
                span = s;
                count = c;
                tot.runs += 1;
                if write {
                    tot.writes += c as u64;
                } else {
                    tot.reads += c as u64;
                }
            }
            Event::Create { child } => object = child as u64,
            Event::Start { parent } => object = parent as u64,
            Event::Exit => {}
            Event::Join { thread } => object = thread as u64,
            Event::Acquire { key, number } | Event::Release { key, number } => {
                object = key;
                seq = number;
            }
            Event::Barrier {
                key,
                arrival,
                parties: p,
            } => {
                object = key;
                seq = arrival;
                parties = p;
            }
            Event::Fork { region, team } => {
                object = region as u64;
                parties = team;
            }
            Event::Enter {
                region,
                team,
                index,
            } => {
                object = region as u64;
                parties = team;
                seq = index;
            }
            Event::Leave { region } => object = region as u64,
        }
        let rows = &mut self.threads[t];
        rows.push(
            kind,
            instructions,
            page,
            offset,
            span,
            count,
            object,
            seq,
            parties,
        );
        if rows.len() >= BATCH_ROWS {
            self.flush(thread)?;
        }
        Ok(())
    }

    fn flush(&mut self, thread: u32) -> Result<(), TraceError> {
        let rows = &mut self.threads[thread as usize];
        if rows.len() == 0 {
            return Ok(());
        }
        let n = rows.len() as u32;
        let batch = rows.take(&self.schema, thread);
        rows.reserve();
        self.out.write(batch, &self.path)?;
        self.index.batches.push((thread as i64, n));
        Ok(())
    }

    /// Threads seen so far.
    pub fn threads(&self) -> u32 {
        self.threads.len() as u32
    }

    /// Writes what is buffered, the page table and the footer (with `notes`), and
    /// returns the index written.
    pub fn finish(mut self, notes: Vec<String>) -> Result<Index, TraceError> {
        for t in 0..self.threads.len() as u32 {
            self.flush(t)?;
        }
        let shift = self.shift;
        let table = std::mem::take(&mut self.table);
        for chunk in table.chunks(BATCH_ROWS).enumerate() {
            let (first, rows) = chunk;
            let mut r = Rows::default();
            let mut threads = Vec::with_capacity(rows.len());
            for (i, &(fold, thread)) in rows.iter().enumerate() {
                let page = (first * BATCH_ROWS + i) as u32;
                r.push(Kind::Page, 0, page, 0, 0, 0, fold << shift, 0, 0);
                threads.push(thread);
            }
            let n = r.len();
            let mut batch = r.take(&self.schema, 0);
            // Page rows carry the thread that touched each page first.
            let mut cols = batch.columns().to_vec();
            cols[0] = Arc::new(UInt32Array::from(threads));
            batch = RecordBatch::try_new(self.schema.clone(), cols).expect("columns match");
            self.out.write(batch, &self.path)?;
            self.index.batches.push((PAGE_BATCH, n as u32));
        }
        self.index.threads = self.threads.len() as u32;
        self.index.pages = table.len() as u32;
        self.index.totals = std::mem::take(&mut self.totals);
        self.index.notes = notes;
        let index = std::mem::take(&mut self.index);
        let mut out = self.out.into_writer(&self.path)?;
        out.write_metadata(
            format::INDEX_KEY,
            serde_json::to_string(&index).expect("an index serializes"),
        );
        out.finish().map_err(|e| arrow_error(&self.path, e))?;
        let mut inner = out.into_inner().map_err(|e| arrow_error(&self.path, e))?;
        inner.flush().map_err(|e| TraceError::io(&self.path, e))?;
        Ok(index)
    }
}

/// Where batches go: arrow's file writer, here or on a thread of its own.
enum Sink<W: Write> {
    Here(Box<FileWriter<W>>),
    Thread {
        tx: std::sync::mpsc::SyncSender<RecordBatch>,
        done: std::thread::JoinHandle<Result<FileWriter<W>, arrow_schema::ArrowError>>,
    },
    /// Between the two (only while a threaded writer is made).
    Gone,
}

impl<W: Write> Sink<W> {
    fn write(&mut self, batch: RecordBatch, path: &Path) -> Result<(), TraceError> {
        match self {
            Sink::Here(file) => file.write(&batch).map_err(|e| arrow_error(path, e)),
            Sink::Thread { tx, .. } => {
                if tx.send(batch).is_ok() {
                    return Ok(());
                }
                // The writing thread stopped: its error says why.
                match std::mem::replace(self, Sink::Gone).into_writer(path) {
                    Err(e) => Err(e),
                    Ok(_) => Err(TraceError::Invalid(format!(
                        "{}: the writing thread stopped",
                        path.display()
                    ))),
                }
            }
            Sink::Gone => Err(TraceError::Invalid(format!(
                "{}: the writer failed before",
                path.display()
            ))),
        }
    }

    /// The file writer, once every batch sent is written.
    fn into_writer(self, path: &Path) -> Result<FileWriter<W>, TraceError> {
        match self {
            Sink::Here(file) => Ok(*file),
            Sink::Thread { tx, done } => {
                drop(tx);
                match done.join() {
                    Ok(r) => r.map_err(|e| arrow_error(path, e)),
                    Err(_) => Err(TraceError::Invalid(format!(
                        "{}: the writing thread panicked",
                        path.display()
                    ))),
                }
            }
            Sink::Gone => Err(TraceError::Invalid(format!(
                "{}: the writer failed before",
                path.display()
            ))),
        }
    }
}

fn arrow_error(path: &Path, e: arrow_schema::ArrowError) -> TraceError {
    match e {
        arrow_schema::ArrowError::IoError(_, source) => TraceError::io(path, source),
        other => TraceError::Invalid(format!("{}: {other}", path.display())),
    }
}
