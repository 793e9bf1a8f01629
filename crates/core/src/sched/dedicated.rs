//! `dedicated`: one thread per processor, never preempted or moved (the papers' setting).

use super::Scripted;
use crate::component::{Scheduler, SchedulerParams};
use crate::fields::Fields;
use serde::{Deserialize, Serialize};

/// Parameters of `dedicated`.
#[derive(Clone, Debug, PartialEq, Eq, Default, Serialize, Deserialize, Fields)]
#[serde(default, deny_unknown_fields)]
pub struct DedicatedConfig {
    /// Processor of thread 0; thread i runs on processor `first_proc + i`. Default 0.
    #[field(min = 0, max = 65_535)]
    pub first_proc: u16,
}

impl crate::registry::Describe for DedicatedConfig {
    const KIND: &'static str = "dedicated";
    const DESCRIPTION: &'static str = "one thread per processor, never preempted or moved";
}

impl SchedulerParams for DedicatedConfig {
    fn build(&self) -> Box<dyn Scheduler> {
        // Dedicated is the scripted scheduler with an empty script.
        Box::new(Scripted::new(self.first_proc, Vec::new()))
    }
}

inventory::submit!(crate::component::SchedulerEntry::of::<DedicatedConfig>());
