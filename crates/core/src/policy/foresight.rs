//! `foresight`: Holliday's perfect-knowledge baseline (ASPLOS 1989, section 5.1): "all the
//! pages in a row are migrated just before starting to reference the row".
//!
//! The workload supplies the knowledge: it announces each page it is about to work on
//! ([`crate::component::Op::Advise`]), and the policy migrates the page to the announcing
//! thread's node at once, on that thread's time, with the same locking protocol as the
//! migration daemon (every copy of the page-table entry held while the page moves and the
//! copies are updated). Pages nobody announces stay where they were placed.

use super::holliday_daemon::{locked_migrate, page_table_copies, program_placement};
use super::{StaticConfig, StaticPolicy};
use crate::component::Policy;
use crate::error::ConfigError;
use crate::fields::Fields;
use crate::machine::Machine;
use crate::mm::Mm;
use crate::types::{NodeId, ThreadId, Vpn};
use serde::{Deserialize, Serialize};

/// Parameters of `foresight`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct ForesightConfig {
    /// Initial placement (default: where the program puts its data, first touch for the
    /// rest).
    #[field(nested)]
    pub initial: StaticConfig,
}

impl Default for ForesightConfig {
    fn default() -> Self {
        ForesightConfig {
            initial: program_placement(),
        }
    }
}

impl crate::registry::Describe for ForesightConfig {
    const KIND: &'static str = "foresight";
    const DESCRIPTION: &'static str = "perfect foresight: each page migrates to its user just before use, as the workload announces (Holliday 1989)";
}

impl crate::component::PolicyParams for ForesightConfig {
    fn build(&self, machine: &Machine) -> Result<Box<dyn crate::component::Policy>, ConfigError> {
        Ok(Box::new(Foresight::new(self.clone(), machine)?))
    }
}

inventory::submit!(crate::component::PolicyEntry::of::<ForesightConfig>());

/// The policy.
#[derive(Debug)]
pub struct Foresight {
    initial: StaticPolicy,
}

impl Foresight {
    /// The policy for `machine`.
    pub fn new(config: ForesightConfig, machine: &Machine) -> Result<Foresight, ConfigError> {
        config.check_ranges("policy")?;
        let initial = StaticPolicy::initial(config.initial, machine)?;
        Ok(Foresight { initial })
    }
}

impl Policy for Foresight {
    fn name(&self) -> &'static str {
        "foresight"
    }

    fn faults_by_default(&self) -> bool {
        true
    }

    fn replicates(&self) -> bool {
        false
    }

    fn acquires_ptes(&self) -> bool {
        true
    }

    fn initial_placement(
        &mut self,
        machine: &Machine,
        vpn: Vpn,
        hint: Option<NodeId>,
    ) -> Option<NodeId> {
        self.initial.initial_placement(machine, vpn, hint)
    }

    fn on_advise(&mut self, ctx: &mut dyn Mm, thread: ThreadId, vpn: Vpn) {
        let Some(to) = ctx.thread_nodes().get(thread.idx()).copied().flatten() else {
            return;
        };
        let page = ctx.page(vpn);
        if page.copies.len() != 1 || page.home == to {
            return;
        }
        let copies = page_table_copies(ctx);
        locked_migrate(ctx, vpn, to, &copies);
    }
}

#[cfg(test)]
#[path = "tests/foresight.rs"]
mod tests;
