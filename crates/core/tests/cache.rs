//! The fast cache model against exact LRU on the NAS kernels' address streams (small
//! problem sizes and caches, so the exact line-by-line model runs in a test). Against
//! fully associative LRU the fast model must give the same misses (it is LRU, kept by
//! segments of lines); against 2-way set-associative LRU (the R10000's L2, indexed here
//! by virtual line number) the difference is associativity's, printed as a table
//! (`cargo test -p numaplace-core --test cache -- --nocapture`).

use numaplace_core::cache::{CacheConfig, CacheStats};
use numaplace_core::machine::{Machine, MachineConfig};
use numaplace_core::mm::test_machine_config;
use numaplace_core::workload::nas::{validate_cache, KernelSpec};
use numaplace_core::workload::{nas_bt, nas_cg, nas_ft, nas_lu, nas_mg, nas_sp};

fn machine(cache_bytes: u64) -> Machine {
    let mut m: MachineConfig = test_machine_config(4);
    m.page_size_bytes = 16384;
    m.word_size_bytes = 8;
    m.frames_per_node = 1 << 16;
    m.cache = CacheConfig {
        enabled: true,
        bytes: cache_bytes,
        line_bytes: 128,
        hit_ns: 0,
    };
    Machine::new(m).unwrap()
}

fn kernels() -> Vec<KernelSpec> {
    vec![
        nas_bt::NasBtConfig {
            n: 16,
            iterations: 3,
            ..Default::default()
        }
        .spec(),
        nas_sp::NasSpConfig {
            n: 16,
            iterations: 3,
            ..Default::default()
        }
        .spec(),
        nas_cg::NasCgConfig {
            n: 2000,
            iterations: 3,
            ..Default::default()
        }
        .spec(),
        nas_ft::NasFtConfig {
            n: 16,
            iterations: 3,
            ..Default::default()
        }
        .spec(),
        nas_lu::NasLuConfig {
            n: 16,
            iterations: 3,
            ..Default::default()
        }
        .spec(),
        nas_mg::NasMgConfig {
            n: 32,
            iterations: 3,
            ..Default::default()
        }
        .spec(),
    ]
}

fn error(fast: &CacheStats, exact: &CacheStats) -> f64 {
    (fast.misses as f64 - exact.misses as f64) / exact.misses.max(1) as f64
}

#[test]
fn the_fast_model_misses_exactly_as_fully_associative_lru_on_the_nas_kernels() {
    println!(
        "{:<8} {:>9} {:>5} {:>12} {:>12} {:>12} {:>8}",
        "kernel", "cache", "ways", "lines", "exact miss", "fast miss", "error"
    );
    let mut worst = 0.0f64;
    for spec in kernels() {
        for cache in [32 << 10, 128 << 10, 512 << 10] {
            for ways in [2, usize::MAX] {
                let m = machine(cache);
                if ways == usize::MAX && cache > 128 << 10 {
                    continue; // fully associative search is slow on big caches
                }
                let (fast, exact) = validate_cache(&spec, 4, &m, ways).unwrap();
                let e = error(&fast, &exact);
                worst = worst.max(e.abs());
                println!(
                    "{:<8} {:>8}K {:>5} {:>12} {:>12} {:>12} {:>+7.1}%",
                    spec.name,
                    cache >> 10,
                    if ways == usize::MAX {
                        "full".to_string()
                    } else {
                        ways.to_string()
                    },
                    exact.hits + exact.misses,
                    exact.misses,
                    fast.misses,
                    100.0 * e
                );
                assert_eq!(fast.hits + fast.misses, exact.hits + exact.misses);
                if ways == usize::MAX {
                    assert_eq!(
                        fast.misses,
                        exact.misses,
                        "{} at {} KB",
                        spec.name,
                        cache >> 10
                    );
                }
            }
        }
    }
    println!("largest difference from 2-way LRU {:.1}%", 100.0 * worst);
}
