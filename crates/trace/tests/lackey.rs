//! Valgrind lackey's text imported as a trace.

use numaplace_trace::format::Header;
use numaplace_trace::{lackey, TraceError, TraceReader};
use std::io::Cursor;
use std::path::Path;

fn header() -> Header {
    Header {
        program: "lackey".into(),
        args: vec![],
        page_size: 4096,
        recorder: "tests".into(),
        environment: vec![],
    }
}

fn import(text: &str) -> Result<Vec<u8>, TraceError> {
    let mut out = Vec::new();
    lackey::import(
        Cursor::new(text.as_bytes()),
        Path::new("t.lackey"),
        header(),
        &mut out,
        Path::new("t.trace"),
    )?;
    Ok(out)
}

#[test]
fn the_fixtures_references_and_instructions_are_those_of_its_lines() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../recorder/fixtures/lackey-count.txt");
    let text = std::fs::read_to_string(path).unwrap();
    let count = |tag: &str| text.lines().filter(|l| l.starts_with(tag)).count() as u64;
    let (l, s, m, i) = (count(" L"), count(" S"), count(" M"), count("I "));
    let bytes = import(&text).unwrap();
    let r = TraceReader::from_source(Cursor::new(bytes), Path::new("t.trace")).unwrap();
    let t = &r.index().totals[0];
    assert_eq!((t.reads, t.writes), (l + m, s + m));
    assert_eq!(t.instructions, i);
}

#[test]
fn consecutive_accesses_to_one_page_in_one_direction_fold_into_a_run() {
    let text = "I  0400,3\n L 1000,8\nI  0403,3\n L 1008,8\n S 1010,8\n L 2000,4\n";
    let bytes = import(text).unwrap();
    let mut r = TraceReader::from_source(Cursor::new(bytes), Path::new("t.trace")).unwrap();
    let b = r.batches_of(0).to_vec();
    let batch = r.read_batch(b[0]).unwrap();
    let rows: Vec<_> = (0..batch.len()).map(|i| batch.row(i)).collect();
    // Two reads of page 1, a write of page 1, a read of page 2, the exit.
    assert_eq!(rows.len(), 4);
    assert_eq!((rows[0].count, rows[0].offset, rows[0].span), (2, 0, 16));
    assert_eq!(rows[0].instructions, 1);
    // The second instruction came after the run's first reference: the next event's.
    assert_eq!(rows[1].instructions, 1);
    assert_eq!(rows[2].page, 1);
}

#[test]
fn a_line_that_is_not_lackeys_is_refused_with_its_number() {
    let e = import("I  0400,3\n L 1000,8\nX what\n").unwrap_err();
    assert!(e.to_string().starts_with("t.lackey:3:"), "{e}");
}

#[test]
fn valgrinds_own_lines_are_skipped() {
    let bytes = import("==12== Lackey\n L 1000,8\n==12== done\n").unwrap();
    let r = TraceReader::from_source(Cursor::new(bytes), Path::new("t.trace")).unwrap();
    assert_eq!(r.index().totals[0].reads, 1);
}
