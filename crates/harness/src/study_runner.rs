//! The simulator as a [`Runner`] of the experiment machinery: each run point's
//! configuration is resolved exactly like a `numaplace run --config` file.

use crate::analysis::{run_analysis, AnalysisConfig};
use crate::{admit, resolve, run_to_json, Limits, Overrides, RunConfig, UserError};
use numaplace_oracle::solve::SolveOptions;
use numaplace_study::{RunPoint, Runner};
use serde_json::Value;

/// Runs sweep points through the simulator.
///
/// Unlike `numaplace run`, a sweep point keeps the per-page report only when its
/// configuration asks for it (`report.per_page = true`): a sweep holds many runs, and
/// per-page detail is most of a run's record.
///
/// Every simulation point is held to `limits` when the sweep is planned, so a point too
/// large for the host is refused before the first run, naming the point and the field.
/// A sweep runs several points at once: give it the host's limits divided among them
/// ([`Limits::shared`]).
#[derive(Clone, Debug)]
pub struct SimRunner {
    /// What one point may need.
    pub limits: Limits,
}

impl Default for SimRunner {
    /// No limits.
    fn default() -> Self {
        SimRunner {
            limits: Limits::none(),
        }
    }
}

impl SimRunner {
    /// A runner holding every point to `limits`.
    pub fn with_limits(limits: Limits) -> SimRunner {
        SimRunner { limits }
    }
}

/// A point resolved and ready to run.
enum Prepared {
    /// A cost analysis on a machine (a point with an `[analysis]` table).
    Analysis(Box<RunConfig>, AnalysisConfig),
    /// A simulation.
    Simulation(Box<RunConfig>),
    /// A simulation whose record also holds the offline optimum of its trace and the
    /// policy's regret (a point with an `[oracle]` table).
    Oracle(Box<RunConfig>, SolveOptions),
}

/// A point's `[oracle]` table: the record gains `oracle` (the optimum, the policy's cost
/// in the same model and the regret, as `numaplace oracle --json` gives them) and a
/// top-level `regret` (against the replication model's optimum when it was solved, else the
/// migration-only one for a policy that never replicated) when it is known exactly, and
/// `regret_at_most` always: the exact regret, or an upper bound when only that is known (a
/// policy that replicated, the replication model not solved).
#[derive(Clone, Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct OracleTable {
    /// Solve the replication model too (machines of at most 16 nodes). Default true.
    #[serde(default = "yes")]
    replication: bool,
    /// Work the replication model may take before it is given up.
    #[serde(default = "default_budget")]
    replication_budget: u64,
    /// Trace passes the capacity relaxation may make where a node's frames are fewer
    /// than the pages referenced (0: not computed).
    #[serde(default = "default_capacity_passes")]
    capacity_passes: u32,
    /// Windows of the run the capacity relaxation prices apart (1 to 64).
    #[serde(default = "one")]
    capacity_windows: usize,
}

fn default_capacity_passes() -> u32 {
    numaplace_oracle::capacity::DEFAULT_CAPACITY_PASSES
}

fn one() -> usize {
    1
}

fn yes() -> bool {
    true
}

fn default_budget() -> u64 {
    numaplace_oracle::solve::DEFAULT_REPLICATION_BUDGET
}

/// A temporary trace file, removed when dropped.
struct TempTrace(std::path::PathBuf);

impl TempTrace {
    fn new(id: &str) -> TempTrace {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        TempTrace(std::env::temp_dir().join(format!(
            "numaplace-sweep-{}-{id}-{n}.trace",
            std::process::id()
        )))
    }
}

impl Drop for TempTrace {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Resolves a point's configuration: everything `run` needs, validated, nothing run.
fn prepare(point: &RunPoint) -> Result<Prepared, UserError> {
    let mut table = point.config.clone();
    default_per_page_off(&mut table);
    // A point with an `[analysis]` table evaluates a cost analysis on its machine
    // instead of simulating (e.g. PLATINUM's Table 1).
    if let Some(a) = table.remove("analysis") {
        let analysis: AnalysisConfig = a.try_into().map_err(|e: toml::de::Error| {
            UserError::new(format!("{}: analysis: {}", point.id, e.message()))
        })?;
        let cfg = resolve(Some((&point.id, table)), &Overrides::default())?;
        return Ok(Prepared::Analysis(Box::new(cfg), analysis));
    }
    let oracle = match table.remove("oracle") {
        Some(o) => {
            let t: OracleTable = o.try_into().map_err(|e: toml::de::Error| {
                UserError::new(format!("{}: oracle: {}", point.id, e.message()))
            })?;
            if !(1..=numaplace_oracle::capacity::MAX_WINDOWS).contains(&t.capacity_windows) {
                return Err(UserError::new(format!(
                    "{}: oracle: capacity_windows = {}: expected 1 to {}",
                    point.id,
                    t.capacity_windows,
                    numaplace_oracle::capacity::MAX_WINDOWS
                )));
            }
            Some(SolveOptions {
                replication: t.replication,
                replication_budget: t.replication_budget,
                capacity: numaplace_oracle::capacity::CapacityOptions {
                    passes: t.capacity_passes,
                    windows: t.capacity_windows,
                },
            })
        }
        None => None,
    };
    let cfg = resolve(Some((&point.id, table)), &Overrides::default())?;
    Ok(match oracle {
        Some(opts) => Prepared::Oracle(Box::new(cfg), opts),
        None => Prepared::Simulation(Box::new(cfg)),
    })
}

/// Sets `report.per_page = false` unless the configuration sets it. A `report` that is
/// not a table is left for `resolve` to reject.
fn default_per_page_off(table: &mut toml::Table) {
    let report = table
        .entry("report")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    if let toml::Value::Table(r) = report {
        r.entry("per_page").or_insert(toml::Value::Boolean(false));
    }
}

impl Runner for SimRunner {
    fn run(&self, point: &RunPoint) -> anyhow::Result<Value> {
        match prepare(point)? {
            Prepared::Analysis(cfg, analysis) => Ok(run_analysis(&cfg.machine, &analysis)?),
            Prepared::Simulation(cfg) => {
                let mut out = run_to_json(&cfg)?;
                // Without the per-page report, `pages` is an empty list: leave it out.
                if !cfg.report.per_page {
                    if let Some(o) = out.json.as_object_mut() {
                        o.remove("pages");
                    }
                }
                Ok(out.json)
            }
            Prepared::Oracle(cfg, opts) => {
                let trace = TempTrace::new(&point.id);
                let (mut out, sol) = crate::oracle::run_with_oracle(&cfg, &trace.0, opts)?;
                if let Some(o) = out.json.as_object_mut() {
                    // The record comes without its per-page list; with the per-page
                    // report on, a study's record holds it.
                    if cfg.report.per_page {
                        o.insert(
                            "pages".into(),
                            crate::result::pages_json(&out.stats, &out.page_data),
                        );
                    }
                    // A policy that replicated, measured against the migration-only
                    // optimum, has no regret to report (that optimum is no bound for it):
                    // only the upper bound from the replication model's relaxation.
                    // `regret_at_most` is always there (the exact regret bounds itself), so
                    // a claim on it reads the same whether or not the model was solved.
                    let most = match sol.regret_at_most() {
                        Some(most) => most,
                        None => {
                            o.insert("regret".into(), serde_json::json!(sol.regret()));
                            sol.regret()
                        }
                    };
                    o.insert("regret_at_most".into(), serde_json::json!(most));
                    let mut oracle = crate::oracle::oracle_json(&sol, false);
                    // A record holds only what the configuration and seed determine: the
                    // solver's wall-clock time and throughput stay out.
                    if let Some(t) = oracle.as_object_mut() {
                        for k in ["solve_seconds", "runs_per_second", "references_per_second"] {
                            t.remove(k);
                        }
                    }
                    o.insert("oracle".into(), oracle);
                }
                Ok(out.json)
            }
        }
    }

    /// Resolves the configuration exactly as [`SimRunner::run`] does, without running
    /// it. An analysis is a formula over the machine's costs: checking evaluates it,
    /// so its values are checked too.
    fn check(&self, point: &RunPoint) -> anyhow::Result<()> {
        match prepare(point)? {
            Prepared::Analysis(cfg, analysis) => {
                run_analysis(&cfg.machine, &analysis)?;
            }
            Prepared::Simulation(cfg) | Prepared::Oracle(cfg, _) => {
                admit(&cfg, &self.limits)
                    .map_err(|e| UserError::new(format!("{}: {e}", point.id)))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(config: &str) -> RunPoint {
        let mut config: toml::Table = config.parse().expect("test config parses");
        config.insert("seed".into(), toml::Value::Integer(1));
        RunPoint {
            index: 3,
            id: "r000003".into(),
            settings: Vec::new(),
            trial: 0,
            seed: 1,
            config,
        }
    }

    const SMALL: &str = "[workload]\nkind = \"jacobi\"\nn = 64\niterations = 1\n";

    #[test]
    fn a_point_with_an_oracle_table_records_the_optimum_and_the_regret() {
        let asked = format!("{SMALL}[oracle]\nreplication = true\n");
        let v = SimRunner::default().run(&point(&asked)).unwrap();
        let regret = v["regret"].as_f64().unwrap();
        assert!(regret >= 1.0, "{regret}");
        assert_eq!(v["oracle"]["regret"].as_f64(), Some(regret));
        assert!(v.get("pages").is_none());
    }

    #[test]
    fn a_point_with_an_oracle_table_gives_the_same_record_every_time() {
        let asked = format!("{SMALL}[oracle]\nreplication = true\n");
        let a = SimRunner::default().run(&point(&asked)).unwrap();
        let b = SimRunner::default().run(&point(&asked)).unwrap();
        assert_eq!(a, b);
    }

    #[test]
    fn an_unknown_field_of_the_oracle_table_is_refused_naming_the_point() {
        let asked = format!("{SMALL}[oracle]\nbudget = 3\n");
        let e = SimRunner::default().run(&point(&asked)).unwrap_err();
        assert!(e.to_string().contains("r000003: oracle"), "{e}");
    }

    #[test]
    fn a_sweep_record_has_no_pages_unless_the_point_asks_for_them() {
        let v = SimRunner::default().run(&point(SMALL)).unwrap();
        assert!(v.get("pages").is_none(), "pages without asking");
        assert_eq!(v["config"]["report"]["per_page"], false);
        let asked = format!("{SMALL}[report]\nper_page = true\n");
        let v = SimRunner::default().run(&point(&asked)).unwrap();
        assert!(
            v["pages"].as_array().is_some_and(|p| !p.is_empty()),
            "asked for pages"
        );
    }

    #[test]
    fn check_refuses_a_point_larger_than_the_limits_naming_the_point_and_field() {
        let big = "[workload]\nkind = \"jacobi\"\nn = 2048\niterations = 1\n";
        let runner = SimRunner::with_limits(Limits {
            max_bytes: 3 << 20,
            bytes_source: "a test limit".into(),
            max_ops: u64::MAX,
        });
        let e = runner.check(&point(big)).unwrap_err().to_string();
        assert!(e.contains("r000003") && e.contains("workload.n"), "{e}");
        assert!(e.contains("a test limit"), "{e}");
        runner.check(&point(SMALL)).unwrap();
    }

    #[test]
    fn check_rejects_what_run_rejects_naming_the_field() {
        let bad = format!("{SMALL}[policy]\nkind = \"static\"\nplacement = \"progrm\"\n");
        let p = point(&bad);
        let checked = SimRunner::default().check(&p).unwrap_err().to_string();
        let ran = SimRunner::default().run(&p).unwrap_err().to_string();
        assert_eq!(checked, ran);
        assert!(
            checked.contains("r000003") && checked.contains("progrm"),
            "{checked}"
        );
        SimRunner::default().check(&point(SMALL)).unwrap();
    }

    #[test]
    fn check_evaluates_an_analysis_point() {
        let good = "[analysis]\nkind = \"breakeven\"\nrho = 0.5\n";
        SimRunner::default().check(&point(good)).unwrap();
        let typo = "[analysis]\nkind = \"breakeven\"\nrhoo = 0.5\n";
        let e = SimRunner::default()
            .check(&point(typo))
            .unwrap_err()
            .to_string();
        assert!(e.contains("analysis") && e.contains("rhoo"), "{e}");
        let negative = "[analysis]\nkind = \"breakeven\"\nrho = -1.0\n";
        assert!(SimRunner::default().check(&point(negative)).is_err());
    }
}
