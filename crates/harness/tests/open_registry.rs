//! A component registered outside the core is read from a configuration file like a
//! built-in one: by its `kind`, with its fields' errors named by file and line.

use numaplace_core::component::{Policy, PolicyEntry, PolicyParams};
use numaplace_core::fields::Fields;
use numaplace_core::registry::Describe;
use numaplace_core::{ConfigError, Machine, NodeId, PolicyConfig, Vpn};
use numaplace_harness::resolve::{resolve_text, Overrides};
use serde::{Deserialize, Serialize};

/// Every page on one node.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
struct CornerConfig {
    /// The node that holds every page.
    #[field(min = 0, max = 63)]
    node: u16,
}

impl Describe for CornerConfig {
    const KIND: &'static str = "corner";
    const DESCRIPTION: &'static str = "every page on one node";
}

impl PolicyParams for CornerConfig {
    fn build(&self, _: &Machine) -> Result<Box<dyn Policy>, ConfigError> {
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

#[test]
fn a_configuration_file_selects_a_policy_registered_outside_the_core() {
    let text = "[policy]\nkind = \"corner\"\nnode = 1\n";
    let cfg = resolve_text("x.toml", text, &Overrides::default()).unwrap();
    assert_eq!(cfg.policy, PolicyConfig::new(CornerConfig { node: 1 }));
}

#[test]
fn an_out_of_range_field_of_a_registered_policy_names_its_line() {
    let text = "[policy]\nkind = \"corner\"\nnode = 99\n";
    let err = resolve_text("x.toml", text, &Overrides::default()).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.starts_with("x.toml:3: policy.node: 99 is out of range"),
        "{msg}"
    );
}
