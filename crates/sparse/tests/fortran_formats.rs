//! Fortran fixed-width format parsing as used by Harwell-Boeing files.

use numaplace_sparse::fortran::{parse_real_field, BlankMode, FortranFormat};
use numaplace_sparse::ErrorKind;

fn fmt(text: &str) -> FortranFormat {
    FortranFormat::parse(text).unwrap()
}

fn reals(format: &str, text: &str, count: usize) -> Vec<f64> {
    fmt(format).read_reals("t", text, 1, count).unwrap()
}

fn ints(format: &str, text: &str, count: usize) -> Vec<i64> {
    fmt(format).read_ints("t", text, 1, count).unwrap()
}

#[test]
fn i5_reads_sixteen_values_per_line() {
    let f = fmt("(16I5)");
    assert_eq!(f.values_per_line(), 16);
    let text = "    1    7   15   23   31   39   47   53   58   68   77   85   97  108  118  130\n  141  151\n";
    let v = ints("(16I5)", text, 18);
    assert_eq!(v[..3], [1, 7, 15]);
    assert_eq!(v[15..], [130, 141, 151]);
}

#[test]
fn i8_reads_ten_values_per_line() {
    let line: String = (1..=10).map(|i| format!("{:>8}", i * 1000)).collect();
    assert_eq!(
        ints("(10I8)", &line, 10),
        (1..=10).map(|i| i * 1000).collect::<Vec<_>>()
    );
}

#[test]
fn i3_fields_may_touch() {
    // 26I3 with three-digit numbers leaves no blank between fields.
    assert_eq!(ints("(26I3)", "100200  3-45", 4), vec![100, 200, 3, -45]);
}

#[test]
fn e16_8_reads_touching_negative_fields() {
    let v = reals(
        "(5E16.8)",
        "-1.234567800E+01-5.000000000E-04  0.75000000E+08",
        3,
    );
    assert_eq!(v, vec![-12.345678, -0.0005, 75_000_000.0]);
}

#[test]
fn e20_12_reads_values_without_leading_zero() {
    let v = reals("(4E20.12)", "   .283226851852E+07  -.333333333333E+04", 2);
    assert_eq!(v, vec![2832268.51852, -3333.33333333]);
}

#[test]
fn d_exponent_with_scale_factor_is_read() {
    let line = "  -5.637896549615107D-08   0.0                     8.516936613432724D-15";
    let v = reals("(1P3D24.15)", line, 3);
    assert_eq!(v, vec![-5.637896549615107e-8, 0.0, 8.516936613432724e-15]);
}

#[test]
fn lowercase_d_exponent_is_read() {
    assert_eq!(
        reals("(2d12.4)", "  1.2500d+02 -3.0000d-01", 2),
        vec![125.0, -0.3]
    );
}

#[test]
fn scale_factor_applies_only_without_exponent() {
    // 1P: a field without exponent is divided by 10.
    assert_eq!(
        reals("(1P,2E10.3)", "     1.5E0       1.5", 2),
        vec![1.5, 0.15]
    );
}

#[test]
fn comma_after_scale_factor_is_accepted() {
    let f = fmt("(1P,5E16.8)");
    assert_eq!(f.values_per_line(), 5);
    let v = reals("(1P,5E16.8)", "  1.00000000E+00 -2.50000000E-01", 2);
    assert_eq!(v, vec![1.0, -0.25]);
}

#[test]
fn group_with_skip_reads_three_values_per_line() {
    let f = fmt("(3(1X,E25.16))");
    assert_eq!(f.values_per_line(), 3);
    let line = format!(
        " {:>25} {:>25} {:>25}\n {:>25}",
        "1.0000000000000000E+00", "-2.0000000000000000E+00", "3.0000000000000000E-03", "4.0E0"
    );
    assert_eq!(
        reals("(3(1X,E25.16))", &line, 4),
        vec![1.0, -2.0, 0.003, 4.0]
    );
}

#[test]
fn f10_3_reads_fixed_point_values() {
    assert_eq!(
        reals("(8F10.3)", "     1.250    -0.125  1234.000", 3),
        vec![1.25, -0.125, 1234.0]
    );
}

#[test]
fn field_without_decimal_point_has_implied_decimals() {
    assert_eq!(reals("(8F10.3)", "      1250", 1), vec![1.25]);
    assert_eq!(reals("(5E16.8)", "           12345", 1), vec![0.00012345]);
}

#[test]
fn exponent_without_letter_is_read() {
    assert_eq!(
        reals("(3E12.4)", "   1.234-05  -2.5+3      7.0-1", 3),
        vec![1.234e-5, -2500.0, 0.7]
    );
}

#[test]
fn exponent_without_letter_ignores_scale_factor() {
    assert_eq!(reals("(1P,E12.4)", "   1.234-05", 1), vec![1.234e-5]);
}

#[test]
fn blanks_inside_fields_are_ignored() {
    assert_eq!(ints("(2I6)", " 1 2 3    4 ", 2), vec![123, 4]);
    assert_eq!(reals("(E12.4)", " 1.5 E+ 0 2", 1), vec![150.0]);
}

#[test]
fn all_blank_field_reads_as_zero() {
    assert_eq!(ints("(3I4)", "   1       3", 3), vec![1, 0, 3]);
}

#[test]
fn bz_reads_blanks_as_zeros() {
    assert_eq!(ints("(BZ,2I4)", "  1    2", 2), vec![10, 2]);
}

#[test]
fn values_continue_on_following_lines() {
    assert_eq!(
        ints("(3I2)", " 1 2 3\n 4 5 6\n 7", 7),
        vec![1, 2, 3, 4, 5, 6, 7]
    );
}

#[test]
fn too_few_lines_is_a_truncation_error_with_line() {
    let err = fmt("(3I2)")
        .read_ints("t", " 1 2 3\n 4 5 6\n", 10, 7)
        .unwrap_err();
    assert_eq!(err.line, Some(12));
    assert!(matches!(err.kind, ErrorKind::Truncated(_)));
}

#[test]
fn line_ending_before_a_field_is_an_error_with_line() {
    let err = fmt("(3I2)").read_ints("t", " 1 2 3\n 4", 1, 5).unwrap_err();
    assert_eq!(err.line, Some(2));
    assert!(err.to_string().starts_with("t:2: "));
}

#[test]
fn unreadable_field_is_an_error_with_line() {
    let err = fmt("(2E10.2)")
        .read_reals("t", "   1.0E+00   1.0E+00\n   1.0E+00  1.0Q+0x", 7, 4)
        .unwrap_err();
    assert_eq!(err.line, Some(8));
    assert!(matches!(err.kind, ErrorKind::BadNumber { .. }));
}

#[test]
fn real_descriptor_cannot_read_integers() {
    assert!(fmt("(2E10.2)").read_ints("t", "       1.0", 1, 1).is_err());
}

#[test]
fn integer_descriptor_rejects_decimal_point() {
    assert!(fmt("(I5)").read_ints("t", "  1.5", 1, 1).is_err());
}

#[test]
fn overflowing_value_is_rejected() {
    assert!(parse_real_field("1.0E+999", 0, 0, BlankMode::Null).is_err());
    assert_eq!(
        parse_real_field("1.0E-999", 0, 0, BlankMode::Null).unwrap(),
        0.0
    );
}

#[test]
fn es_en_g_and_exponent_width_forms_parse() {
    for f in [
        "(3ES12.4)",
        "(3EN12.4)",
        "(3G12.4)",
        "(3E12.4E3)",
        "(3 E 12 . 4)",
    ] {
        assert_eq!(fmt(f).values_per_line(), 3, "{f}");
        assert!(!fmt(f).is_integer());
    }
    assert!(fmt("(16I5)").is_integer());
}

#[test]
fn malformed_formats_are_rejected() {
    for f in [
        "16I5", "(16I5", "(16A5)", "(E16)", "(5X)", "()", "(0I5)", "(I0)", "(2(", "(16I5)x",
        "(3())",
    ] {
        assert!(
            matches!(FortranFormat::parse(f), Err(ErrorKind::BadFormat { .. })),
            "{f}"
        );
    }
}

#[test]
fn huge_skip_reports_missing_field_instead_of_overflowing() {
    let err = fmt("(999999999999X,I2)")
        .read_ints("t", " 1", 1, 1)
        .unwrap_err();
    assert_eq!(err.line, Some(1));
}

#[test]
fn control_steps_before_each_value_do_not_make_reading_quadratic() {
    // 99,998 `BN` steps and one `I1` per record: the format is at its step
    // limit, and read naively each of the 100,000 values would cost 10^5
    // steps (10^10 in all). Runs of control steps are merged when parsing.
    let format = format!("({}I1)", "BN,".repeat(99_998));
    let text = "1\n".repeat(100_000);
    let start = std::time::Instant::now();
    let values = fmt(&format).read_ints("t", &text, 1, 100_000).unwrap();
    assert_eq!(values.len(), 100_000);
    assert!(values.iter().all(|&v| v == 1));
    let elapsed = start.elapsed();
    assert!(elapsed.as_secs() < 5, "took {elapsed:?}");
}

#[test]
fn merged_record_breaks_and_skips_read_the_same_fields() {
    // `2X,/,1X,/,3X,BZ` between the values means: two records on, column 4,
    // blanks as zeros.
    let f = fmt("(I1,2X,/,1X,/,3X,BZ,I2)");
    assert_eq!(
        f.read_ints("t", "5\nignored\n   7 \n", 1, 2).unwrap(),
        vec![5, 70]
    );
}
