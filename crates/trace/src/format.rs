//! The trace format, version 1: what a file holds and how its columns read.
//!
//! A trace is one Arrow IPC file (the "file" format, with a footer giving every record
//! batch's byte offset), its buffers compressed with zstd. Every record batch holds events
//! of one thread, in the thread's order, or rows of the page table. All rows share one
//! schema ([`schema`]):
//!
//! | column | type | meaning |
//! |---|---|---|
//! | `thread` | u32 | the thread (0 = the initial thread, then in creation order); for a page row, the thread that touched the page first |
//! | `kind` | u8 | what the row is ([`Kind`]) |
//! | `instructions` | u64 | instructions the thread executed since its previous event began (0 on a page row) |
//! | `page` | u32 | a run's page: its index in the page table |
//! | `offset` | u32 | a run's lowest referenced byte, from the page's start |
//! | `span` | u32 | bytes from `offset` to the end of the highest referenced byte |
//! | `count` | u32 | a run's references |
//! | `object` | u64 | a marker's object (thread, synchronisation key, parallel region); a page row's virtual address |
//! | `seq` | u32 | a marker's number (acquisition, release, arrival; a team member's index) |
//! | `parties` | u32 | a barrier's parties; a team's size |
//!
//! A run is references of one thread, one direction (read or write), to one page of the
//! folding page size, one after another; the instructions executed between its first
//! reference and the next event's belong to the next event. So a trace folded at any page
//! size replays the same as one with a row per reference (`trace` merges consecutive runs
//! on one of the machine's pages the same way).
//!
//! Schema metadata (at the file's start): `numaplace.trace.version` (`1`) and
//! `numaplace.trace.header`, a JSON [`Header`]. Footer metadata (at its end):
//! `numaplace.trace.index`, a JSON [`Index`] (threads, pages, which thread each batch
//! holds, per-thread totals, notes). A file without a footer (a recording that stopped
//! half-way) is refused: it is truncated.

use arrow_schema::{DataType, Field, Schema};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::sync::Arc;

/// The format's version, in the schema metadata.
pub const VERSION: &str = "1";
/// Schema metadata key of the version.
pub const VERSION_KEY: &str = "numaplace.trace.version";
/// Schema metadata key of the [`Header`].
pub const HEADER_KEY: &str = "numaplace.trace.header";
/// Footer metadata key of the [`Index`].
pub const INDEX_KEY: &str = "numaplace.trace.index";
/// Rows per record batch the writer makes (the last of a thread may hold fewer).
pub const BATCH_ROWS: usize = 1 << 16;
/// The `thread` of the batches that hold page rows, in the index.
pub const PAGE_BATCH: i64 = -1;

/// What a row is: a reference run, a synchronisation marker, or a page of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    /// A run of reads.
    Read = 0,
    /// A run of writes.
    Write = 1,
    /// The thread created thread `object`.
    Create = 2,
    /// The thread's first event: created by thread `object`.
    Start = 3,
    /// The thread's last event.
    Exit = 4,
    /// The thread joined thread `object` (it has exited).
    Join = 5,
    /// The thread took lock `object`, its `seq`-th acquisition (from 0, in the recorded order).
    Acquire = 6,
    /// The thread released lock `object`, its `seq`-th release (from 1).
    Release = 7,
    /// The thread arrived at barrier `object` of `parties` threads, arrival `seq` (from 0).
    Barrier = 8,
    /// The thread (the master) forks parallel region `object` with a team of `parties`.
    Fork = 9,
    /// The thread begins region `object`'s body as team member `seq` of `parties`.
    Enter = 10,
    /// The thread leaves region `object` (after its closing barrier).
    Leave = 11,
    /// A row of the page table: page `page` is at virtual address `object`.
    Page = 12,
}

impl Kind {
    /// Every kind, in the order of their column values.
    pub const ALL: [Kind; 13] = [
        Kind::Read,
        Kind::Write,
        Kind::Create,
        Kind::Start,
        Kind::Exit,
        Kind::Join,
        Kind::Acquire,
        Kind::Release,
        Kind::Barrier,
        Kind::Fork,
        Kind::Enter,
        Kind::Leave,
        Kind::Page,
    ];

    /// The kind a `kind` column value stands for.
    pub fn from_u8(v: u8) -> Option<Kind> {
        Kind::ALL.get(v as usize).copied()
    }

    /// Its name, as the documentation writes it.
    pub fn name(self) -> &'static str {
        use Kind::*;
        match self {
            Read => "read",
            Write => "write",
            Create => "create",
            Start => "start",
            Exit => "exit",
            Join => "join",
            Acquire => "acquire",
            Release => "release",
            Barrier => "barrier",
            Fork => "fork",
            Enter => "enter",
            Leave => "leave",
            Page => "page",
        }
    }
}

/// One event of a thread, as the writer takes it and the reader gives it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// `count` references in one direction to one page: the lowest referenced byte is at
    /// virtual address `address`, the highest ends `span` bytes after it.
    Run {
        /// Writes (true) or reads.
        write: bool,
        /// The lowest referenced byte's virtual address. (Read back, a run names its
        /// page by its index in the page table and the offset in it: [`Row`].)
        address: u64,
        /// References.
        count: u32,
        /// Bytes from `address` to the end of the highest referenced byte.
        span: u32,
    },
    /// Created thread `child`.
    Create {
        /// The new thread.
        child: u32,
    },
    /// The thread's first event.
    Start {
        /// The thread that created it.
        parent: u32,
    },
    /// The thread's last event.
    Exit,
    /// Joined `thread`.
    Join {
        /// The thread waited for.
        thread: u32,
    },
    /// Took lock `key`, its `number`-th acquisition (from 0).
    Acquire {
        /// The lock.
        key: u64,
        /// The acquisition's number.
        number: u32,
    },
    /// Released lock `key`, its `number`-th release (from 1).
    Release {
        /// The lock.
        key: u64,
        /// The release's number.
        number: u32,
    },
    /// Arrived at barrier `key` of `parties`, arrival `arrival` (from 0).
    Barrier {
        /// The barrier.
        key: u64,
        /// The arrival's number over the barrier's life.
        arrival: u32,
        /// Threads that meet at it.
        parties: u32,
    },
    /// Forks region `region` with `team` threads.
    Fork {
        /// The region.
        region: u32,
        /// Its team's size.
        team: u32,
    },
    /// Begins region `region`'s body as member `index` of `team`.
    Enter {
        /// The region.
        region: u32,
        /// Its team's size.
        team: u32,
        /// The thread's place in the team.
        index: u32,
    },
    /// Leaves region `region`.
    Leave {
        /// The region.
        region: u32,
    },
}

impl Event {
    /// The row kind the event is written as.
    pub fn kind(&self) -> Kind {
        match self {
            Event::Run { write: false, .. } => Kind::Read,
            Event::Run { write: true, .. } => Kind::Write,
            Event::Create { .. } => Kind::Create,
            Event::Start { .. } => Kind::Start,
            Event::Exit => Kind::Exit,
            Event::Join { .. } => Kind::Join,
            Event::Acquire { .. } => Kind::Acquire,
            Event::Release { .. } => Kind::Release,
            Event::Barrier { .. } => Kind::Barrier,
            Event::Fork { .. } => Kind::Fork,
            Event::Enter { .. } => Kind::Enter,
            Event::Leave { .. } => Kind::Leave,
        }
    }
}

/// One row of a thread's stream as read back: a run names its page by index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// Instructions since the thread's previous event began.
    pub instructions: u64,
    /// The row's kind.
    pub kind: Kind,
    /// A run's page (index in the page table).
    pub page: u32,
    /// A run's lowest referenced byte within the page.
    pub offset: u32,
    /// A run's bytes from `offset`.
    pub span: u32,
    /// A run's references.
    pub count: u32,
    /// A marker's object.
    pub object: u64,
    /// A marker's number.
    pub seq: u32,
    /// A barrier's parties or a team's size.
    pub parties: u32,
}

/// What was recorded, in the schema metadata.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Header {
    /// The program as it was started.
    pub program: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// The page size runs were folded at (bytes, a power of two).
    pub page_size: u64,
    /// What recorded it (name and version).
    pub recorder: String,
    /// Environment variables that shape a parallel program's run (`OMP_NUM_THREADS` and
    /// the like), as they were set.
    #[serde(default)]
    pub environment: Vec<(String, String)>,
}

/// Per-thread totals, in the index.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadTotals {
    /// Rows of the thread.
    pub events: u64,
    /// Reference runs.
    pub runs: u64,
    /// References read.
    pub reads: u64,
    /// References written.
    pub writes: u64,
    /// Instructions.
    pub instructions: u64,
}

/// What the footer says: where each thread's rows are, and totals to check them by.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Index {
    /// Threads (numbered from 0).
    pub threads: u32,
    /// Pages in the page table.
    pub pages: u32,
    /// For each record batch in file order: the thread whose rows it holds
    /// ([`PAGE_BATCH`] for page rows) and its row count.
    pub batches: Vec<(i64, u32)>,
    /// Per thread.
    pub totals: Vec<ThreadTotals>,
    /// What the recorder saw and the trace cannot replay faithfully (OpenMP tasks, nested
    /// parallel regions, ...), once each.
    #[serde(default)]
    pub notes: Vec<String>,
}

/// The schema every batch has.
pub fn schema(header: &Header) -> Arc<Schema> {
    let meta: HashMap<String, String> = [
        (VERSION_KEY.to_string(), VERSION.to_string()),
        (
            HEADER_KEY.to_string(),
            serde_json::to_string(header).expect("a header serializes"),
        ),
    ]
    .into_iter()
    .collect();
    Arc::new(Schema::new_with_metadata(fields(), meta))
}

/// The columns, in order.
pub fn fields() -> Vec<Field> {
    vec![
        Field::new("thread", DataType::UInt32, false),
        Field::new("kind", DataType::UInt8, false),
        Field::new("instructions", DataType::UInt64, false),
        Field::new("page", DataType::UInt32, false),
        Field::new("offset", DataType::UInt32, false),
        Field::new("span", DataType::UInt32, false),
        Field::new("count", DataType::UInt32, false),
        Field::new("object", DataType::UInt64, false),
        Field::new("seq", DataType::UInt32, false),
        Field::new("parties", DataType::UInt32, false),
    ]
}
