//! Writers and readers agree, and no input makes a reader panic.

mod common;

use std::collections::BTreeMap;

use proptest::prelude::*;

use numaplace_sparse::{
    read_harwell_boeing, read_matrix_market, read_str, to_harwell_boeing, to_matrix_market,
    SparseMatrix, Symmetry,
};

fn symmetry() -> impl Strategy<Value = Symmetry> {
    prop_oneof![
        Just(Symmetry::General),
        Just(Symmetry::Symmetric),
        Just(Symmetry::SkewSymmetric),
        Just(Symmetry::Hermitian),
    ]
}

fn finite() -> impl Strategy<Value = f64> {
    prop_oneof![
        -1e6f64..1e6,
        any::<f64>().prop_filter("finite", |v| v.is_finite()),
        Just(0.0),
    ]
}

/// Random matrices valid for their symmetry (positions folded into the
/// lower triangle, no skew diagonal, no duplicates).
fn matrix() -> impl Strategy<Value = SparseMatrix> {
    (1usize..40, 1usize..40, symmetry(), any::<bool>())
        .prop_flat_map(|(rows, cols, sym, pattern)| {
            let cols = if sym == Symmetry::General { cols } else { rows };
            let entries = prop::collection::vec((0..rows, 0..cols, finite()), 0..120);
            (Just(rows), Just(cols), Just(sym), Just(pattern), entries)
        })
        .prop_map(|(rows, cols, sym, pattern, entries)| {
            let mut unique = BTreeMap::new();
            for (r, c, v) in entries {
                let (r, c) = if sym == Symmetry::General {
                    (r, c)
                } else {
                    (r.max(c), r.min(c))
                };
                if sym == Symmetry::SkewSymmetric && r == c {
                    continue;
                }
                unique.insert((r, c), v);
            }
            let triplets: Vec<_> = unique.into_iter().map(|((r, c), v)| (r, c, v)).collect();
            SparseMatrix::from_triplets("random", rows, cols, sym, pattern, &triplets).unwrap()
        })
}

proptest! {
    #[test]
    fn matrix_market_round_trip_preserves_matrix(m in matrix()) {
        let back = read_matrix_market(&to_matrix_market(&m), "random").unwrap();
        prop_assert_eq!(back, m);
    }

    #[test]
    fn harwell_boeing_round_trip_preserves_matrix(m in matrix()) {
        let text = to_harwell_boeing(&m, "RANDOM");
        let back = read_harwell_boeing(&text, "random").unwrap();
        prop_assert_eq!(back, m);
    }

    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        let text = String::from_utf8_lossy(&bytes);
        let _ = read_str(&text, "junk");
        let _ = read_harwell_boeing(&text, "junk");
        let _ = read_matrix_market(&text, "junk");
    }

    #[test]
    fn corrupted_real_files_never_panic(
        file in prop::sample::select(vec!["lund_a.rsa", "arc130.rua", "bcsstk01.rsa", "pores_1.mtx"]),
        edits in prop::collection::vec((any::<prop::sample::Index>(), prop::sample::select(
            b" 0123456789.-+EeDd()IP,X\nQ".to_vec())), 1..4),
        cut in any::<prop::sample::Index>(),
        do_cut in any::<bool>(),
    ) {
        let mut bytes = common::read(file).into_bytes();
        for (at, b) in edits {
            let i = at.index(bytes.len());
            bytes[i] = b;
        }
        if do_cut {
            let len = cut.index(bytes.len());
            bytes.truncate(len);
        }
        let text = String::from_utf8_lossy(&bytes);
        let _ = read_str(&text, file);
    }

    #[test]
    fn fortran_format_parser_never_panics(text in "\\(?[0-9IEDFGPXBNZS.,()/ +-]{0,20}\\)?") {
        if let Ok(f) = numaplace_sparse::fortran::FortranFormat::parse(&text) {
            let _ = f.read_reals("f", "1 2 3 4 5 6 7 8 9 10 11 12\n13 14", 1, 20);
        }
    }
}

#[test]
fn real_file_round_trips_through_harwell_boeing_writer() {
    let m = read_str(&common::read("arc130.rua"), "arc130").unwrap();
    let back = read_harwell_boeing(&to_harwell_boeing(&m, "ARC130"), "arc130").unwrap();
    assert_eq!(back, m);
}

#[test]
fn written_harwell_boeing_header_is_standard() {
    let m = numaplace_sparse::gr_30_30();
    let text = to_harwell_boeing(&m, "GR3030");
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("GR 30 30"));
    assert_eq!(&lines[0][72..], "GR3030");
    assert!(lines[2].starts_with("RSA"));
    assert!(
        lines[3].starts_with("(16I5)          (20I4)          (1P,3E25.16)"),
        "{}",
        lines[3]
    );
}

/// A pattern matrix stored skew-symmetric keeps every value at 1: an entry
/// given above the diagonal is mirrored below it, not negated.
#[test]
fn pattern_skew_entry_above_diagonal_keeps_value_one() {
    let hb = "up\n3 1 1 1\nPZA 2 2 2 0\n(3I3) (2I3) (2F\n1  2  3\n  1  1\n  4\n";
    let mm = "%%MatrixMarket matrix coordinate pattern skew-symmetric\n2 2 1\n1 2\n";
    for m in [
        read_harwell_boeing(hb, "up.pza").unwrap(),
        read_matrix_market(mm, "up.mtx").unwrap(),
    ] {
        assert!(m.pattern_only());
        assert!(m.values().iter().all(|&v| v == 1.0), "{:?}", m.values());
    }
}
