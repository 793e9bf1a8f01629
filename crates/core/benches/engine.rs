//! Criterion benchmarks of the engine's hot loop: reference runs through mappings.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use numaplace_core::component::WorkloadConfig;
use numaplace_core::machine::{Costs, MachineConfig, Topology};
use numaplace_core::policy::{StaticConfig, StaticPlacement};
use numaplace_core::workload::common::Variant;
use numaplace_core::workload::gups::GupsConfig;
use numaplace_core::workload::{JacobiConfig, MatvecConfig};
use numaplace_core::{PolicyConfig, ReportConfig, RunConfig};

fn machine(page: u64) -> MachineConfig {
    MachineConfig {
        loaded_latency: None,
        preset: "bench".into(),
        description: String::new(),
        nodes: 16,
        procs_per_node: 1,
        frames_per_node: 1 << 16,
        node_frames: Vec::new(),
        memory_only_nodes: 0,
        page_size_bytes: page,
        word_size_bytes: 4,
        topology: Topology::Uniform,
        costs: Costs {
            local_read_ns: 320,
            local_write_ns: 320,
            remote_read_ns: 5000,
            remote_write_ns: 5000,
            cached_read_ns: None,
            page_fault_ns: 230_000,
            migrate_fixed_ns: 250_000,
            replicate_fixed_ns: 0,
            block_transfer_per_word_ns: 1084,
            coherency_fault_fixed_ns: 3000,
            coherency_per_copy_ns: 10_000,
            shootdown_per_node_ns: 7000,
            pte_lock_ns: 0,
            pte_examine_ns: 0,
            module_service_ns: 320,
            remote_module_service_ns: None,
            switch_service_ns: 0,
            operation_delay_ns: 0,
        },
        variation: Default::default(),
        contention: false,
        cache: Default::default(),
        compute_time_pct: 100,
        clock_mhz: None,
    }
}

fn config(page: u64, workload: WorkloadConfig) -> RunConfig {
    RunConfig {
        machine: machine(page),
        workload: Some(workload),
        program: Vec::new(),
        policy: PolicyConfig::new(StaticConfig {
            placement: StaticPlacement::RoundRobin,
            ..Default::default()
        }),
        scheduler: Default::default(),
        seed: 1,
        report: ReportConfig {
            per_page: false,
            series_interval_ns: 0,
            series_by_array: false,
        },
        budget_ns: 0,
    }
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("engine");
    let jacobi = config(
        64,
        WorkloadConfig::new(JacobiConfig {
            n: 256,
            iterations: 4,
            ..Default::default()
        }),
    );
    let ops = jacobi.run().unwrap().ops;
    g.throughput(Throughput::Elements(ops));
    g.bench_function("jacobi-256-64B-pages (ops)", |b| {
        b.iter(|| jacobi.run().unwrap())
    });
    let matvec = config(
        1024,
        WorkloadConfig::new(MatvecConfig {
            n: 512,
            variant: Variant::Uma,
            ..Default::default()
        }),
    );
    let ops = matvec.run().unwrap().ops;
    g.throughput(Throughput::Elements(ops));
    g.bench_function("matvec-512-1KB-pages (ops)", |b| {
        b.iter(|| matvec.run().unwrap())
    });
    // One thread of GUPS on the tiered memory: the queue is idle (the thread runs
    // ahead), so this measures the reference path and operation generation.
    let mut tiered = machine(4096);
    tiered.nodes = 2;
    tiered.memory_only_nodes = 1;
    tiered.costs.local_read_ns = 82;
    tiered.costs.remote_read_ns = 1000;
    let mut gups = config(
        4096,
        WorkloadConfig::new(GupsConfig {
            updates: 200_000,
            working_set_bytes: 256 << 20,
            ..Default::default()
        }),
    );
    gups.machine = tiered;
    gups.policy = PolicyConfig::new(StaticConfig::default());
    let refs = gups.run().unwrap().refs.total;
    g.throughput(Throughput::Elements(refs));
    g.bench_function("gups-256MB-1-thread (references)", |b| {
        b.iter(|| gups.run().unwrap())
    });
    g.finish();

    let mut q = c.benchmark_group("queue");
    for threads in [16u32, 256] {
        q.throughput(Throughput::Elements(100_000));
        q.bench_function(format!("{threads} threads (events)"), |b| {
            b.iter(|| numaplace_core::engine::queue_bench::churn(threads, 100_000))
        });
    }
    q.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
