//! The trace format reads back exactly what was written.

use numaplace_oracle::trace::{Footer, Header, Record, TraceReader, TraceWriter, BLOCK_RECORDS};
use proptest::prelude::*;
use std::io::BufWriter;

fn header() -> Header {
    Header {
        machine: numaplace_core::mm::test_machine_config(2),
        policy: "static".into(),
        config: serde_json::Value::Null,
    }
}

fn record() -> impl Strategy<Value = Record> {
    (
        0u64..1 << 40,
        0u32..1 << 31,
        0u16..1024,
        0u16..1024,
        any::<bool>(),
        any::<bool>(),
        0u32..=u32::MAX,
    )
        .prop_map(|(time, page, node, target, write, cached, count)| Record {
            time,
            page,
            node,
            target,
            write,
            cached,
            count,
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn records_read_back_as_written_across_blocks(
        mut recs in proptest::collection::vec(record(), 0..300),
        extra in 0usize..3
    ) {
        // Some traces span several blocks.
        if extra > 0 && !recs.is_empty() {
            let r = recs[0];
            recs.extend(std::iter::repeat_n(r, BLOCK_RECORDS * extra));
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.bin");
        let file = std::fs::File::create(&path).unwrap();
        let mut w = TraceWriter::new(BufWriter::new(file), &header()).unwrap();
        for r in &recs {
            w.push(r);
        }
        w.finish(Footer::default()).unwrap();
        let mut rd = TraceReader::open(&path).unwrap();
        let mut back = Vec::new();
        while rd.next_block(&mut back).unwrap() {}
        prop_assert_eq!(rd.footer.records, recs.len() as u64);
        prop_assert_eq!(back, recs);
    }
}

#[test]
fn a_trace_without_its_end_mark_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cut.bin");
    let file = std::fs::File::create(&path).unwrap();
    let mut w = TraceWriter::new(BufWriter::new(file), &header()).unwrap();
    for _ in 0..10 {
        w.push(&Record {
            time: 1,
            page: 2,
            node: 0,
            target: 1,
            write: false,
            cached: false,
            count: 3,
        });
    }
    w.finish(Footer::default()).unwrap();
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() - 4]).unwrap();
    let err = TraceReader::open(&path).err().unwrap();
    assert!(err.to_string().contains("not a valid trace"), "{err}");
}
