//! Where each page was during a run, as its references saw it: an opt-in part of a run's
//! record (`locations`), which the run's page draws as a heatmap of pages over time.
//!
//! An observer of the engine's reference runs keeps, per page, the set of nodes holding
//! a copy when the page was last referenced, and notes a change whenever a reference
//! finds another set: `[time_ns, vpn, [nodes]]`, the time being when the reference was
//! issued. A page moved by a daemon shows at its new place from its next reference on;
//! a page never referenced has no entry. There is at most one entry per placement,
//! migration, replication or invalidation of a page, so the list stays far smaller than
//! the run's references. Records without the option are unchanged.

use numaplace_core::memory::PageNames;
use numaplace_core::observe::{ObservedRun, RefObserver};
use numaplace_core::{Monitor, RunConfig, SimError, Stats};
use serde_json::{json, Value};
use std::cell::RefCell;
use std::rc::Rc;

/// One change of a page's location seen by a reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// When the reference that saw it was issued (simulated ns).
    pub time_ns: u64,
    /// The page.
    pub vpn: u32,
    /// The nodes holding a copy, in increasing order.
    pub nodes: Vec<u16>,
}

/// The changes of every page's location over a run, in time order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Locations {
    /// The changes, in the order the references were issued.
    pub changes: Vec<Change>,
}

impl Locations {
    /// The record's `locations` value: `{"changes": [[time_ns, vpn, [nodes]], ...]}`.
    pub fn to_json(&self) -> Value {
        let changes: Vec<Value> = self
            .changes
            .iter()
            .map(|c| json!([c.time_ns, c.vpn, c.nodes]))
            .collect();
        json!({ "changes": changes })
    }

    /// The locations in a record's `locations` value; `None` when it is not one.
    pub fn from_json(v: &Value) -> Option<Locations> {
        let changes = v
            .get("changes")?
            .as_array()?
            .iter()
            .map(|c| {
                let c = c.as_array()?;
                Some(Change {
                    time_ns: c.first()?.as_u64()?,
                    vpn: u32::try_from(c.get(1)?.as_u64()?).ok()?,
                    nodes: c
                        .get(2)?
                        .as_array()?
                        .iter()
                        .map(|n| n.as_u64().and_then(|n| u16::try_from(n).ok()))
                        .collect::<Option<Vec<u16>>>()?,
                })
            })
            .collect::<Option<Vec<Change>>>()?;
        Some(Locations { changes })
    }
}

/// Adds `locations` to a run's record.
pub fn add_to_record(record: &mut Value, loc: &Locations) {
    if let Some(o) = record.as_object_mut() {
        o.insert("locations".into(), loc.to_json());
    }
}

/// The last set of nodes each page's references found, and the changes.
struct Tracker {
    /// Words of a node set on this machine.
    words: usize,
    /// Per page, `words` words of its last seen set (all zero: not seen yet).
    last: Vec<u64>,
    changes: Vec<Change>,
}

impl Tracker {
    fn see(&mut self, run: &ObservedRun) {
        let page = run.vpn.0 as usize;
        let end = (page + 1) * self.words;
        if self.last.len() < end {
            self.last.resize(end, 0);
        }
        let mut differs = false;
        for (i, w) in self.last[page * self.words..end].iter_mut().enumerate() {
            let now = run.copies.word(i);
            if *w != now {
                *w = now;
                differs = true;
            }
        }
        if differs {
            self.changes.push(Change {
                time_ns: run.start.0,
                vpn: run.vpn.0,
                nodes: run.copies.iter().map(|n| n.0).collect(),
            });
        }
    }
}

struct Observer(Rc<RefCell<Tracker>>);

impl RefObserver for Observer {
    fn reference(&mut self, run: &ObservedRun) {
        self.0.borrow_mut().see(run);
    }
}

/// Runs `cfg` as [`crate::run_monitored`] does, watching where its pages are: the
/// statistics, the arrays on each page, and the locations. The results are those of the
/// run without the watch, bit for bit.
pub fn run_located(
    cfg: &RunConfig,
    monitor: Option<(Box<dyn Monitor>, u64)>,
) -> Result<(Stats, PageNames, Locations), SimError> {
    let mut engine = cfg.engine()?;
    if let Some((m, every)) = monitor {
        engine.set_monitor(m, every);
    }
    let tracker = Rc::new(RefCell::new(Tracker {
        words: (cfg.machine.nodes as usize).div_ceil(64).max(1),
        last: Vec::new(),
        changes: Vec::new(),
    }));
    engine.set_observer(Box::new(Observer(tracker.clone())));
    let data = if cfg.report.per_page {
        engine.page_data()
    } else {
        PageNames::default()
    };
    let stats = engine.run()?;
    let changes = std::mem::take(&mut tracker.borrow_mut().changes);
    Ok((stats, data, Locations { changes }))
}

/// Runs `cfg` as `numaplace run` does: watching where its pages are when `located` (as
/// [`run_located`]), else as [`crate::run_monitored`].
#[allow(clippy::type_complexity)]
pub fn run_maybe_located(
    cfg: &RunConfig,
    monitor: Option<(Box<dyn Monitor>, u64)>,
    located: bool,
) -> Result<(Stats, PageNames, Option<Locations>), SimError> {
    if located {
        run_located(cfg, monitor).map(|(s, d, l)| (s, d, Some(l)))
    } else {
        crate::run_monitored(cfg, monitor).map(|(s, d)| (s, d, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{resolve, Overrides};

    fn gauss_platinum() -> RunConfig {
        let ov = Overrides {
            workload: Some("gauss".into()),
            policy: Some("platinum".into()),
            sets: vec!["workload.n=64".into()],
            ..Default::default()
        };
        resolve(None, &ov).unwrap()
    }

    #[test]
    fn watching_the_locations_leaves_the_results_as_they_were() {
        let cfg = gauss_platinum();
        let plain = crate::run_to_json(&cfg).unwrap();
        let (stats, data, loc) = run_located(&cfg, None).unwrap();
        assert_eq!(crate::result::stats_json(&cfg, &stats, &data), plain.json);
        assert!(!loc.changes.is_empty());
        assert!(loc.changes.windows(2).all(|w| w[0].time_ns <= w[1].time_ns));
    }

    #[test]
    fn every_page_referenced_is_seen_with_a_copy_somewhere() {
        let cfg = gauss_platinum();
        let (stats, _, loc) = run_located(&cfg, None).unwrap();
        for p in stats.pages.iter().filter(|p| p.refs.total > 0) {
            let seen: Vec<&Change> = loc.changes.iter().filter(|c| c.vpn == p.vpn).collect();
            assert!(!seen.is_empty(), "page {} referenced but never seen", p.vpn);
            assert!(seen.iter().all(|c| !c.nodes.is_empty()));
        }
        // Replication shows as a page seen on several nodes.
        if stats.events.replications > 0 {
            assert!(loc.changes.iter().any(|c| c.nodes.len() > 1));
        }
    }

    #[test]
    fn the_record_value_reads_back() {
        let loc = Locations {
            changes: vec![
                Change {
                    time_ns: 5,
                    vpn: 2,
                    nodes: vec![1],
                },
                Change {
                    time_ns: 9,
                    vpn: 2,
                    nodes: vec![1, 3],
                },
            ],
        };
        let v = loc.to_json();
        assert_eq!(v, json!({"changes": [[5, 2, [1]], [9, 2, [1, 3]]]}));
        assert_eq!(Locations::from_json(&v), Some(loc));
        assert_eq!(Locations::from_json(&json!({"changes": [[1, 2]]})), None);
    }
}
