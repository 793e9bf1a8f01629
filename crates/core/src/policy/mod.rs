//! Placement policies, one file each, named as in the papers. What a policy is (the
//! [`Policy`](crate::component::Policy) trait, its hook types and registry entry) is in
//! [`crate::component::policy`].

pub mod colloid;
pub mod damon;
pub mod dunx;
pub mod foresight;
pub mod hemem;
pub mod holliday_daemon;
pub mod irix_competitive;
pub mod linux_numa_balancing;
pub mod linux_tiering;
pub mod memtis;
mod numa_scan;
pub mod platinum;
pub mod sched_activated;
pub mod static_placement;
#[cfg(test)]
#[path = "tests/faults_by_default.rs"]
mod test_faults_by_default;
#[cfg(test)]
#[path = "tests/scene.rs"]
mod test_scene;
mod tiers;
pub mod tpp;

pub use colloid::{Colloid, ColloidConfig};
pub use damon::{Damon, DamonConfig};
pub use dunx::{DunxConfig, DunxPolicy, LaroweConfig};
pub use foresight::{Foresight, ForesightConfig};
pub use hemem::{Hemem, HememConfig};
pub use holliday_daemon::{HollidayConfig, HollidayDaemon};
pub use linux_numa_balancing::{LinuxNumaBalancing, LinuxNumaBalancingConfig};
pub use linux_tiering::{LinuxTiering, LinuxTieringConfig};
pub use memtis::{Memtis, MemtisConfig};
pub use platinum::{PlatinumConfig, PlatinumPolicy};
pub use sched_activated::{SchedActivated, SchedActivatedConfig};
pub use static_placement::{StaticConfig, StaticPlacement, StaticPolicy};
pub use tpp::{Tpp, TppConfig};
