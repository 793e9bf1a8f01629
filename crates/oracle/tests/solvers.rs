//! The solvers against brute-force enumeration of every schedule, on random small
//! traces and machines (uniform, distance matrix, cached reads).

use numaplace_core::mm::test_machine_config;
use numaplace_core::{Machine, Topology};
use numaplace_oracle::brute;
use numaplace_oracle::dp::{
    merged, migration_optimum, price_copy_schedule, replication_bound, replication_optimum,
    replication_schedule, Run,
};
use numaplace_oracle::CostModel;
use proptest::prelude::*;

#[derive(Clone, Debug)]
struct Costs {
    remote: u64,
    migrate: u64,
    replicate: u64,
    coh_fixed: u64,
    per_copy: u64,
    distance: Option<Vec<u32>>,
    cached: Option<u64>,
}

fn model(nodes: u16, c: &Costs) -> CostModel {
    let mut m = test_machine_config(nodes);
    m.page_size_bytes = 4;
    m.costs.local_read_ns = 10;
    m.costs.local_write_ns = 12;
    m.costs.remote_read_ns = 10 + c.remote;
    m.costs.remote_write_ns = 12 + c.remote;
    m.costs.migrate_fixed_ns = c.migrate;
    m.costs.replicate_fixed_ns = c.replicate;
    m.costs.block_transfer_per_word_ns = 0;
    m.costs.coherency_fault_fixed_ns = c.coh_fixed;
    m.costs.coherency_per_copy_ns = c.per_copy;
    m.costs.cached_read_ns = c.cached;
    if let Some(d) = &c.distance {
        let n = nodes as usize;
        let matrix = (0..n)
            .map(|a| {
                (0..n)
                    .map(|b| if a == b { 10 } else { d[(a * n + b) % d.len()] })
                    .collect()
            })
            .collect();
        m.topology = Topology::Distance {
            matrix,
            reference_distance: Some(20),
        };
    }
    CostModel::of(&Machine::new(m).unwrap())
}

fn costs() -> impl Strategy<Value = Costs> {
    (
        0u64..60,
        0u64..400,
        0u64..400,
        0u64..200,
        0u64..100,
        proptest::option::of(proptest::collection::vec(11u32..40, 9)),
        proptest::option::of(1u64..20),
    )
        .prop_map(
            |(remote, migrate, replicate, coh_fixed, per_copy, distance, cached)| Costs {
                remote,
                migrate,
                replicate,
                coh_fixed,
                per_copy,
                distance,
                cached,
            },
        )
}

fn runs(nodes: u16, max: usize) -> impl Strategy<Value = Vec<Run>> {
    proptest::collection::vec(
        (0..nodes, proptest::bool::weighted(0.35), 1u32..30).prop_map(|(node, write, count)| Run {
            node,
            write,
            count,
        }),
        0..=max,
    )
}

fn static_cost(m: &CostModel, runs: &[Run], home: usize) -> u64 {
    runs.iter()
        .map(|r| {
            let a = r.node as usize;
            r.count as u64
                * if r.write {
                    m.write(a, home)
                } else {
                    m.read(a, home)
                }
        })
        .sum()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn migration_dp_equals_brute_force_enumeration(
        (nodes, runs, c) in (2u16..=4).prop_flat_map(|n| (Just(n), runs(n, 6), costs()))
    ) {
        let m = model(nodes, &c);
        prop_assert_eq!(migration_optimum(&m, &runs).total(), brute::migration(&m, &runs));
    }

    #[test]
    fn replication_dp_equals_brute_force_enumeration(
        (nodes, runs, c) in (2u16..=3).prop_flat_map(|n| (Just(n), runs(n, 5), costs()))
    ) {
        let m = model(nodes, &c);
        prop_assert_eq!(replication_optimum(&m, &runs).total(), brute::replication(&m, &runs));
    }

    #[test]
    fn static_placement_never_beats_either_optimum(
        (nodes, runs, c) in (2u16..=5).prop_flat_map(|n| (Just(n), runs(n, 40), costs()))
    ) {
        let m = model(nodes, &c);
        let best_static = (0..nodes as usize).map(|h| static_cost(&m, &runs, h)).min().unwrap();
        let mig = migration_optimum(&m, &runs).total();
        let rep = replication_optimum(&m, &runs).total();
        prop_assert!(mig <= best_static);
        prop_assert!(rep <= mig);
    }

    #[test]
    fn merging_runs_of_one_node_and_kind_keeps_both_optima(
        (nodes, runs, c) in (2u16..=3).prop_flat_map(|n| (Just(n), runs(n, 12), costs()))
    ) {
        let m = model(nodes, &c);
        let short = merged(&runs);
        prop_assert_eq!(migration_optimum(&m, &short).total(), migration_optimum(&m, &runs).total());
        prop_assert_eq!(replication_optimum(&m, &short).total(), replication_optimum(&m, &runs).total());
    }

    #[test]
    fn the_replication_bound_never_exceeds_the_replication_optimum(
        (nodes, runs, c) in (2u16..=4).prop_flat_map(|n| (Just(n), runs(n, 30), costs()))
    ) {
        let m = model(nodes, &c);
        prop_assert!(replication_bound(&m, &runs) <= replication_optimum(&m, &runs).total());
    }

    #[test]
    fn the_replication_traceback_costs_exactly_the_optimum(
        (nodes, runs, c) in (2u16..=5).prop_flat_map(|n| (Just(n), runs(n, 40), costs()))
    ) {
        let m = model(nodes, &c);
        for runs in [runs.clone(), merged(&runs)] {
            let opt = replication_optimum(&m, &runs);
            let sched = replication_schedule(&m, &runs);
            prop_assert_eq!(sched.cost, opt);
            // Priced independently of the programme, part by part.
            let priced = price_copy_schedule(&m, &runs, &sched);
            prop_assert_eq!(priced, Ok(opt), "{:?}", sched);
        }
    }

    #[test]
    fn optimum_parts_add_up_to_its_total(
        (nodes, runs, c) in (2u16..=4).prop_flat_map(|n| (Just(n), runs(n, 30), costs()))
    ) {
        let m = model(nodes, &c);
        let r = replication_optimum(&m, &runs);
        prop_assert_eq!(r.refs + r.moves + r.coherency, r.total());
        let words: u64 = runs.iter().map(|r| r.count as u64).sum();
        prop_assert!(r.refs >= words * c.cached.unwrap_or(10).min(10));
    }
}

#[test]
fn a_page_written_by_two_nodes_in_turn_stays_put_when_moving_costs_more() {
    let m = model(
        2,
        &Costs {
            remote: 40,
            migrate: 10_000,
            replicate: 10_000,
            coh_fixed: 0,
            per_copy: 0,
            distance: None,
            cached: None,
        },
    );
    let runs: Vec<Run> = (0..6)
        .map(|i| Run {
            node: i % 2,
            write: true,
            count: 10,
        })
        .collect();
    let opt = migration_optimum(&m, &runs);
    assert_eq!(opt.moves, 0);
    assert_eq!(opt.total(), 3 * 10 * 12 + 3 * 10 * 52);
}
