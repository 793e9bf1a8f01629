//! The trace format: what is written reads back, and a damaged file is refused with the
//! byte offset of the damage.

use numaplace_trace::format::{Event, Header, Kind};
use numaplace_trace::{TraceError, TraceReader, TraceWriter};
use std::io::Cursor;
use std::path::Path;

fn header() -> Header {
    Header {
        program: "./p".into(),
        args: vec!["1".into()],
        page_size: 4096,
        recorder: "tests".into(),
        environment: vec![("OMP_NUM_THREADS".into(), "2".into())],
    }
}

/// A small two-thread trace in memory.
fn small() -> Vec<u8> {
    let mut out = Vec::new();
    let w = TraceWriter::new(&mut out, Path::new("mem"), &header()).unwrap();
    fill(w);
    out
}

/// The small trace's events, written and finished.
fn fill<W: std::io::Write>(mut w: TraceWriter<W>) {
    let run = |write, address, count| Event::Run {
        write,
        address,
        count,
        span: 8 * count,
    };
    w.push(0, 5, Event::Create { child: 1 }).unwrap();
    w.push(1, 0, Event::Start { parent: 0 }).unwrap();
    w.push(0, 7, run(false, 0x10_0008, 3)).unwrap();
    w.push(1, 2, run(true, 0x20_0000, 1)).unwrap();
    w.push(1, 1, Event::Acquire { key: 9, number: 0 }).unwrap();
    w.push(1, 1, Event::Release { key: 9, number: 1 }).unwrap();
    w.push(0, 3, run(true, 0x10_0010, 2)).unwrap();
    w.push(0, 0, Event::Join { thread: 1 }).unwrap();
    w.push(1, 0, Event::Exit).unwrap();
    w.push(0, 0, Event::Exit).unwrap();
    w.finish(vec!["a note".into()]).unwrap();
}

#[test]
fn what_is_written_reads_back_thread_by_thread() {
    let bytes = small();
    let mut r = TraceReader::from_source(Cursor::new(bytes), Path::new("mem")).unwrap();
    assert_eq!(r.header(), &header());
    assert_eq!(r.index().threads, 2);
    assert_eq!(r.index().pages, 2);
    assert_eq!(r.index().notes, vec!["a note".to_string()]);
    assert_eq!(r.index().totals[0].reads, 3);
    assert_eq!(r.index().totals[0].writes, 2);
    assert_eq!(r.index().totals[0].instructions, 15);
    assert_eq!(r.page_table().unwrap(), vec![0x10_0000, 0x20_0000]);
    let b = r.batches_of(0).to_vec();
    let batch = r.read_batch(b[0]).unwrap();
    let kinds: Vec<Kind> = (0..batch.len()).map(|i| batch.row(i).kind).collect();
    assert_eq!(
        kinds,
        [
            Kind::Create,
            Kind::Read,
            Kind::Write,
            Kind::Join,
            Kind::Exit
        ]
    );
    let read = batch.row(1);
    assert_eq!(
        (read.page, read.offset, read.count, read.span),
        (0, 8, 3, 24)
    );
    assert_eq!(read.instructions, 7);
}

#[test]
fn a_writer_on_a_thread_of_its_own_writes_the_same_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.trace");
    let file = std::fs::File::create(&path).unwrap();
    fill(TraceWriter::new_threaded(file, &path, &header()).unwrap());
    assert_eq!(std::fs::read(&path).unwrap(), small());
}

#[test]
fn a_file_cut_anywhere_is_refused_with_a_byte_offset_inside_it() {
    let bytes = small();
    for cut in [0, 10, bytes.len() / 3, bytes.len() / 2, bytes.len() - 1] {
        let e = TraceReader::from_source(Cursor::new(&bytes[..cut]), Path::new("cut"))
            .err()
            .unwrap_or_else(|| panic!("a file cut at {cut} was read"));
        match e {
            TraceError::Corrupt { offset, .. } => assert!(offset <= cut as u64, "{e}"),
            other => panic!("cut at {cut}: {other}"),
        }
    }
}

#[test]
fn an_index_that_disagrees_with_the_page_rows_is_refused() {
    let bytes = small();
    let needle = b"\"pages\":2";
    let at = bytes
        .windows(needle.len())
        .position(|w| w == needle)
        .expect("the index in the footer")
        + needle.len()
        - 1;
    let mut bad = bytes.clone();
    bad[at] = b'1';
    let e = TraceReader::from_source(Cursor::new(bad), Path::new("bad"))
        .err()
        .unwrap();
    assert!(e.to_string().contains("page rows for 1 pages"), "{e}");
}

#[test]
fn the_writer_refuses_a_page_size_that_is_not_a_power_of_two() {
    let mut h = header();
    h.page_size = 5000;
    let e = TraceWriter::new(Vec::new(), Path::new("x"), &h)
        .err()
        .unwrap();
    assert!(e.to_string().contains("power of two"), "{e}");
}

/// The fuzz target's seed (fuzz/corpus/trace_reader/seed-small.trace) is this small
/// trace as the writer writes it now; `NUMAPLACE_BLESS=1` writes it again after a change
/// of the format.
#[test]
fn the_fuzz_seed_is_the_small_trace_as_written_now() {
    let seed = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus/trace_reader/seed-small.trace");
    if std::env::var_os("NUMAPLACE_BLESS").is_some() {
        std::fs::write(&seed, small()).unwrap();
    }
    assert_eq!(std::fs::read(&seed).unwrap(), small());
}

#[test]
fn every_kind_reads_back_from_its_column_value() {
    for (i, k) in Kind::ALL.iter().enumerate() {
        assert_eq!(*k as usize, i);
        assert_eq!(Kind::from_u8(i as u8), Some(*k));
    }
    assert_eq!(Kind::from_u8(Kind::ALL.len() as u8), None);
}

#[test]
fn every_batch_decodes_as_arrows_own_reader_decodes_it() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{UInt32Type, UInt64Type, UInt8Type};
    let bytes = small();
    let arrow = arrow_ipc::reader::FileReader::try_new(Cursor::new(bytes.clone()), None).unwrap();
    let mut r = TraceReader::from_source(Cursor::new(bytes), Path::new("mem")).unwrap();
    for (number, batch) in arrow.enumerate() {
        let batch = batch.unwrap();
        let ours = r.read_batch(number as u32).unwrap();
        assert_eq!(ours.len(), batch.num_rows());
        let u32s = |c: usize| {
            batch
                .column(c)
                .as_primitive::<UInt32Type>()
                .values()
                .to_vec()
        };
        let u64s = |c: usize| {
            batch
                .column(c)
                .as_primitive::<UInt64Type>()
                .values()
                .to_vec()
        };
        let kinds = batch
            .column(1)
            .as_primitive::<UInt8Type>()
            .values()
            .to_vec();
        let rows: Vec<_> = (0..ours.len()).map(|i| ours.row(i)).collect();
        let threads: Vec<u32> = (0..ours.len()).map(|i| ours.thread(i)).collect();
        assert_eq!(threads, u32s(0));
        assert_eq!(rows.iter().map(|r| r.kind as u8).collect::<Vec<_>>(), kinds);
        assert_eq!(
            rows.iter().map(|r| r.instructions).collect::<Vec<_>>(),
            u64s(2)
        );
        assert_eq!(rows.iter().map(|r| r.page).collect::<Vec<_>>(), u32s(3));
        assert_eq!(rows.iter().map(|r| r.offset).collect::<Vec<_>>(), u32s(4));
        assert_eq!(rows.iter().map(|r| r.span).collect::<Vec<_>>(), u32s(5));
        assert_eq!(rows.iter().map(|r| r.count).collect::<Vec<_>>(), u32s(6));
        assert_eq!(rows.iter().map(|r| r.object).collect::<Vec<_>>(), u64s(7));
        assert_eq!(rows.iter().map(|r| r.seq).collect::<Vec<_>>(), u32s(8));
        assert_eq!(rows.iter().map(|r| r.parties).collect::<Vec<_>>(), u32s(9));
    }
}

#[test]
fn a_batch_read_for_a_replay_has_its_marker_fields_once_they_are_decoded() {
    let mut r = TraceReader::from_source(Cursor::new(small()), Path::new("mem")).unwrap();
    let b = r.batches_of(0).to_vec();
    let mut batch = numaplace_trace::read::Batch::default();
    r.read_runs_into(b[0], &mut batch).unwrap();
    // Row 0 creates thread 1: its object is a marker field.
    assert!(!batch.has_marker_fields());
    assert_eq!((batch.row(0).kind, batch.row(0).object), (Kind::Create, 0));
    assert_eq!(batch.row(1).count, 3);
    r.decode_marker_fields(&mut batch).unwrap();
    assert_eq!(batch.row(0).object, 1);
}

#[test]
fn a_batch_read_again_holds_only_what_the_new_read_decoded() {
    let mut r = TraceReader::from_source(Cursor::new(small()), Path::new("mem")).unwrap();
    let b = r.batches_of(1).to_vec();
    let mut batch = numaplace_trace::read::Batch::default();
    r.read_runs_into(b[0], &mut batch).unwrap();
    assert_eq!(batch.row(1).count, 1);
    // Read for its markers: the run columns the earlier read left are not this read's.
    r.read_markers_into(b[0], &mut batch).unwrap();
    assert_eq!(batch.row(1).kind, Kind::Write);
    assert_eq!((batch.row(1).count, batch.row(1).page), (1, 0));
    assert_eq!(batch.runs().page.len(), 0);
    assert_eq!(batch.thread(1), 1);
}
