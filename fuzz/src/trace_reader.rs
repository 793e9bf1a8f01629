//! Arbitrary bytes through the trace reader (a trace from `numaplace record`).
//!
//! Besides "no panic, no hang, no huge allocation": a refused input names a byte offset
//! inside it, and an accepted one reads whole (page table and every thread's batches),
//! each failure of a batch naming an offset inside the input too.

use numaplace_harness::trace::{TraceError, TraceReader};
use std::io::Cursor;
use std::path::Path;

fn check(e: &TraceError, len: usize) {
    match e {
        TraceError::Corrupt { offset, .. } => {
            assert!(*offset <= len as u64, "offset {offset} beyond {len} bytes: {e}")
        }
        TraceError::Io { .. } | TraceError::Invalid(_) | TraceError::Line { .. } => {
            panic!("not a corrupt-input error: {e}")
        }
    }
}

/// One input.
pub fn run(data: &[u8]) {
    let mut r = match TraceReader::from_source(Cursor::new(data), Path::new("fuzz.trace")) {
        Ok(r) => r,
        Err(e) => return check(&e, data.len()),
    };
    if let Err(e) = r.page_table() {
        return check(&e, data.len());
    }
    for t in 0..r.index().threads {
        for b in r.batches_of(t).to_vec() {
            match r.read_batch(b) {
                Ok(batch) => {
                    for i in 0..batch.len() {
                        let _ = batch.row(i);
                    }
                }
                Err(e) => return check(&e, data.len()),
            }
        }
    }
}
