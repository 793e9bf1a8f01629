//! Resource estimates: what a run will allocate and how much it will simulate, computed
//! from its configuration before anything large is allocated ("validate, then allocate").
//!
//! Every workload reports a [`Footprint`] (pages, threads, operations, its own heap bytes)
//! computed with checked arithmetic from its parameters alone; [`RunConfig::estimate`]
//! (crate::RunConfig::estimate) adds what the engine, the memory model, the reference
//! history, the policy and the reports allocate for that footprint, each term beside the
//! field that drives it, so a refusal can name the field to change.

use serde::Serialize;

/// Most pages one run addresses (page numbers are 32-bit, half the range kept free).
pub const MAX_PAGES: u64 = (u32::MAX / 2) as u64;

/// Most threads one run may have.
pub const MAX_THREADS: u32 = 1 << 16;

/// Most series points a run records at fixed intervals (`report.series_interval_ns`);
/// a run that would record more stops with an error naming the field.
pub const MAX_INTERVAL_POINTS: u64 = 100_000;

/// What a workload needs, from its parameters alone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Footprint {
    /// Pages of its address space.
    pub pages: u64,
    /// Threads.
    pub threads: u32,
    /// Operations its threads will issue (an estimate, exact where cheap to count).
    pub ops: u64,
    /// Most operations one thread holds generated at a time.
    pub buffered_ops: u64,
    /// Heap bytes the program allocates itself (placement hints, per-thread state, ...).
    pub bytes: u64,
    /// Iteration ends the program reports (each becomes a series point).
    pub iterations: u64,
    /// The parameter that sizes the address space (e.g. `workload.n`).
    pub size_field: &'static str,
    /// The parameter that most drives the operation count (e.g. `workload.iterations`).
    pub ops_field: &'static str,
}

impl Footprint {
    /// Bytes of a placement-hint table for `pages` pages (one per page).
    pub fn hint_bytes(pages: u64) -> u64 {
        pages.saturating_mul(std::mem::size_of::<Option<u32>>() as u64)
    }
}

/// One term of an estimate: what allocates, the field that drives it, how many bytes.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Part {
    /// What the bytes are for.
    pub what: &'static str,
    /// The dotted configuration field that drives them.
    pub field: String,
    /// Heap bytes.
    pub bytes: u64,
}

/// The estimate of a run: peak heap bytes (an upper bound for the simulation itself) and
/// simulated operations.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Estimate {
    /// Pages of the run.
    pub pages: u64,
    /// Threads of the run.
    pub threads: u64,
    /// Operations the threads will issue (estimate).
    pub ops: u64,
    /// The field that drives the operation count.
    pub ops_field: String,
    /// Series points the program records at its iteration ends.
    pub iteration_points: u64,
    /// Peak heap bytes of building and running the simulation.
    pub bytes: u64,
    /// The terms behind `bytes`, largest first.
    pub parts: Vec<Part>,
}

impl Estimate {
    /// The estimate of a program of footprint `fp` whose run allocates `parts`.
    pub fn from_parts(fp: &Footprint, parts: Vec<Part>) -> Estimate {
        let mut e = Estimate {
            pages: fp.pages,
            threads: fp.threads as u64,
            ops: fp.ops,
            ops_field: fp.ops_field.to_string(),
            iteration_points: fp.iterations,
            bytes: 0,
            parts: Vec::new(),
        };
        for p in parts {
            e.add(p);
        }
        e
    }

    /// The term that drives the estimate most.
    pub fn driver(&self) -> Option<&Part> {
        self.parts.first()
    }

    /// Adds a term (e.g. the harness's JSON output). `bytes` is the terms' sum with a
    /// margin for allocator rounding and vectors that grow by doubling.
    pub fn add(&mut self, part: Part) {
        self.parts.push(part);
        self.parts
            .sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.what.cmp(b.what)));
        let sum = self
            .parts
            .iter()
            .fold(0u64, |s, p| s.saturating_add(p.bytes));
        self.bytes = sum.saturating_add(sum / 4).saturating_add(BASE_BYTES);
    }
}

/// Fixed overhead of any run (machine tables, small vectors, the allocator's own).
const BASE_BYTES: u64 = 1 << 20;

/// Human-readable bytes: `512 B`, `3.2 MB`, `16.0 GB` (decimal units).
pub fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 5] = ["kB", "MB", "GB", "TB", "PB"];
    if b < 1000 {
        return format!("{b} B");
    }
    let mut v = b as f64 / 1000.0;
    let mut u = 0;
    while v >= 1000.0 && u + 1 < UNITS.len() {
        v /= 1000.0;
        u += 1;
    }
    format!("{v:.1} {}", UNITS[u])
}

/// Upper bound of the reference runs one range of `len` elements of `elem_bytes` bytes
/// produces on pages of `page_size` bytes (one per page touched).
pub fn runs_of(len: u64, elem_bytes: u64, page_size: u64) -> u64 {
    len.saturating_mul(elem_bytes)
        .div_ceil(page_size.max(1))
        .saturating_add(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_bytes_uses_decimal_units() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(3_200_000), "3.2 MB");
        assert_eq!(human_bytes(16_000_000_000), "16.0 GB");
    }

    #[test]
    fn the_largest_part_drives_the_estimate() {
        let fp = Footprint {
            pages: 1,
            threads: 1,
            ops: 1,
            buffered_ops: 1,
            bytes: 0,
            iterations: 0,
            size_field: "workload.n",
            ops_field: "workload.iterations",
        };
        let part = |what, field: &str, bytes| Part {
            what,
            field: field.into(),
            bytes,
        };
        let e = Estimate::from_parts(&fp, vec![part("small", "a", 10), part("large", "b", 1000)]);
        assert_eq!(e.driver().map(|p| p.field.as_str()), Some("b"));
        assert!(e.bytes >= 1010);
    }
}
