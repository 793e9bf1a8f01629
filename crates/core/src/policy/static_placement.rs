//! `static`: pages stay where they are first put. The baseline of every paper: first touch
//! (the IRIX default Nikolopoulos compares against), round robin, one fixed node (the
//! "all data on one node" case), and program-directed placement (the NUMA-tuned program
//! versions of LaRowe and Holliday place their own data).

use crate::component::Policy;
use crate::error::ConfigError;
use crate::fields::Fields;
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
    /// (all of them in a UMA variant) are placed by `fallback`.
    Program,
}

/// Parameters of `static`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct StaticConfig {
    /// The placement rule. Default: first-touch.
    pub placement: StaticPlacement,
    /// The node for `fixed` placement. Default: 0.
    #[field(min = 0, max = 63)]
    pub node: u16,
    /// With `program` placement, the rule for pages the program does not place
    /// (`first-touch`, `round-robin` or `fixed`). Default: first-touch.
    pub fallback: StaticPlacement,
}

impl Default for StaticConfig {
    fn default() -> Self {
        StaticConfig {
            placement: StaticPlacement::FirstTouch,
            node: 0,
            fallback: StaticPlacement::FirstTouch,
        }
    }
}

impl crate::registry::Describe for StaticConfig {
    const KIND: &'static str = "static";
    const DESCRIPTION: &'static str = "static placement (first-touch, round-robin, fixed node, program-directed): the papers' baselines";
}

impl crate::component::PolicyParams for StaticConfig {
    fn build(&self, machine: &Machine) -> Result<Box<dyn crate::component::Policy>, ConfigError> {
        Ok(Box::new(StaticPolicy::new(self.clone(), machine)?))
    }
}

inventory::submit!(crate::component::PolicyEntry::of::<StaticConfig>());

/// The static policy.
#[derive(Debug)]
pub struct StaticPolicy {
    config: StaticConfig,
    nodes: u16,
}

impl StaticPolicy {
    /// The initial placement of another policy, configured in its `initial` table: as
    /// [`StaticPolicy::new`], its errors naming `policy.initial.*`.
    pub fn initial(config: StaticConfig, machine: &Machine) -> Result<StaticPolicy, ConfigError> {
        StaticPolicy::new(config, machine).map_err(|e| {
            ConfigError::new(
                e.field.replacen("policy.", "policy.initial.", 1),
                e.message.clone(),
            )
        })
    }

    /// A static policy for `machine`.
    pub fn new(config: StaticConfig, machine: &Machine) -> Result<StaticPolicy, ConfigError> {
        config.check_ranges("policy")?;
        if config.fallback == StaticPlacement::Program {
            return Err(ConfigError::new(
                "policy.fallback",
                "must be first-touch, round-robin or fixed",
            ));
        }
        let fixed = config.placement == StaticPlacement::Fixed
            || (config.placement == StaticPlacement::Program
                && config.fallback == StaticPlacement::Fixed);
        if fixed && config.node as usize >= machine.nodes() {
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

impl StaticPolicy {
    fn rule(&self, rule: StaticPlacement, vpn: Vpn) -> Option<NodeId> {
        match rule {
            StaticPlacement::FirstTouch | StaticPlacement::Program => None,
            StaticPlacement::RoundRobin => Some(NodeId((vpn.0 % self.nodes as u32) as u16)),
            StaticPlacement::Fixed => Some(NodeId(self.config.node)),
        }
    }
}

impl Policy for StaticPolicy {
    fn name(&self) -> &'static str {
        "static"
    }

    fn faults_by_default(&self) -> bool {
        true
    }

    fn replicates(&self) -> bool {
        false
    }

    fn initial_placement(
        &mut self,
        _machine: &Machine,
        vpn: Vpn,
        hint: Option<NodeId>,
    ) -> Option<NodeId> {
        match self.config.placement {
            StaticPlacement::Program => hint.or_else(|| self.rule(self.config.fallback, vpn)),
            rule => self.rule(rule, vpn),
        }
    }
}

#[cfg(test)]
#[path = "tests/static_placement.rs"]
mod tests;
