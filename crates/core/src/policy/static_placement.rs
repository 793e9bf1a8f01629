//! `static`: pages stay where they are first put. The baseline of every paper: first touch
//! (the IRIX default Nikolopoulos compares against), round robin, one fixed node (the
//! "all data on one node" case), and program-directed placement (the NUMA-tuned program
//! versions of LaRowe and Holliday place their own data).

use super::Policy;
use crate::error::ConfigError;
use crate::machine::Machine;
use crate::types::{NodeId, Vpn};
use serde::{Deserialize, Serialize};

/// How a static policy places a page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StaticPlacement {
    /// On the node of the first processor to touch it.
    #[default]
    FirstTouch,
    /// Page `v` on node `v mod nodes`, at time 0.
    RoundRobin,
    /// Every page on node `node`, at time 0.
    Fixed,
    /// Where the program asks (its NUMA variant's placement); pages it says nothing about
    /// fall back to first touch.
    Program,
}

/// Parameters of `static`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StaticConfig {
    /// The placement rule. Default: first-touch.
    pub placement: StaticPlacement,
    /// The node for `fixed` placement. Default: 0.
    pub node: u16,
}

impl Default for StaticConfig {
    fn default() -> Self {
        StaticConfig {
            placement: StaticPlacement::FirstTouch,
            node: 0,
        }
    }
}

/// The static policy.
#[derive(Debug)]
pub struct StaticPolicy {
    config: StaticConfig,
    nodes: u16,
}

impl StaticPolicy {
    /// A static policy for `machine`.
    pub fn new(config: StaticConfig, machine: &Machine) -> Result<StaticPolicy, ConfigError> {
        if config.placement == StaticPlacement::Fixed && config.node as usize >= machine.nodes() {
            return Err(ConfigError::new(
                "policy.node",
                format!(
                    "node {} does not exist (the machine has {})",
                    config.node,
                    machine.nodes()
                ),
            ));
        }
        Ok(StaticPolicy {
            config,
            nodes: machine.nodes() as u16,
        })
    }
}

impl Policy for StaticPolicy {
    fn name(&self) -> &'static str {
        "static"
    }

    fn initial_placement(
        &mut self,
        _machine: &Machine,
        vpn: Vpn,
        hint: Option<NodeId>,
    ) -> Option<NodeId> {
        match self.config.placement {
            StaticPlacement::FirstTouch => None,
            StaticPlacement::RoundRobin => Some(NodeId((vpn.0 % self.nodes as u32) as u16)),
            StaticPlacement::Fixed => Some(NodeId(self.config.node)),
            StaticPlacement::Program => hint,
        }
    }
}
