//! `static`: pages stay where they are first put. The baseline of every paper: first touch
//! (the IRIX default Nikolopoulos compares against), round robin, one fixed node (the
//! "all data on one node" case), and program-directed placement (the NUMA-tuned program
//! versions of LaRowe and Holliday place their own data).

use super::Policy;
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

impl crate::policy::PolicyParams for StaticConfig {
    fn build(&self, machine: &Machine) -> Result<Box<dyn crate::policy::Policy>, ConfigError> {
        Ok(Box::new(StaticPolicy::new(self.clone(), machine)?))
    }
}

inventory::submit!(crate::policy::PolicyEntry::of::<StaticConfig>());

/// The static policy.
#[derive(Debug)]
pub struct StaticPolicy {
    config: StaticConfig,
    nodes: u16,
}

impl StaticPolicy {
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
mod tests {
    use super::*;
    use crate::history::HistoryMode;
    use crate::memory::Access;
    use crate::mm::{Action, Mm, Recording};
    use crate::policy::Fault;
    use crate::types::ThreadId;

    fn machine() -> Machine {
        Machine::new(crate::mm::test_machine_config(4)).unwrap()
    }

    fn policy(placement: StaticPlacement, fallback: StaticPlacement) -> StaticPolicy {
        let config = StaticConfig {
            placement,
            node: 2,
            fallback,
        };
        StaticPolicy::new(config, &machine()).unwrap()
    }

    #[test]
    fn first_touch_places_a_faulting_page_on_the_faulting_node_and_maps_it() {
        let mut p = policy(StaticPlacement::FirstTouch, StaticPlacement::FirstTouch);
        let mut rec = Recording::new(machine(), 4, HistoryMode::None);
        let (vpn, node) = (Vpn(3), NodeId(1));
        p.on_fault(
            &mut rec,
            Fault {
                thread: ThreadId(1),
                node,
                vpn,
                write: false,
            },
        );
        assert_eq!(
            rec.actions(),
            [
                Action::PlaceNear(vpn, node),
                Action::MapNearest(vpn, node, Access::Read)
            ]
        );
        assert_eq!(rec.page(vpn).home, node);
        assert!(rec.mapping(vpn, node).access >= Access::Read);
    }

    #[test]
    fn first_touch_leaves_initial_placement_to_the_first_fault() {
        let mut p = policy(StaticPlacement::FirstTouch, StaticPlacement::FirstTouch);
        assert_eq!(
            p.initial_placement(&machine(), Vpn(5), Some(NodeId(3))),
            None
        );
    }

    #[test]
    fn round_robin_deals_pages_to_nodes_in_turn() {
        let mut p = policy(StaticPlacement::RoundRobin, StaticPlacement::FirstTouch);
        let m = machine();
        let nodes: Vec<_> = (0..6)
            .map(|v| p.initial_placement(&m, Vpn(v), None))
            .collect();
        let expect: Vec<_> = [0, 1, 2, 3, 0, 1].map(|n| Some(NodeId(n))).to_vec();
        assert_eq!(nodes, expect);
    }

    #[test]
    fn fixed_places_every_page_on_the_configured_node() {
        let mut p = policy(StaticPlacement::Fixed, StaticPlacement::FirstTouch);
        assert_eq!(
            p.initial_placement(&machine(), Vpn(7), None),
            Some(NodeId(2))
        );
    }

    #[test]
    fn program_placement_follows_the_hint_and_falls_back_without_one() {
        let mut p = policy(StaticPlacement::Program, StaticPlacement::RoundRobin);
        let m = machine();
        assert_eq!(
            p.initial_placement(&m, Vpn(1), Some(NodeId(3))),
            Some(NodeId(3))
        );
        assert_eq!(p.initial_placement(&m, Vpn(1), None), Some(NodeId(1)));
    }

    #[test]
    fn a_fixed_node_the_machine_lacks_is_refused() {
        let config = StaticConfig {
            placement: StaticPlacement::Fixed,
            node: 9,
            fallback: StaticPlacement::FirstTouch,
        };
        let e = StaticPolicy::new(config, &machine()).unwrap_err();
        assert_eq!(e.field, "policy.node");
    }
}
