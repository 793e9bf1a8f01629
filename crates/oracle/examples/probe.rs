use numaplace_oracle::dp::*;
use numaplace_oracle::trace::TraceReader;
use numaplace_oracle::CostModel;
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let mut r = TraceReader::open(std::path::Path::new(&a[1])).unwrap();
    let limit: usize = a[2].parse().unwrap();
    let m = CostModel::of(&numaplace_core::Machine::new(r.header.machine.clone()).unwrap());
    let mut recs = Vec::new();
    while recs.len() < limit && r.next_block(&mut recs).unwrap() {}
    let mut pages: std::collections::BTreeMap<u32, ReplicationDp> = Default::default();
    let mut s = Scratch::new(m.nodes);
    let t = std::time::Instant::now();
    let mut work = 0u64;
    for x in &recs[..limit.min(recs.len())] {
        let p = pages
            .entry(x.page)
            .or_insert_with(|| ReplicationDp::new(m.nodes));
        work += p.bytes() as u64 / 36;
        p.step(
            &m,
            Run {
                node: x.node,
                write: x.write,
                count: x.count,
            },
            &mut s,
        );
    }
    let peak = pages.values().map(|p| p.peak_states).max();
    println!(
        "{} recs {:?} peak {:?} avg live {}",
        limit,
        t.elapsed(),
        peak,
        work as f64 / limit as f64
    );
}
