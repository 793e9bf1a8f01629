//! Hostile headers are refused (or fail as truncated) before any allocation
//! sized by a declared number: "validate, then allocate".
//!
//! This test binary installs a counting global allocator, so each test can
//! measure the peak number of live heap bytes while a reader runs. The
//! inputs here are at most a few kilobytes, so a peak above [`BOUND`] can
//! only come from trusting a number in the header.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use numaplace_sparse::fortran::{FortranFormat, MAX_FIELD_WIDTH};
use numaplace_sparse::{
    read_harwell_boeing, read_matrix_market, read_str, ErrorKind, MatrixError, MAX_DIMENSION,
};

/// Wraps the system allocator, tracking the bytes currently allocated and
/// the highest value that count has reached.
struct CountingAllocator;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

impl CountingAllocator {
    fn grew(by: usize) {
        let now = CURRENT.fetch_add(by, Ordering::SeqCst) + by;
        PEAK.fetch_max(now, Ordering::SeqCst);
    }

    fn shrank(by: usize) {
        CURRENT.fetch_sub(by, Ordering::SeqCst);
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged and only updates counters around the call.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc(layout);
        if !p.is_null() {
            Self::grew(layout.size());
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(layout);
        if !p.is_null() {
            Self::grew(layout.size());
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        Self::shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let p = System.realloc(ptr, layout, new_size);
        if !p.is_null() {
            if new_size >= layout.size() {
                Self::grew(new_size - layout.size());
            } else {
                Self::shrank(layout.size() - new_size);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Largest peak a reader may reach on the small inputs of this file. The
/// readers legitimately need a small multiple of the input; Fortran format
/// expansion may take a few MiB for a format at its step limit.
const BOUND: usize = 8 << 20;

/// Tests measure one at a time: the counters are global.
static SERIAL: Mutex<()> = Mutex::new(());

/// Runs `f` and returns its result with the peak heap growth (bytes above
/// what was live when `f` started) observed while it ran.
fn peak_during<R>(f: impl FnOnce() -> R) -> (R, usize) {
    let _guard = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let base = CURRENT.load(Ordering::SeqCst);
    PEAK.store(base, Ordering::SeqCst);
    let result = f();
    let peak = PEAK.load(Ordering::SeqCst);
    (result, peak.saturating_sub(base))
}

/// Reads `text` as Matrix Market under the name `big.mtx`, expecting an
/// error, and checks that the reader stayed below [`BOUND`].
fn mm_refused(text: &str) -> MatrixError {
    let (result, peak) = peak_during(|| read_matrix_market(text, "big.mtx"));
    assert!(peak < BOUND, "peak {peak} bytes reading {text:?}");
    result.expect_err("hostile input must be refused")
}

/// As [`mm_refused`] for Harwell-Boeing under the name `big.rsa`.
fn hb_refused(text: &str) -> MatrixError {
    let (result, peak) = peak_during(|| read_harwell_boeing(text, "big.rsa"));
    assert!(peak < BOUND, "peak {peak} bytes reading {text:?}");
    result.expect_err("hostile input must be refused")
}

/// A Harwell-Boeing header: card counts (the total is their sum, wrapping,
/// so that an overflowing sum can be written), type and sizes, formats.
/// Numbers are separated by blanks rather than aligned, which the reader
/// accepts and which leaves room for numbers wider than 14 digits.
fn hb_header(
    cards: [u64; 4],
    mxtype: &str,
    nrow: u64,
    ncol: u64,
    nnz: u64,
    formats: &str,
) -> String {
    let total = cards.iter().fold(0u64, |a, &c| a.wrapping_add(c));
    format!(
        "hostile\n{total} {} {} {} {}\n{mxtype} {nrow} {ncol} {nnz} 0\n{formats}\n",
        cards[0], cards[1], cards[2], cards[3]
    )
}

fn assert_field(err: &MatrixError, line: usize, field: &str) {
    assert_eq!(err.line, Some(line), "{err}");
    assert!(
        matches!(&err.kind, ErrorKind::DeclaredSize { field: f, .. } if *f == field),
        "{err}"
    );
}

// ---- Matrix Market ----

#[test]
fn huge_declared_row_count_is_refused_without_allocating() {
    let err = mm_refused("%%MatrixMarket matrix coordinate real general\n134217728 1 1\n1 1 1.0\n");
    assert_field(&err, 2, "rows");
    let msg = err.to_string();
    assert!(
        msg.starts_with("big.mtx:2: rows: 134217728 declared"),
        "{msg}"
    );
    assert!(msg.contains(&MAX_DIMENSION.to_string()), "{msg}");
}

#[test]
fn huge_declared_column_count_is_refused_without_allocating() {
    let err =
        mm_refused("%%MatrixMarket matrix coordinate pattern general\n1 99999999999 1\n1 1\n");
    assert_field(&err, 2, "columns");
}

#[test]
fn row_count_beyond_usize_is_a_size_line_error() {
    let err = mm_refused(
        "%%MatrixMarket matrix coordinate real general\n99999999999999999999999 1 1\n1 1 1\n",
    );
    assert_eq!(err.line, Some(2));
    assert!(matches!(err.kind, ErrorKind::BadSize(_)), "{err}");
    assert!(err.to_string().contains("rows:"), "{err}");
}

#[test]
fn entry_count_above_the_matrix_positions_is_refused_without_allocating() {
    let err = mm_refused(
        "%%MatrixMarket matrix coordinate real general\n2 2 1000000000000000000\n1 1 1\n",
    );
    assert_field(&err, 2, "entries");
    assert!(err.to_string().contains("only 4 positions"), "{err}");
}

#[test]
fn symmetric_entry_count_above_one_triangle_is_refused() {
    // A 3x3 symmetric matrix stores at most 6 entries (lower triangle).
    let err = mm_refused("%%MatrixMarket matrix coordinate real symmetric\n3 3 7\n");
    assert_field(&err, 2, "entries");
    assert!(err.to_string().contains("only 6 positions"), "{err}");
}

#[test]
fn huge_entry_count_the_file_does_not_hold_is_truncated_without_allocating() {
    // Possible for the dimensions (2^48 positions) but only one entry follows.
    let err = mm_refused(&format!(
        "%%MatrixMarket matrix coordinate real general\n{MAX_DIMENSION} {MAX_DIMENSION} 1000000000000\n1 1 1\n"
    ));
    assert_eq!(err.line, Some(4), "{err}");
    assert!(matches!(err.kind, ErrorKind::Truncated(_)), "{err}");
    assert!(err.to_string().contains("found 1"), "{err}");
}

#[test]
fn truncated_matrix_market_file_fails_without_allocating_for_missing_entries() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/lund_a.mtx"))
        .unwrap();
    let cut: String = text.lines().take(10).map(|l| format!("{l}\n")).collect();
    let err = mm_refused(&cut);
    assert!(matches!(err.kind, ErrorKind::Truncated(_)), "{err}");
    assert_eq!(err.line, Some(11), "{err}");
}

#[test]
fn declared_rows_at_the_limit_cost_one_pointer_per_row() {
    // The largest accepted declaration with no entries: the only allocation
    // that depends on the row count is the CSR pointer array.
    let text = format!("%%MatrixMarket matrix coordinate real general\n{MAX_DIMENSION} 1 0\n");
    let (result, peak) = peak_during(|| read_matrix_market(&text, "limit.mtx"));
    let m = result.unwrap();
    assert_eq!((m.rows(), m.nnz()), (MAX_DIMENSION, 0));
    let pointers = (MAX_DIMENSION + 1) * std::mem::size_of::<usize>();
    assert!(
        peak < pointers + (1 << 20),
        "peak {peak}, pointers {pointers}"
    );
}

// ---- Harwell-Boeing ----

#[test]
fn hb_huge_declared_row_count_is_refused_without_allocating() {
    let text = hb_header([1, 1, 0, 0], "PUA", 134217728, 1, 1, "(2I3) (1I3)") + "  1  2\n  1\n";
    let err = hb_refused(&text);
    assert_field(&err, 3, "nrow");
    assert!(
        err.to_string()
            .starts_with("big.rsa:3: nrow: 134217728 declared"),
        "{err}"
    );
}

#[test]
fn hb_huge_declared_column_count_is_refused_without_allocating() {
    let text = hb_header([1, 1, 0, 0], "PUA", 1, 134217728, 1, "(2I3) (1I3)") + "  1  2\n  1\n";
    assert_field(&hb_refused(&text), 3, "ncol");
}

#[test]
fn hb_nnzero_above_the_matrix_positions_is_refused_without_allocating() {
    let text = hb_header(
        [1, 1, 0, 0],
        "PUA",
        2,
        2,
        9_000_000_000_000_000_000,
        "(3I3) (1I3)",
    ) + "  1  2  3\n  1\n";
    let err = hb_refused(&text);
    assert_field(&err, 3, "nnzero");
    assert!(err.to_string().contains("only 4 positions"), "{err}");
}

#[test]
fn hb_nnzero_the_cards_do_not_hold_is_truncated_without_allocating() {
    // 2^24 columns need 2^24 + 1 pointers; one short card holds three.
    let n = MAX_DIMENSION as u64;
    let text = hb_header([1, 1, 0, 0], "PUA", n, n, 1 << 40, "(3I3) (1I3)") + "  1  2  3\n  1\n";
    let err = hb_refused(&text);
    assert!(matches!(err.kind, ErrorKind::Truncated(_)), "{err}");
    assert!(err.to_string().contains("pointer cards"), "{err}");
}

#[test]
fn hb_huge_card_counts_are_truncated_without_allocating() {
    let text = hb_header(
        [1 << 60, 1 << 60, 1 << 60, 0],
        "RUA",
        2,
        2,
        2,
        "(3I3) (2I3) (2F8.2)",
    );
    let err = hb_refused(&text);
    assert!(matches!(err.kind, ErrorKind::Truncated(_)), "{err}");
    assert_eq!(err.line, Some(5), "{err}");
}

#[test]
fn hb_card_counts_whose_sum_overflows_are_refused() {
    let text = hb_header(
        [u64::MAX / 2, u64::MAX / 2, 4, 0],
        "RUA",
        2,
        2,
        2,
        "(3I3) (2I3) (2F8.2)",
    );
    let err = hb_refused(&text);
    assert_eq!(err.line, Some(2), "{err}");
}

#[test]
fn truncated_harwell_boeing_file_fails_without_allocating_for_missing_cards() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/lund_a.rsa"))
        .unwrap();
    let cut: String = text.lines().take(7).map(|l| format!("{l}\n")).collect();
    let err = hb_refused(&cut);
    assert!(matches!(err.kind, ErrorKind::Truncated(_)), "{err}");
    assert_eq!(err.line, Some(8), "{err}");
}

// ---- Fortran formats ----

#[test]
fn huge_fortran_field_width_is_refused_without_allocating() {
    let text = hb_header([1, 1, 0, 0], "PUA", 1, 1, 1, "(2I999999999999) (1I3)") + "  1  2\n  1\n";
    let err = hb_refused(&text);
    assert_eq!(err.line, Some(4), "{err}");
    assert!(matches!(err.kind, ErrorKind::BadFormat { .. }), "{err}");
    assert!(err.to_string().contains("above the limit"), "{err}");
}

#[test]
fn fortran_field_width_at_the_limit_is_read_with_padding() {
    let format = format!("(I{MAX_FIELD_WIDTH})");
    let (values, peak) = peak_during(|| {
        FortranFormat::parse(&format)
            .unwrap()
            .read_ints("t", "  42\n  -7\n", 1, 2)
    });
    assert_eq!(values.unwrap(), vec![42, -7]);
    assert!(peak < BOUND, "peak {peak}");
}

#[test]
fn huge_fortran_repeat_count_is_refused_without_allocating() {
    let (result, peak) = peak_during(|| FortranFormat::parse("(999999999(999999999I1))"));
    assert!(result.is_err());
    assert!(peak < BOUND, "peak {peak}");
}

#[test]
fn huge_fortran_repeat_count_in_a_header_is_refused_at_line_4() {
    let text = hb_header([1, 1, 0, 0], "PUA", 1, 1, 1, "(99999999999I1) (1I3)") + "  1  2\n  1\n";
    let err = hb_refused(&text);
    assert_eq!(err.line, Some(4), "{err}");
    assert!(matches!(err.kind, ErrorKind::BadFormat { .. }), "{err}");
}

#[test]
fn huge_fortran_skip_count_reads_past_the_line_without_allocating() {
    let (result, peak) = peak_during(|| {
        FortranFormat::parse("(99999999999999X,I3)")
            .unwrap()
            .read_ints("t", "  1\n", 1, 1)
    });
    assert!(matches!(result.unwrap_err().kind, ErrorKind::Truncated(_)));
    assert!(peak < BOUND, "peak {peak}");
}

#[test]
fn value_count_larger_than_the_text_reserves_only_what_the_text_can_hold() {
    let (result, peak) = peak_during(|| {
        FortranFormat::parse("(16I5)")
            .unwrap()
            .read_ints("t", "    1    2\n", 1, usize::MAX)
    });
    assert!(matches!(result.unwrap_err().kind, ErrorKind::Truncated(_)));
    assert!(peak < BOUND, "peak {peak}");
}

// ---- Format detection ----

#[test]
fn detected_format_applies_the_same_limits() {
    let (result, peak) = peak_during(|| {
        read_str(
            "%%MatrixMarket matrix coordinate real general\n16777217 16777217 0\n",
            "d.mtx",
        )
    });
    assert_field(&result.unwrap_err(), 2, "rows");
    assert!(peak < BOUND, "peak {peak}");
}
