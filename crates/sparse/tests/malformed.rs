//! Damaged files are rejected with errors naming the offending line.

mod common;

use common::{drop_last_lines, edit_line, read, replace_columns};
use numaplace_sparse::{read_harwell_boeing, read_matrix_market, ErrorKind, MatrixError};

fn hb_err(text: &str) -> MatrixError {
    read_harwell_boeing(text, "lund_a.rsa").unwrap_err()
}

fn mm_err(text: &str) -> MatrixError {
    read_matrix_market(text, "m.mtx").unwrap_err()
}

/// Asserts the error sits on `line` and its message has the
/// `NAME:LINE:` prefix.
fn assert_line(err: &MatrixError, name: &str, line: usize) {
    assert_eq!(err.line, Some(line), "{err}");
    assert!(
        err.to_string().starts_with(&format!("{name}:{line}: ")),
        "{err}"
    );
}

// ---- Harwell-Boeing ----

#[test]
fn hb_truncated_file_reports_first_missing_line() {
    // lund_a.rsa has 356 lines; without the last two, line 355 is missing.
    let err = hb_err(&drop_last_lines(&read("lund_a.rsa"), 2));
    assert_line(&err, "lund_a.rsa", 355);
    assert!(matches!(err.kind, ErrorKind::Truncated(_)));
    assert!(err.to_string().contains("value card 259 of 260"), "{err}");
}

#[test]
fn hb_truncated_inside_index_cards_reports_first_missing_line() {
    // Keep the header, pointers and 20 of the 82 index cards.
    let text = read("lund_a.rsa");
    let kept: Vec<&str> = text.lines().take(4 + 10 + 20).collect();
    let err = hb_err(&(kept.join("\n") + "\n"));
    assert_line(&err, "lund_a.rsa", 35);
    assert!(err.to_string().contains("row index card 21 of 82"), "{err}");
}

#[test]
fn hb_header_only_is_truncated() {
    let text = read("lund_a.rsa");
    let kept: Vec<&str> = text.lines().take(2).collect();
    let err = hb_err(&kept.join("\n"));
    assert_line(&err, "lund_a.rsa", 3);
}

#[test]
fn hb_last_value_line_cut_short_is_rejected_at_that_line() {
    // Cut line 355 (a full value card) after its second field.
    let text = edit_line(&read("lund_a.rsa"), 355, |l| l[..32].to_string());
    let err = hb_err(&text);
    assert_line(&err, "lund_a.rsa", 355);
    assert!(err.to_string().contains("columns 33-48"), "{err}");
}

#[test]
fn hb_first_pointer_not_one_is_rejected() {
    let text = edit_line(&read("lund_a.rsa"), 5, |l| {
        replace_columns(l, 1, 5, "    2")
    });
    let err = hb_err(&text);
    assert_line(&err, "lund_a.rsa", 5);
    assert!(matches!(err.kind, ErrorKind::InconsistentPointers(_)));
}

#[test]
fn hb_decreasing_pointer_is_rejected() {
    // Second pointer of line 6 (151) becomes 100 < 141.
    let text = edit_line(&read("lund_a.rsa"), 6, |l| {
        replace_columns(l, 6, 10, "  100")
    });
    let err = hb_err(&text);
    assert_line(&err, "lund_a.rsa", 6);
    assert!(err.to_string().contains("less than the previous"), "{err}");
}

#[test]
fn hb_last_pointer_not_nnz_plus_one_is_rejected() {
    // Line 14 ends the pointers: `1293 1296 1298 1299`.
    let text = edit_line(&read("lund_a.rsa"), 14, |l| {
        replace_columns(l, 16, 20, " 1300")
    });
    let err = hb_err(&text);
    assert_line(&err, "lund_a.rsa", 14);
    assert!(err.to_string().contains("nnzero + 1 = 1299"), "{err}");
}

#[test]
fn hb_row_index_out_of_range_is_rejected() {
    let text = edit_line(&read("lund_a.rsa"), 20, |l| {
        replace_columns(l, 1, 5, "  148")
    });
    let err = hb_err(&text);
    assert_line(&err, "lund_a.rsa", 20);
    assert!(matches!(
        err.kind,
        ErrorKind::IndexOutOfRange {
            index: 148,
            max: 147,
            ..
        }
    ));
}

#[test]
fn hb_row_index_zero_is_rejected() {
    let text = edit_line(&read("lund_a.rsa"), 96, |l| {
        replace_columns(l, 1, 5, "    0")
    });
    let err = hb_err(&text);
    assert_line(&err, "lund_a.rsa", 96);
}

#[test]
fn hb_unreadable_value_field_is_rejected() {
    // First value of line 100.
    let text = edit_line(&read("lund_a.rsa"), 100, |l| {
        replace_columns(l, 1, 16, "  0.1234X678E+07")
    });
    let err = hb_err(&text);
    assert_line(&err, "lund_a.rsa", 100);
    assert!(matches!(err.kind, ErrorKind::BadNumber { .. }));
}

#[test]
fn hb_wrong_nnzero_is_rejected_at_last_pointer() {
    // Header says 1297 entries; the pointers still end at 1299.
    let text = edit_line(&read("lund_a.rsa"), 3, |l| {
        replace_columns(l, 43, 56, "          1297")
    });
    let err = hb_err(&text);
    assert_line(&err, "lund_a.rsa", 14);
}

#[test]
fn hb_card_counts_not_matching_format_are_rejected() {
    // Claim 11 pointer cards and 81 index cards (same total): the format
    // needs 10 pointer cards, so the first index card is left over.
    let text = edit_line(&read("lund_a.rsa"), 2, |l| {
        replace_columns(l, 15, 42, "            11            81")
    });
    let err = hb_err(&text);
    assert_line(&err, "lund_a.rsa", 15);
    assert!(matches!(err.kind, ErrorKind::ExtraData(_)), "{err}");
}

#[test]
fn hb_totcrd_inconsistent_with_sections_is_rejected() {
    let text = edit_line(&read("lund_a.rsa"), 2, |l| {
        replace_columns(l, 1, 14, "           351")
    });
    let err = hb_err(&text);
    assert_line(&err, "lund_a.rsa", 2);
}

#[test]
fn hb_trailing_garbage_is_rejected() {
    let text = read("lund_a.rsa") + "   12345\n";
    let err = hb_err(&text);
    assert_line(&err, "lund_a.rsa", 357);
}

#[test]
fn hb_trailing_blank_lines_are_accepted() {
    let text = read("lund_a.rsa") + "\n   \n";
    assert_eq!(read_harwell_boeing(&text, "x").unwrap().nnz(), 1298);
}

#[test]
fn hb_duplicate_entry_is_rejected() {
    // Column 1 holds rows 1 2 8 9 10 11; make the second one 1 as well.
    let text = edit_line(&read("lund_a.rsa"), 15, |l| {
        replace_columns(l, 6, 10, "    1")
    });
    let err = hb_err(&text);
    assert_line(&err, "lund_a.rsa", 15);
    assert!(matches!(err.kind, ErrorKind::Duplicate { row: 1, col: 1 }));
}

#[test]
fn hb_complex_type_is_unsupported() {
    let text = edit_line(&read("lund_a.rsa"), 3, |l| replace_columns(l, 1, 3, "CSA"));
    let err = hb_err(&text);
    assert_line(&err, "lund_a.rsa", 3);
    assert!(matches!(err.kind, ErrorKind::Unsupported(_)));
    assert!(err.to_string().contains("complex"));
}

#[test]
fn hb_elemental_type_is_unsupported() {
    let text = edit_line(&read("lund_a.rsa"), 3, |l| replace_columns(l, 1, 3, "RSE"));
    let err = hb_err(&text);
    assert!(matches!(err.kind, ErrorKind::Unsupported(_)));
    assert!(err.to_string().contains("elemental"));
}

#[test]
fn hb_bad_format_is_rejected_at_line_4() {
    let text = edit_line(&read("lund_a.rsa"), 4, |l| {
        replace_columns(l, 1, 6, "(16A5)")
    });
    let err = hb_err(&text);
    assert_line(&err, "lund_a.rsa", 4);
    assert!(matches!(err.kind, ErrorKind::BadFormat { .. }));
}

#[test]
fn hb_right_hand_side_cards_are_skipped() {
    // Declare one RHS card, add header line 5 and the card itself.
    let text = read("lund_a.rsa");
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[1] = replace_columns(&lines[1], 1, 14, "           353");
    lines[1] = replace_columns(&lines[1], 57, 70, "             1");
    lines.insert(4, format!("F{:13}{:>14}{:>14}", "", 1, 0));
    lines.push("  0.10000000E+01  0.20000000E+01".into());
    let m = read_harwell_boeing(&(lines.join("\n") + "\n"), "rhs").unwrap();
    assert_eq!(m.nnz(), 1298);
    // Without the RHS card the file is truncated at line 358.
    lines.pop();
    let err = read_harwell_boeing(&lines.join("\n"), "rhs").unwrap_err();
    assert_line(&err, "rhs", 358);
}

#[test]
fn hb_misaligned_header_is_read() {
    let text = "tiny                                                                    TINY\n\
                3 1 1 1\n\
                RUA 2 2 2 0\n\
                (3I3) (2I3) (2F8.2)\n  1  2  3\n  1  2\n    1.50   -2.25\n";
    let m = read_harwell_boeing(text, "tiny").unwrap();
    assert_eq!(
        m.entries().collect::<Vec<_>>(),
        vec![(0, 0, 1.5), (1, 1, -2.25)]
    );
}

#[test]
fn hb_upper_triangle_entries_of_symmetric_file_are_mirrored() {
    // Column 2 stores row 1, an upper-triangle position.
    let text =
        "up\n3 1 1 1\nRSA 2 2 2 0\n(3I3) (2I3) (2F8.2)\n  1  2  3\n  1  1\n    4.00    1.00\n";
    let m = read_harwell_boeing(text, "up").unwrap();
    assert_eq!(
        m.entries().collect::<Vec<_>>(),
        vec![(0, 0, 4.0), (1, 0, 1.0)]
    );
}

#[test]
fn hb_pattern_matrix_has_unit_values() {
    let text = "pat\n2 1 1 0\nPUA 2 2 2 0\n(3I3) (2I3)\n  1  2  3\n  2  1\n";
    let m = read_harwell_boeing(text, "pat").unwrap();
    assert!(m.pattern_only());
    assert_eq!(
        m.entries().collect::<Vec<_>>(),
        vec![(0, 1, 1.0), (1, 0, 1.0)]
    );
}

// ---- Matrix Market ----

#[test]
fn mm_truncated_file_reports_line_after_end() {
    // lund_a.mtx has 1300 lines; without the last three, 1295 of 1298
    // entries remain and line 1298 is where the next was expected.
    let err =
        read_matrix_market(&drop_last_lines(&read("lund_a.mtx"), 3), "lund_a.mtx").unwrap_err();
    assert_line(&err, "lund_a.mtx", 1298);
    assert!(err.to_string().contains("expected 1298 entries"), "{err}");
    assert!(err.to_string().contains("found 1295"), "{err}");
}

#[test]
fn mm_more_entries_than_declared_is_rejected() {
    let text = edit_line(&read("lund_a.mtx"), 2, |_| "147 147 1297".into());
    let err = read_matrix_market(&text, "lund_a.mtx").unwrap_err();
    assert_line(&err, "lund_a.mtx", 1300);
    assert!(matches!(err.kind, ErrorKind::ExtraData(_)));
}

#[test]
fn mm_fewer_entries_than_declared_is_rejected() {
    let text = edit_line(&read("lund_a.mtx"), 2, |_| "147 147 1299".into());
    let err = read_matrix_market(&text, "lund_a.mtx").unwrap_err();
    assert_line(&err, "lund_a.mtx", 1301);
    assert!(matches!(err.kind, ErrorKind::Truncated(_)));
}

#[test]
fn mm_index_out_of_range_is_rejected() {
    let text = edit_line(&read("pores_1.mtx"), 10, |_| "31 1 1.0".into());
    let err = read_matrix_market(&text, "pores_1.mtx").unwrap_err();
    assert_line(&err, "pores_1.mtx", 10);
    assert!(
        err.to_string().contains("row index 31 out of range 1..=30"),
        "{err}"
    );
}

#[test]
fn mm_column_index_zero_is_rejected() {
    let err = mm_err("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 0 5\n");
    assert_line(&err, "m.mtx", 3);
    assert!(matches!(
        err.kind,
        ErrorKind::IndexOutOfRange { what: "column", .. }
    ));
}

#[test]
fn mm_non_numeric_value_is_rejected() {
    let err = mm_err("%%MatrixMarket matrix coordinate real general\n% c\n2 2 2\n1 1 5\n2 2 x7\n");
    assert_line(&err, "m.mtx", 5);
    assert!(matches!(err.kind, ErrorKind::BadNumber { .. }));
}

#[test]
fn mm_infinite_value_is_rejected() {
    let err = mm_err("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 inf\n");
    assert_line(&err, "m.mtx", 3);
}

#[test]
fn mm_wrong_number_of_fields_is_rejected() {
    let err = mm_err("%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 5\n2 2\n");
    assert_line(&err, "m.mtx", 4);
    assert!(matches!(
        err.kind,
        ErrorKind::FieldCount {
            expected: 3,
            found: 2
        }
    ));
}

#[test]
fn mm_pattern_entries_take_two_fields() {
    let m = read_matrix_market(
        "%%MatrixMarket matrix coordinate pattern general\n2 3 2\n1 3\n2 1\n",
        "p",
    )
    .unwrap();
    assert!(m.pattern_only());
    assert_eq!(
        m.entries().collect::<Vec<_>>(),
        vec![(0, 2, 1.0), (1, 0, 1.0)]
    );
    let err = mm_err("%%MatrixMarket matrix coordinate pattern general\n2 3 1\n1 3 1.0\n");
    assert_line(&err, "m.mtx", 3);
}

#[test]
fn mm_integer_values_are_read() {
    let m = read_matrix_market(
        "%%MatrixMarket matrix coordinate integer general\n2 2 1\n2 1 -7\n",
        "i",
    )
    .unwrap();
    assert_eq!(m.values(), &[-7.0]);
    let err = mm_err("%%MatrixMarket matrix coordinate integer general\n2 2 1\n2 1 1.5\n");
    assert_line(&err, "m.mtx", 3);
}

#[test]
fn mm_bad_banner_is_rejected() {
    let err = mm_err("%MatrixMarket matrix coordinate real general\n1 1 0\n");
    assert_line(&err, "m.mtx", 1);
    assert!(matches!(err.kind, ErrorKind::BadHeader(_)));
    let err = mm_err("%%MatrixMarket matrix coordinate real diagonal\n1 1 0\n");
    assert_line(&err, "m.mtx", 1);
}

#[test]
fn mm_complex_is_unsupported() {
    let err = mm_err("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n");
    assert_line(&err, "m.mtx", 1);
    assert!(matches!(err.kind, ErrorKind::Unsupported(_)));
    assert!(err.to_string().contains("complex"));
}

#[test]
fn mm_array_is_unsupported() {
    let err = mm_err("%%MatrixMarket matrix array real general\n1 1\n1.0\n");
    assert_line(&err, "m.mtx", 1);
    assert!(matches!(err.kind, ErrorKind::Unsupported(_)));
    assert!(err.to_string().contains("array"));
}

#[test]
fn mm_bad_size_line_is_rejected() {
    let err = mm_err("%%MatrixMarket matrix coordinate real general\n% x\n\n2 2\n");
    assert_line(&err, "m.mtx", 4);
    assert!(matches!(err.kind, ErrorKind::BadSize(_)));
    let err = mm_err("%%MatrixMarket matrix coordinate real general\n2 -2 1\n");
    assert_line(&err, "m.mtx", 2);
}

#[test]
fn mm_missing_size_line_is_truncated() {
    let err = mm_err("%%MatrixMarket matrix coordinate real general\n% only a comment\n");
    assert_line(&err, "m.mtx", 3);
}

#[test]
fn mm_non_square_symmetric_is_rejected() {
    let err = mm_err("%%MatrixMarket matrix coordinate real symmetric\n2 3 0\n");
    assert_line(&err, "m.mtx", 2);
    assert!(matches!(err.kind, ErrorKind::Symmetry(_)));
}

#[test]
fn mm_duplicate_entry_is_rejected_at_second_occurrence() {
    let err = mm_err("%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1\n2 2 2\n1 1 3\n");
    assert_line(&err, "m.mtx", 5);
    assert!(matches!(err.kind, ErrorKind::Duplicate { row: 1, col: 1 }));
}

#[test]
fn mm_symmetric_entry_and_its_mirror_are_duplicates() {
    let err = mm_err("%%MatrixMarket matrix coordinate real symmetric\n2 2 2\n2 1 1\n1 2 1\n");
    assert_line(&err, "m.mtx", 4);
}

#[test]
fn mm_skew_symmetric_upper_entry_is_negated_into_lower_triangle() {
    let m = read_matrix_market(
        "%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 4\n1 3 5\n",
        "z",
    )
    .unwrap();
    assert_eq!(
        m.entries().collect::<Vec<_>>(),
        vec![(1, 0, 4.0), (2, 0, -5.0)]
    );
}

#[test]
fn mm_skew_symmetric_nonzero_diagonal_is_rejected() {
    let err = mm_err("%%MatrixMarket matrix coordinate real skew-symmetric\n2 2 1\n2 2 4\n");
    assert_line(&err, "m.mtx", 3);
}

#[test]
fn error_without_line_has_no_line_in_message() {
    let err = numaplace_sparse::SparseMatrix::from_triplets(
        "gen",
        2,
        2,
        numaplace_sparse::Symmetry::General,
        false,
        &[(0, 0, 1.0), (0, 0, 2.0)],
    )
    .unwrap_err();
    assert_eq!(err.line, None);
    assert_eq!(
        err.to_string(),
        "gen: duplicate entry at row 1, column 1 (1-based)"
    );
}

// ---- Limits ----

#[test]
fn triplets_with_rows_above_the_limit_are_refused() {
    let err = numaplace_sparse::SparseMatrix::from_triplets(
        "gen",
        usize::MAX,
        1,
        numaplace_sparse::Symmetry::General,
        false,
        &[],
    )
    .unwrap_err();
    assert!(
        matches!(err.kind, ErrorKind::DeclaredSize { field: "rows", .. }),
        "{err}"
    );
}

#[test]
fn triplets_with_columns_above_the_limit_are_refused() {
    let err = numaplace_sparse::SparseMatrix::from_triplets(
        "gen",
        1,
        numaplace_sparse::MAX_DIMENSION + 1,
        numaplace_sparse::Symmetry::General,
        true,
        &[(0, 0, 1.0)],
    )
    .unwrap_err();
    assert!(
        matches!(
            err.kind,
            ErrorKind::DeclaredSize {
                field: "columns",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn file_larger_than_the_limit_is_refused_before_reading() {
    // A sparse file: its length is set without writing any data.
    let path =
        std::env::temp_dir().join(format!("numaplace-sparse-big-{}.mtx", std::process::id()));
    let file = std::fs::File::create(&path).unwrap();
    file.set_len(numaplace_sparse::MAX_FILE_BYTES + 1).unwrap();
    drop(file);
    let result = numaplace_sparse::read_path(&path);
    std::fs::remove_file(&path).unwrap();
    let err = result.unwrap_err();
    assert!(matches!(err.kind, ErrorKind::Unsupported(_)), "{err}");
    assert!(err.to_string().contains("MAX_FILE_BYTES"), "{err}");
}

#[cfg(unix)]
#[test]
fn endless_device_is_read_only_up_to_the_file_size_limit() {
    let err = numaplace_sparse::read_path("/dev/zero").unwrap_err();
    assert!(err.to_string().contains("MAX_FILE_BYTES"), "{err}");
}
