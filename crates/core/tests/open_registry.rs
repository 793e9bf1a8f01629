//! The registries are open: a policy declared and registered outside the core (here, in
//! this test) is listed, parsed by its `kind`, serialized, range-checked and run like a
//! built-in one. Its whole declaration is below: one file, one `submit!` line.

use numaplace_core::component::WorkloadConfig;
use numaplace_core::component::{Policy, PolicyEntry, PolicyParams};
use numaplace_core::fields::Fields;
use numaplace_core::registry::Describe;
use numaplace_core::workload::JacobiConfig;
use numaplace_core::{ConfigError, Machine, NodeId, PolicyConfig, RunConfig, Vpn};
use serde::{Deserialize, Serialize};

/// Every page on one node, whatever touches it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
struct CornerConfig {
    /// The node that holds every page.
    #[field(min = 0, max = 63)]
    node: u16,
}

impl Default for CornerConfig {
    fn default() -> Self {
        CornerConfig { node: 1 }
    }
}

impl Describe for CornerConfig {
    const KIND: &'static str = "corner";
    const DESCRIPTION: &'static str = "every page on one node (a test's own policy)";
}

impl PolicyParams for CornerConfig {
    fn build(&self, machine: &Machine) -> Result<Box<dyn Policy>, ConfigError> {
        if self.node as usize >= machine.nodes() {
            return Err(ConfigError::new("policy.node", "no such node"));
        }
        Ok(Box::new(Corner(NodeId(self.node))))
    }
}

numaplace_core::inventory::submit!(PolicyEntry::of::<CornerConfig>());

struct Corner(NodeId);

impl Policy for Corner {
    fn name(&self) -> &'static str {
        "corner"
    }
    fn initial_placement(&mut self, _: &Machine, _: Vpn, _: Option<NodeId>) -> Option<NodeId> {
        Some(self.0)
    }
}

fn run_with(policy: PolicyConfig) -> numaplace_core::Stats {
    RunConfig {
        machine: numaplace_core::mm::test_machine_config(2),
        workload: Some(WorkloadConfig::new(JacobiConfig {
            n: 16,
            iterations: 2,
            threads: Some(2),
            ..JacobiConfig::default()
        })),
        program: Vec::new(),
        policy,
        scheduler: Default::default(),
        seed: 1,
        report: Default::default(),
        budget_ns: 0,
    }
    .run()
    .unwrap()
}

#[test]
fn a_policy_registered_outside_the_core_is_listed_with_its_description() {
    assert!(PolicyConfig::kinds().contains(&"corner"));
    let listed = PolicyConfig::all();
    let corner = listed.iter().find(|p| p.kind() == "corner").unwrap();
    assert_eq!(corner.describe(), CornerConfig::DESCRIPTION);
    assert_eq!(corner.fields()[0].name, "node");
}

#[test]
fn a_policy_registered_outside_the_core_is_parsed_by_its_kind() {
    let table = serde_json::json!({ "node": 0 });
    let parsed = PolicyConfig::deserialize_kind("corner", table)
        .unwrap()
        .unwrap();
    assert_eq!(parsed, PolicyConfig::new(CornerConfig { node: 0 }));
}

#[test]
fn an_unknown_parameter_of_a_registered_policy_is_refused_by_name() {
    let table = serde_json::json!({ "nod": 0 });
    let err = PolicyConfig::deserialize_kind("corner", table)
        .unwrap()
        .unwrap_err();
    assert!(err.to_string().contains("unknown field `nod`"), "{err}");
}

#[test]
fn a_registered_policy_serializes_as_a_table_with_its_kind_first() {
    let text = serde_json::to_string(&PolicyConfig::new(CornerConfig { node: 1 })).unwrap();
    assert_eq!(text, r#"{"kind":"corner","node":1}"#);
    let back: PolicyConfig = serde_json::from_str(&text).unwrap();
    assert_eq!(back, PolicyConfig::new(CornerConfig { node: 1 }));
}

#[test]
fn a_registered_policy_checks_its_declared_ranges() {
    let err = PolicyConfig::new(CornerConfig { node: 64 })
        .check_ranges("policy")
        .unwrap_err();
    assert_eq!(err.field, "policy.node");
}

#[test]
fn a_registered_policy_runs_in_the_engine() {
    let stats = run_with(PolicyConfig::new(CornerConfig { node: 1 }));
    assert!(!stats.pages.is_empty());
    assert!(stats.pages.iter().all(|p| p.home == 1));
    // First touch spreads the grids over both nodes; the corner policy does not.
    let first_touch = run_with(PolicyConfig::default());
    assert!(first_touch.pages.iter().any(|p| p.home == 0));
}

#[test]
fn a_configuration_naming_an_unregistered_kind_is_refused_with_the_known_kinds() {
    let err = serde_json::from_str::<PolicyConfig>(r#"{"kind":"nosuch"}"#).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("unknown policy `nosuch`"), "{msg}");
    assert!(msg.contains("corner") && msg.contains("static"), "{msg}");
}
