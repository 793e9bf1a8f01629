//! Every registered machine, workload, policy and scheduler resolves and runs.

use numaplace_core::component::{SchedulerConfig, WorkloadConfig};
use numaplace_core::PolicyConfig;
use numaplace_harness::{presets, resolve, run_to_json, Overrides};

mod common;
use common::small;

#[test]
fn every_machine_workload_and_policy_runs() {
    for machine in presets::names() {
        for w in WorkloadConfig::all() {
            for p in PolicyConfig::all() {
                let ov = Overrides {
                    machine: Some(machine.to_string()),
                    workload: Some(w.kind().to_string()),
                    policy: Some(p.kind().to_string()),
                    seed: Some(1),
                    sets: small(w.kind()),
                };
                let cfg = match resolve(None, &ov) {
                    Ok(cfg) => cfg,
                    // A tiering policy refuses a machine of one tier, clearly.
                    Err(e) if e.to_string().contains("needs a slow tier") => {
                        assert_eq!(
                            presets::preset_table(machine)
                                .unwrap()
                                .get("memory_only_nodes"),
                            None
                        );
                        continue;
                    }
                    Err(e) => panic!("{machine}/{}/{}: {e}", w.kind(), p.kind()),
                };
                let out = run_to_json(&cfg)
                    .unwrap_or_else(|e| panic!("{machine}/{}/{}: {e}", w.kind(), p.kind()));
                assert!(out.stats.makespan_ns > 0);
                assert_eq!(out.json["config"]["machine"]["preset"], machine);
            }
        }
    }
}

#[test]
fn every_scheduler_resolves_by_name() {
    for s in SchedulerConfig::all() {
        let ov = Overrides {
            sets: vec![
                format!("scheduler.kind=\"{}\"", s.kind()),
                "workload.n=64".into(),
            ],
            ..Default::default()
        };
        let cfg = resolve(None, &ov).unwrap();
        assert_eq!(cfg.scheduler.kind(), s.kind());
    }
}

#[test]
fn presets_round_trip_through_the_typed_config() {
    for name in presets::names() {
        let table = presets::preset_table(name).unwrap();
        let m: numaplace_core::MachineConfig = toml::Value::Table(table).try_into().unwrap();
        numaplace_core::Machine::new(m).unwrap();
    }
}

fn preset(name: &str) -> numaplace_core::MachineConfig {
    toml::Value::Table(presets::preset_table(name).unwrap())
        .try_into()
        .unwrap()
}

#[test]
fn presets_of_the_papers_machines_vary_from_run_to_run_and_queue() {
    for name in ["butterfly-plus", "butterfly-plus-sat", "gp1000", "tc2000"] {
        let m = preset(name);
        assert!(!m.variation.is_off(), "{name}: variation");
        assert!(m.contention, "{name}: contention");
    }
    assert!(!preset("origin2000").variation.is_off());
}

#[test]
fn the_local_only_reference_machine_neither_varies_nor_queues() {
    let m = preset("butterfly-plus-local");
    assert!(m.variation.is_off());
    assert!(!m.contention);
}
