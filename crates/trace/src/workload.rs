//! `trace`: a recorded program replayed. Each thread's stream becomes reference runs and
//! computation, and its synchronisation is re-timed by the engine in simulated time.
//!
//! - **References.** A run's page is laid out from its virtual address at the machine's
//!   page size (pages in address order); consecutive runs of a thread on one of the
//!   machine's pages in one direction become one run, exactly as if the trace had been
//!   folded at that size. The machine's page size must be at least the folding size. On a
//!   machine with processor caches a run walks at most its words laid end to end from its
//!   lowest byte (the trace knows a run's extent, not which lines inside it were touched);
//!   every recorded reference is one the program made, so the primary cache's hits are
//!   references too (see the `trace` section of the workloads chapter).
//! - **Computation.** The instructions between events, times `cpi`, at the machine's
//!   clock (`clock_mhz`, or `workload.clock_mhz`), carried over in femtoseconds so no
//!   rounding accumulates; the machine's `compute_time_pct` applies as to any workload.
//! - **Synchronisation.** Every wait is an event-count wait of the engine (`Op::Await`),
//!   which costs no references: a created thread starts when its creator reaches the
//!   creation; a join waits for the thread's exit; a lock is handed over in the order the
//!   recording took it (the `n`-th acquisition waits for the `n`-th release), which keeps
//!   condition-variable hand-offs causal; a barrier releases its parties when the last of
//!   a generation arrives; an OpenMP region's members start its body when the master
//!   forks it, and mark it with the construct markers (`ParallelEnter`/`ParallelExit`)
//!   that schedulers and `sched-activated` hear.
//! - **First touch.** Each page's program-directed placement is the thread that touched it
//!   first in the recording, so `static` places it there at time 0, and first-touch
//!   policies see the replay's own first touches.
//!
//! Not modelled: the references and instructions inside the synchronisation library (its
//! lock words and spinning; the recorder leaves them out because they depend on the
//! recorded machine's timing), instruction fetches, and work that the recording dealt
//! dynamically (an OpenMP `schedule(dynamic)` loop's chunks stay on the threads that ran
//! them). The trace's notes say what else the recorder saw and could not mark.

use crate::error::TraceError;
use crate::format::{Kind, Row};
use crate::read::{Batch, TraceReader};
use numaplace_core::component::{Op, Program, WorkloadEntry, WorkloadParams};
use numaplace_core::error::ConfigError;
use numaplace_core::estimate::Footprint;
use numaplace_core::fields::Fields;
use numaplace_core::machine::Machine;
use numaplace_core::memory::Layout;
use numaplace_core::registry::Describe;
use numaplace_core::stats::Counter;
use numaplace_core::{Ns, Vpn};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;

/// Parameters of `trace`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct TraceConfig {
    /// The trace to replay (`numaplace record`'s output). Required.
    pub path: String,
    /// Cycles per instruction of the recorded program's computation between references.
    /// Default 1.0, an estimate: the recording counts instructions, not cycles.
    #[field(min = 0.001, max = 1000.0)]
    pub cpi: f64,
    /// The processor clock that times the instructions; default: the machine's
    /// `clock_mhz`.
    #[field(min = 1, max = 100_000, unit = "MHz")]
    pub clock_mhz: Option<u32>,
}

impl Default for TraceConfig {
    fn default() -> Self {
        TraceConfig {
            path: String::new(),
            cpi: 1.0,
            clock_mhz: None,
        }
    }
}

impl Describe for TraceConfig {
    const KIND: &'static str = "trace";
    const DESCRIPTION: &'static str = "a recorded program replayed (numaplace record): its threads' reference runs and computation, its synchronisation re-timed";
}

impl WorkloadParams for TraceConfig {
    fn footprint(&self, machine: &Machine) -> Result<Footprint, ConfigError> {
        let plan = Plan::new(self, machine)?;
        let threads = plan.reader.index().threads;
        let events: u64 = plan.reader.index().totals.iter().map(|t| t.events).sum();
        Ok(Footprint {
            pages: plan.pages as u64,
            threads,
            // A row is one or two operations (a run, or a marker and its computation),
            // a barrier three.
            ops: events.saturating_mul(2),
            buffered_ops: CHUNK as u64 * 2,
            // One batch per thread, decoded (41 bytes a row at most) and as read
            // (compressed: no more than about as much again), and the page maps.
            bytes: (threads as u64)
                .saturating_mul((crate::format::BATCH_ROWS * 82) as u64)
                .saturating_add(plan.map.len() as u64 * 8),
            iterations: 0,
            size_field: "workload.path",
            ops_field: "workload.path",
        })
    }

    fn build(&self, machine: &Machine) -> Result<Vec<Box<dyn Program>>, ConfigError> {
        Ok(vec![Box::new(TraceProgram::new(self, machine)?)])
    }
}

numaplace_core::inventory::submit!(WorkloadEntry::of::<TraceConfig>());

/// Operations made per call for one thread (a batch boundary may end a call sooner).
const CHUNK: usize = 1024;
/// Femtoseconds in a nanosecond.
const FS_PER_NS: u64 = 1_000_000;

/// A trace that cannot be read, as an error of the field that names it (the message
/// names the file and the byte offset).
fn path_error(e: TraceError) -> ConfigError {
    ConfigError::new("workload.path", e.to_string())
}

/// The trace opened and its pages laid out on the machine.
struct Plan {
    reader: TraceReader,
    /// Per trace page: its machine page and where in it the trace page starts.
    map: Vec<(u32, u32)>,
    /// Per machine page: the thread that touched it first in the recording.
    first: Vec<u32>,
    pages: u32,
    fs_per_instruction: u64,
}

impl Plan {
    fn new(c: &TraceConfig, machine: &Machine) -> Result<Plan, ConfigError> {
        c.check_ranges("workload")?;
        if c.path.is_empty() {
            return Err(ConfigError::new(
                "workload.path",
                "give the trace to replay: --set workload.path=FILE (numaplace record writes one)",
            ));
        }
        let mut reader = TraceReader::open(Path::new(&c.path)).map_err(path_error)?;
        let fold = reader.header().page_size;
        let mps = machine.page_size();
        if mps < fold {
            return Err(ConfigError::new(
                "workload.path",
                format!(
                    "{}: runs were folded at {fold}-byte pages, larger than the machine's {mps}-byte pages; record again with --page-size {mps} (or smaller)",
                    c.path
                ),
            ));
        }
        let clock = c.clock_mhz.or(machine.config.clock_mhz).ok_or_else(|| {
            ConfigError::new(
                "workload.clock_mhz",
                format!(
                    "machine `{}` declares no processor clock to time the recorded instructions: set workload.clock_mhz (or machine.clock_mhz)",
                    machine.config.preset
                ),
            )
        })?;
        if reader.index().threads == 0 {
            return Err(ConfigError::new(
                "workload.path",
                format!("{}: the trace holds no thread", c.path),
            ));
        }
        let table = reader.pages().map_err(path_error)?;
        // Machine pages in address order.
        let shift = mps.trailing_zeros();
        let mut machine_pages: Vec<u64> = table.iter().map(|(a, _)| a >> shift).collect();
        machine_pages.sort_unstable();
        machine_pages.dedup();
        if machine_pages.len() > numaplace_core::estimate::MAX_PAGES as usize {
            return Err(ConfigError::new(
                "workload.path",
                format!(
                    "{}: {} pages, more than a run holds",
                    c.path,
                    machine_pages.len()
                ),
            ));
        }
        let mut first = vec![u32::MAX; machine_pages.len()];
        let map: Vec<(u32, u32)> = table
            .iter()
            .map(|&(a, t)| {
                let m = machine_pages
                    .binary_search(&(a >> shift))
                    .expect("every trace page's machine page is listed")
                    as u32;
                // The page table is in first-touch order: the first trace page of a
                // machine page names its first toucher.
                if first[m as usize] == u32::MAX {
                    first[m as usize] = t;
                }
                (m, (a & (mps - 1)) as u32)
            })
            .collect();
        let fs_per_instruction = (c.cpi * 1e9 / clock as f64).round() as u64;
        Ok(Plan {
            pages: machine_pages.len() as u32,
            reader,
            map,
            first,
            fs_per_instruction,
        })
    }
}

/// Event counts: thread creations, exits, region forks, then one per lock or barrier.
struct Events {
    threads: u32,
    regions: u32,
    keys: HashMap<u64, u32>,
}

impl Events {
    fn created(&self, t: u32) -> u32 {
        t
    }
    fn exited(&self, t: u32) -> u32 {
        self.threads + t
    }
    fn forked(&self, r: u32) -> u32 {
        2 * self.threads + r
    }
    fn key(&self, k: u64) -> u32 {
        2 * self.threads + self.regions + self.keys[&k]
    }
}

/// One thread's place in its stream.
struct Cursor {
    batches: Vec<u32>,
    next: usize,
    /// The batch being replayed (its buffers reused for the next).
    batch: Batch,
    /// Its next row; at its end (or before the first batch) the next batch is read.
    pos: usize,
    /// The run being merged: machine page, direction, references, lowest byte, end.
    run: Option<(u32, bool, u32, u32, u32)>,
    /// Instructions not yet turned into computation.
    instructions: u64,
    /// Femtoseconds of computation not yet a whole nanosecond.
    carry_fs: u64,
    done: bool,
}

/// The program.
pub struct TraceProgram {
    name: String,
    layout: Layout,
    hints: Vec<Option<u32>>,
    reader: TraceReader,
    map: Vec<(u32, u32)>,
    events: Events,
    cursors: Vec<Cursor>,
    fs_per_instruction: u64,
    word_bytes: u64,
    /// The trace's folding page size.
    fold_bytes: u64,
    failure: Option<String>,
    refs: u64,
    instructions: u64,
    /// Parallel regions forked so far (by the team masters).
    regions: u64,
}

impl TraceProgram {
    /// Opens and checks the trace of `c` and lays it out on `machine`.
    pub fn new(c: &TraceConfig, machine: &Machine) -> Result<TraceProgram, ConfigError> {
        let Plan {
            mut reader,
            map,
            first,
            pages,
            fs_per_instruction,
        } = Plan::new(c, machine)?;
        let events = check(&mut reader).map_err(|e| match e {
            Check::Trace(e) => path_error(e),
            Check::Inconsistent(what) => {
                ConfigError::new("workload.path", format!("{}: {what}", c.path))
            }
        })?;
        let fold_bytes = reader.header().page_size;
        let mut layout = Layout::new();
        let mps = machine.page_size();
        let words = mps / machine.config.word_size_bytes;
        layout.alloc(
            "memory",
            pages as u64 * words,
            machine.config.word_size_bytes,
            mps,
        );
        layout.pages_checked(mps, "workload.path")?;
        let threads = reader.index().threads;
        let cursors = (0..threads)
            .map(|t| Cursor {
                batches: reader.batches_of(t).to_vec(),
                next: 0,
                batch: Batch::default(),
                pos: 0,
                run: None,
                instructions: 0,
                carry_fs: 0,
                done: false,
            })
            .collect();
        let program = Path::new(&reader.header().program)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(TraceProgram {
            name: if program.is_empty() {
                "trace".into()
            } else {
                format!("trace:{program}")
            },
            layout,
            hints: first.into_iter().map(Some).collect(),
            reader,
            map,
            events,
            cursors,
            fs_per_instruction,
            word_bytes: machine.config.word_size_bytes,
            fold_bytes,
            failure: None,
            refs: 0,
            instructions: 0,
            regions: 0,
        })
    }

    /// Turns the thread's pending instructions into computation.
    fn compute(&mut self, t: usize, out: &mut Vec<Op>) {
        let c = &mut self.cursors[t];
        push_compute(
            out,
            std::mem::take(&mut c.instructions),
            self.fs_per_instruction,
            &mut c.carry_fs,
        );
    }

    /// Emits the run being merged, if any.
    fn flush_run(&mut self, t: usize, out: &mut Vec<Op>) {
        if let Some(run) = self.cursors[t].run.take() {
            push_run(out, run, self.word_bytes);
        }
    }

    /// Replays thread `ti`'s runs in `b` from the cursor's row while the output has
    /// room; returns the row it stopped at (a marker's, or the batch's end), or `None`
    /// when a run names what the trace lacks (the failure is recorded).
    fn runs(&mut self, ti: usize, b: &Batch, out: &mut Vec<Op>) -> Option<usize> {
        let r = b.runs();
        let n = r.kind.len();
        if [
            r.instructions.len(),
            r.page.len(),
            r.offset.len(),
            r.span.len(),
            r.count.len(),
        ]
        .iter()
        .any(|&l| l != n)
        {
            self.failure.get_or_insert_with(|| {
                format!(
                    "batch {} at byte offset {}: columns of different lengths",
                    b.number, b.offset
                )
            });
            return None;
        }
        // One length, so the loop's indexing needs no bounds checks.
        let (ins, pages, offs, spans, counts) = (
            &r.instructions[..n],
            &r.page[..n],
            &r.offset[..n],
            &r.span[..n],
            &r.count[..n],
        );
        let (fs, word, fold) = (self.fs_per_instruction, self.word_bytes, self.fold_bytes);
        let c = &mut self.cursors[ti];
        let (mut run, mut pending, mut carry) = (c.run, c.instructions, c.carry_fs);
        let (mut refs, mut instructions) = (0u64, 0u64);
        let mut i = c.pos;
        let mut bad = None;
        while i < n && out.len() < CHUNK {
            let k = r.kind[i];
            if k > Kind::Write as u8 {
                break;
            }
            let write = k == Kind::Write as u8;
            let (count, off, span) = (counts[i], offs[i], spans[i]);
            let Some(&(page, base)) = self.map.get(pages[i] as usize) else {
                bad = Some(format!(
                    "page {} beyond the trace's page table (the file changed since it was checked?)",
                    pages[i]
                ));
                break;
            };
            if count == 0 || off as u64 + span as u64 > fold {
                bad = Some(format!(
                    "{}: a run of {count} references at offset {off} spanning {span} bytes, on a page of {fold}",
                    self.reader.path().display()
                ));
                break;
            }
            instructions += ins[i];
            refs += count as u64;
            let at = base.saturating_add(off);
            let end = at.saturating_add(span);
            i += 1;
            if let Some(m) = &mut run {
                if m.0 == page && m.1 == write && m.2.checked_add(count).is_some() {
                    // The same machine page, the same direction: one run, and the
                    // instructions come after it, as a folded trace has them.
                    m.2 += count;
                    m.3 = m.3.min(at);
                    m.4 = m.4.max(end);
                    pending += ins[i - 1];
                    continue;
                }
                push_run(out, *m, word);
            }
            push_compute(out, pending + ins[i - 1], fs, &mut carry);
            pending = 0;
            run = Some((page, write, count, at, end));
        }
        self.refs += refs;
        self.instructions += instructions;
        let c = &mut self.cursors[ti];
        (c.run, c.instructions, c.carry_fs, c.pos) = (run, pending, carry, i);
        if let Some(what) = bad {
            self.failure
                .get_or_insert_with(|| format!("thread {ti}: {what}"));
            return None;
        }
        Some(i)
    }

    /// The marker's operations, after the run and computation before it; an error when
    /// the row names what the checked trace did not have.
    fn marker(&mut self, t: u32, r: &Row, out: &mut Vec<Op>) -> Result<(), String> {
        let ev = &self.events;
        let thread_ok = |x: u64| {
            if x < ev.threads as u64 {
                Ok(())
            } else {
                Err(format!("thread {x} unknown"))
            }
        };
        let region_ok = |x: u64| {
            if x < ev.regions as u64 {
                Ok(())
            } else {
                Err(format!("region {x} unknown"))
            }
        };
        match r.kind {
            Kind::Create | Kind::Join => thread_ok(r.object)?,
            Kind::Acquire | Kind::Release | Kind::Barrier if !ev.keys.contains_key(&r.object) => {
                return Err(format!("synchronisation object {:#x} unknown", r.object))
            }
            Kind::Barrier if r.parties == 0 => return Err("a barrier of no parties".into()),
            Kind::Fork | Kind::Enter | Kind::Leave => region_ok(r.object)?,
            _ => {}
        }
        match r.kind {
            Kind::Create => out.push(Op::Advance {
                event: ev.created(r.object as u32),
                to: 1,
            }),
            Kind::Start => out.push(Op::Await {
                event: ev.created(t),
                at_least: 1,
            }),
            Kind::Exit => out.push(Op::Advance {
                event: ev.exited(t),
                to: 1,
            }),
            Kind::Join => out.push(Op::Await {
                event: ev.exited(r.object as u32),
                at_least: 1,
            }),
            Kind::Acquire => out.push(Op::Await {
                event: ev.key(r.object),
                at_least: r.seq,
            }),
            Kind::Release => out.push(Op::Advance {
                event: ev.key(r.object),
                to: r.seq,
            }),
            Kind::Barrier => {
                let e = ev.key(r.object);
                let generation_end = (r.seq / r.parties + 1).saturating_mul(r.parties);
                out.push(Op::Await {
                    event: e,
                    at_least: r.seq,
                });
                out.push(Op::Advance {
                    event: e,
                    to: r.seq.saturating_add(1),
                });
                out.push(Op::Await {
                    event: e,
                    at_least: generation_end,
                });
            }
            Kind::Fork => out.push(Op::Advance {
                event: ev.forked(r.object as u32),
                to: 1,
            }),
            Kind::Enter => {
                out.push(Op::Await {
                    event: ev.forked(r.object as u32),
                    at_least: 1,
                });
                out.push(Op::ParallelEnter(r.object as u32));
            }
            Kind::Leave => out.push(Op::ParallelExit(r.object as u32)),
            Kind::Read | Kind::Write | Kind::Page => return Err("a page row".into()),
        }
        Ok(())
    }

    /// The thread's next batch, or false at its stream's end (or on a read failure).
    fn advance_batch(&mut self, t: usize) -> bool {
        let c = &mut self.cursors[t];
        if c.next >= c.batches.len() {
            return false;
        }
        let number = c.batches[c.next];
        c.next += 1;
        // The markers were checked when the program was built; a replay reads the
        // batches without the row checks and checks what it uses as it goes.
        match self.reader.read_runs_into(number, &mut c.batch) {
            Ok(()) => {
                c.pos = 0;
                true
            }
            Err(e) => {
                self.failure.get_or_insert_with(|| e.to_string());
                false
            }
        }
    }

    /// Replays thread `ti`'s batch `b` from the cursor's row: its runs while the output
    /// has room, then the marker they stop at. False when the call should return (the
    /// output is full, the thread exited, or the trace failed).
    fn replay_batch(&mut self, ti: usize, b: &mut Batch, out: &mut Vec<Op>) -> bool {
        let Some(pos) = self.runs(ti, b, out) else {
            return false;
        };
        if pos >= b.len() {
            // The batch is replayed (the cursor is at its end); the next one is read
            // when it is needed.
            return true;
        }
        if out.len() >= CHUNK {
            return false;
        }
        // A marker.
        if !b.has_marker_fields() {
            if let Err(e) = self.reader.decode_marker_fields(b) {
                self.failure.get_or_insert_with(|| e.to_string());
                return false;
            }
        }
        let Some(row) = b.try_row(pos) else {
            let what = format!(
                "batch {} at byte offset {}: row {pos}: not a trace's kind (the file changed since it was checked?)",
                b.number, b.offset
            );
            self.failure.get_or_insert(what);
            return false;
        };
        self.cursors[ti].pos = pos + 1;
        self.instructions += row.instructions;
        self.flush_run(ti, out);
        self.cursors[ti].instructions += row.instructions;
        self.compute(ti, out);
        if let Err(what) = self.marker(ti as u32, &row, out) {
            self.failure.get_or_insert(format!(
                "thread {ti}: {what} (the file changed since it was checked?)"
            ));
            return false;
        }
        match row.kind {
            Kind::Fork => self.regions += 1,
            Kind::Exit => {
                self.cursors[ti].done = true;
                return false;
            }
            _ => {}
        }
        true
    }
}

impl Program for TraceProgram {
    fn name(&self) -> &str {
        &self.name
    }

    fn threads(&self) -> u32 {
        self.cursors.len() as u32
    }

    fn layout(&self) -> &Layout {
        &self.layout
    }

    fn placement_hints(&self) -> &[Option<u32>] {
        &self.hints
    }

    fn next_ops(&mut self, t: u32, _running: &[bool], out: &mut Vec<Op>) {
        let ti = t as usize;
        if self.cursors[ti].done || self.failure.is_some() {
            return;
        }
        while out.len() < CHUNK {
            let c = &self.cursors[ti];
            if c.pos >= c.batch.len() {
                if self.advance_batch(ti) {
                    continue;
                }
                // The stream's end: what is pending, then nothing more.
                self.flush_run(ti, out);
                self.compute(ti, out);
                self.cursors[ti].done = true;
                return;
            }
            let mut b = std::mem::take(&mut self.cursors[ti].batch);
            let go_on = self.replay_batch(ti, &mut b, out);
            self.cursors[ti].batch = b;
            if !go_on {
                return;
            }
        }
    }

    fn counters(&self) -> Vec<Counter> {
        vec![
            Counter {
                name: "trace_references",
                label: "trace refs",
                value: self.refs,
            },
            Counter {
                name: "trace_instructions",
                label: "trace instructions",
                value: self.instructions,
            },
            Counter {
                name: "trace_regions",
                label: "trace regions",
                value: self.regions,
            },
        ]
    }

    fn failure(&self) -> Option<String> {
        self.failure.clone()
    }
}

/// Computation for `instructions` at `fs_per_instruction` femtoseconds each, carrying
/// what is not a whole nanosecond in `carry_fs` so that no rounding accumulates.
#[inline]
fn push_compute(out: &mut Vec<Op>, instructions: u64, fs_per_instruction: u64, carry_fs: &mut u64) {
    if instructions == 0 {
        return;
    }
    // In 64 bits when it fits (almost always: a few instructions at picoseconds each),
    // in 128 otherwise.
    let ns = match instructions
        .checked_mul(fs_per_instruction)
        .and_then(|x| x.checked_add(*carry_fs))
    {
        Some(fs) => {
            *carry_fs = fs % FS_PER_NS;
            fs / FS_PER_NS
        }
        None => {
            let fs = instructions as u128 * fs_per_instruction as u128 + *carry_fs as u128;
            *carry_fs = (fs % FS_PER_NS as u128) as u64;
            (fs / FS_PER_NS as u128).min(u64::MAX as u128) as u64
        }
    };
    if ns > 0 {
        out.push(Op::Compute(Ns(ns)));
    }
}

/// A merged run, (machine page, write, references, lowest byte, end), as a reference.
#[inline]
fn push_run(
    out: &mut Vec<Op>,
    (page, write, count, at, end): (u32, bool, u32, u32, u32),
    word_bytes: u64,
) {
    // A run knows its lowest and highest byte, not the lines between that it touched:
    // processor caches walk `span` bytes from `at`, so the span is at most the run's
    // words laid end to end (exact for a sequential walk; a run that hops within a page
    // touches more lines than this, and many fewer than its whole extent).
    let words = (count as u64).saturating_mul(word_bytes);
    out.push(Op::Ref {
        vpn: Vpn(page),
        write,
        count,
        at,
        span: (end - at).min(words.min(u32::MAX as u64) as u32),
    });
}

/// Why a trace cannot be replayed.
enum Check {
    Trace(TraceError),
    Inconsistent(String),
}

impl From<TraceError> for Check {
    fn from(e: TraceError) -> Check {
        Check::Trace(e)
    }
}

/// Per lock or barrier: what the whole trace does with it.
#[derive(Default)]
struct KeyUse {
    acquisitions: u64,
    max_acquisition: Option<u32>,
    releases: u64,
    max_release: u32,
    arrivals: u64,
    parties: u32,
}

/// Reads every thread's stream once, checking that the replay can run it to the end:
/// threads start, exit, are created and joined consistently, every lock acquisition's
/// releases and every barrier generation's arrivals are there. Assigns the event counts.
fn check(reader: &mut TraceReader) -> Result<Events, Check> {
    let threads = reader.index().threads;
    let mut created = vec![0u32; threads as usize];
    let mut keys: HashMap<u64, KeyUse> = HashMap::new();
    let mut order: Vec<u64> = Vec::new();
    let mut regions = 0u32;
    let mut forks: HashMap<u32, u32> = HashMap::new();
    let mut enters: HashMap<u32, u32> = HashMap::new();
    let mut batch = Batch::default();
    for t in 0..threads {
        let batches = reader.batches_of(t).to_vec();
        let mut first = true;
        let mut last = None;
        for b in batches {
            // The markers only: a run's fields are checked as the replay reads them.
            reader.read_markers_into(b, &mut batch)?;
            for (i, &k) in batch.kinds().iter().enumerate() {
                if first && t > 0 && k != Kind::Start as u8 {
                    let r = batch.row(i);
                    return Err(Check::Inconsistent(format!(
                        "thread {t}'s stream begins with a {} event, not its start",
                        r.kind.name()
                    )));
                }
                if last == Some(Kind::Exit) {
                    return Err(Check::Inconsistent(format!(
                        "thread {t} has events after its exit (batch {b}, row {i})"
                    )));
                }
                first = false;
                if k == Kind::Read as u8 || k == Kind::Write as u8 {
                    // A run: its fields are checked as the replay reads it.
                    last = Some(Kind::Read);
                    continue;
                }
                let r = batch.row(i);
                last = Some(r.kind);
                if matches!(r.kind, Kind::Acquire | Kind::Release | Kind::Barrier)
                    && !keys.contains_key(&r.object)
                {
                    keys.insert(r.object, KeyUse::default());
                    order.push(r.object);
                }
                match r.kind {
                    Kind::Create => created[r.object as usize] += 1,
                    Kind::Acquire => {
                        let u = keys.get_mut(&r.object).expect("inserted above");
                        u.acquisitions += 1;
                        u.max_acquisition = u.max_acquisition.max(Some(r.seq));
                    }
                    Kind::Release => {
                        let u = keys.get_mut(&r.object).expect("inserted above");
                        u.releases += 1;
                        u.max_release = u.max_release.max(r.seq);
                    }
                    Kind::Barrier => {
                        let u = keys.get_mut(&r.object).expect("inserted above");
                        if u.parties != 0 && u.parties != r.parties {
                            return Err(Check::Inconsistent(format!(
                                "barrier {:#x} has {} parties and {}",
                                r.object, u.parties, r.parties
                            )));
                        }
                        u.parties = r.parties;
                        u.arrivals += 1;
                    }
                    Kind::Fork | Kind::Enter => {
                        let region = u32::try_from(r.object).map_err(|_| {
                            Check::Inconsistent(format!("region {} out of range", r.object))
                        })?;
                        regions = regions.max(region.saturating_add(1));
                        let m = if r.kind == Kind::Fork {
                            &mut forks
                        } else {
                            &mut enters
                        };
                        *m.entry(region).or_default() += 1;
                    }
                    Kind::Leave => {
                        u32::try_from(r.object).map_err(|_| {
                            Check::Inconsistent(format!("region {} out of range", r.object))
                        })?;
                    }
                    _ => {}
                }
            }
        }
        if last != Some(Kind::Exit) {
            return Err(Check::Inconsistent(format!(
                "thread {t}'s stream does not end with its exit: the recording was cut short"
            )));
        }
    }
    for (t, &n) in created.iter().enumerate().skip(1) {
        if n != 1 {
            return Err(Check::Inconsistent(format!(
                "thread {t} is created {n} times, not once"
            )));
        }
    }
    for (&region, &n) in &enters {
        if forks.get(&region).copied().unwrap_or(0) != 1 {
            return Err(Check::Inconsistent(format!(
                "region {region} is entered {n} times but not forked once"
            )));
        }
    }
    for k in &order {
        let u = &keys[k];
        if let Some(max) = u.max_acquisition {
            if u.acquisitions != max as u64 + 1 {
                return Err(Check::Inconsistent(format!(
                    "lock {k:#x}: {} acquisitions numbered up to {max}",
                    u.acquisitions
                )));
            }
            if (u.releases as u32) < max || u.max_release as u64 != u.releases {
                return Err(Check::Inconsistent(format!(
                    "lock {k:#x}: acquisition {max} waits for {max} releases; the trace has {} (numbered up to {})",
                    u.releases, u.max_release
                )));
            }
        }
        if u.arrivals > 0 && !u.arrivals.is_multiple_of(u.parties as u64) {
            return Err(Check::Inconsistent(format!(
                "barrier {k:#x}: {} arrivals for {} parties leave a generation waiting forever",
                u.arrivals, u.parties
            )));
        }
    }
    let ids = 2u64 * threads as u64 + regions as u64 + order.len() as u64;
    if ids > u32::MAX as u64 {
        return Err(Check::Inconsistent(format!(
            "{ids} synchronisation objects: more than a run counts"
        )));
    }
    Ok(Events {
        threads,
        regions,
        keys: order
            .iter()
            .enumerate()
            .map(|(i, &k)| (k, i as u32))
            .collect(),
    })
}
