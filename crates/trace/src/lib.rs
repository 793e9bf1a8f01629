//! Recorded programs in numaplace: the trace format (per-thread reference runs and
//! synchronisation markers in an Arrow IPC file, [`format`]), its writer ([`write`]) and
//! reader ([`read`]), the recorder's raw stream ([`raw`]), traces recorded elsewhere
//! ([`lackey`]), and the `trace` workload that
//! replays a recording under any policy ([`workload`]).

pub mod error;
pub mod format;
pub mod lackey;
pub mod raw;
pub mod read;
pub mod workload;
pub mod write;

pub use error::TraceError;
pub use format::{Event, Header, Index, Kind, Row};
pub use read::TraceReader;
pub use write::TraceWriter;
