//! A replay checks a trace's markers before it starts and each run as it reads it: a run
//! that names a page the trace does not have stops the program with the reason.

use arrow_array::{ArrayRef, RecordBatch, UInt32Array, UInt64Array, UInt8Array};
use arrow_ipc::writer::FileWriter;
use numaplace_core::component::Program;
use numaplace_core::Machine;
use numaplace_trace::format::{self, Header, Index, Kind, ThreadTotals, PAGE_BATCH};
use numaplace_trace::workload::{TraceConfig, TraceProgram};
use std::sync::Arc;

/// A row: kind, page, count, object.
type Row = (Kind, u32, u32, u64);

/// One batch of rows.
fn batch(schema: &Arc<arrow_schema::Schema>, thread: u32, rows: &[Row]) -> RecordBatch {
    let n = rows.len();
    let u32s = |f: &dyn Fn(&Row) -> u32| -> ArrayRef {
        Arc::new(UInt32Array::from(rows.iter().map(f).collect::<Vec<_>>()))
    };
    let cols: Vec<ArrayRef> = vec![
        Arc::new(UInt32Array::from(vec![thread; n])),
        Arc::new(UInt8Array::from(
            rows.iter().map(|r| r.0 as u8).collect::<Vec<_>>(),
        )),
        Arc::new(UInt64Array::from(vec![1u64; n])),
        u32s(&|r| r.1),
        u32s(&|_| 0),
        u32s(&|_| 8),
        u32s(&|r| r.2),
        Arc::new(UInt64Array::from(
            rows.iter().map(|r| r.3).collect::<Vec<_>>(),
        )),
        u32s(&|_| 0),
        u32s(&|_| 0),
    ];
    RecordBatch::try_new(schema.clone(), cols).unwrap()
}

#[test]
fn a_run_naming_a_page_beyond_the_table_stops_the_program_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.trace");
    let header = Header {
        program: "./bad".into(),
        args: vec![],
        page_size: 64,
        recorder: "tests".into(),
        environment: vec![],
    };
    let schema = format::schema(&header);
    let mut w = FileWriter::try_new(std::fs::File::create(&path).unwrap(), &schema).unwrap();
    // Thread 0 reads page 0, then page 5 of a one-page table, then exits.
    w.write(&batch(
        &schema,
        0,
        &[
            (Kind::Read, 0, 1, 0),
            (Kind::Read, 5, 1, 0),
            (Kind::Exit, 0, 0, 0),
        ],
    ))
    .unwrap();
    w.write(&batch(&schema, 0, &[(Kind::Page, 0, 0, 0x1000)]))
        .unwrap();
    let index = Index {
        threads: 1,
        pages: 1,
        batches: vec![(0, 3), (PAGE_BATCH, 1)],
        totals: vec![ThreadTotals::default()],
        notes: vec![],
    };
    w.write_metadata(format::INDEX_KEY, serde_json::to_string(&index).unwrap());
    w.finish().unwrap();

    let mut machine = numaplace_core::mm::test_machine_config(2);
    machine.clock_mhz = Some(100);
    let machine = Machine::new(machine).unwrap();
    let config = TraceConfig {
        path: path.display().to_string(),
        ..TraceConfig::default()
    };
    // The markers are sound: the program builds.
    let mut p = TraceProgram::new(&config, &machine).unwrap();
    let mut ops = Vec::new();
    p.next_ops(0, &[true], &mut ops);
    let failure = p.failure().expect("the bad run stops the program");
    assert!(failure.contains("page 5 beyond"), "{failure}");
}
