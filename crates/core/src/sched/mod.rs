//! Schedulers, one file each: `dedicated` never changes anything; `scripted` replays a
//! list of timed changes (e.g. "at 5 ms preempt threads 8..15"); `time-sharing` and
//! `space-sharing` model a multiprogrammed machine's operating system. What a scheduler is
//! (the [`Scheduler`](crate::component::Scheduler) trait, its view of the run and its
//! registry entry) is in [`crate::component::scheduler`].

pub mod dedicated;
#[cfg(test)]
pub(crate) mod fake;
pub mod scripted;
pub mod space_sharing;
pub mod time_sharing;

pub use dedicated::DedicatedConfig;
pub use scripted::{ScriptAction, ScriptEvent, Scripted, ScriptedConfig};
