//! Human-readable output: summary tables of a run, a machine, the registry.

use numaplace_core::memory::PageNames;
use numaplace_core::{Machine, RunConfig, Stats};
use std::fmt::Write;

fn secs(ns: u64) -> String {
    format!("{:.6} s", ns as f64 * 1e-9)
}

fn pct(part: u64, whole: u64) -> String {
    if whole == 0 {
        "-".into()
    } else {
        format!("{:.1}%", 100.0 * part as f64 / whole as f64)
    }
}

/// The summary table of a run.
pub fn run_summary(cfg: &RunConfig, s: &Stats) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "machine {}  workload {}  policy {}  scheduler {}  seed {}",
        cfg.machine.preset,
        cfg.workload_kinds(),
        cfg.policy.kind(),
        cfg.scheduler.kind(),
        cfg.seed
    );
    if s.budget_exceeded {
        let _ = writeln!(
            o,
            "DID NOT FINISH within the budget of {} of simulated time (budget_ns){}",
            secs(cfg.budget_ns),
            if s.partial {
                format!(
                    ": stopped at {}, the statistics below cover the run so far",
                    secs(s.makespan_ns)
                )
            } else {
                String::new()
            }
        );
    } else if s.partial {
        let _ = writeln!(
            o,
            "PARTIAL: stopped at {} of simulated time before every thread finished",
            secs(s.makespan_ns)
        );
    }
    let r = &s.refs;
    let e = &s.events;
    let mut rows: Vec<(&str, String)> = vec![
        ("makespan", secs(s.makespan_ns)),
        ("references", r.total.to_string()),
        (
            "  local",
            format!("{} ({})", r.local, pct(r.local, r.total)),
        ),
        (
            "  remote",
            format!("{} ({})", r.remote, pct(r.remote, r.total)),
        ),
        (
            "  cached",
            format!("{} ({})", r.cached, pct(r.cached, r.total)),
        ),
    ];
    // One row per event counter, as declared in `EventCounts`.
    rows.extend(e.counters().map(|c| (c.label, c.value.to_string())));
    rows.extend(
        s.own_counters
            .iter()
            .map(|c| (c.label, c.value.to_string())),
    );
    rows.push(("daemon busy", secs(s.daemon_busy_ns)));
    if let Some(c) = &s.cache {
        // With caches, `references` above are memory accesses: the lines that missed.
        let walked = c.hits + c.misses;
        rows.push((
            "cache lines hit",
            format!("{} ({} of lines walked)", c.hits, pct(c.hits, walked)),
        ));
        rows.push(("  missed", c.misses.to_string()));
        rows.push(("  invalidated", c.invalidated.to_string()));
        rows.push(("  evicted", c.evicted.to_string()));
        rows.push(("  flushed (moved)", c.flushed.to_string()));
    }
    for (k, v) in rows {
        let _ = writeln!(o, "  {k:<20} {v}");
    }
    if s.programs.len() > 1 {
        let _ = writeln!(o, "  programs:");
        let _ = writeln!(
            o,
            "    {:>4} {:<16} {:>7} {:>14} {:>14} {:>14} {:>12} {:>12} {:>10} {:>9} {:>9}",
            "id",
            "name",
            "threads",
            "start",
            "completion",
            "turnaround",
            "local",
            "remote",
            "migrations",
            "resident",
            "migrated"
        );
        for (i, p) in s.programs.iter().enumerate() {
            let _ = writeln!(
                o,
                "    {:>4} {:<16} {:>7} {:>14} {:>14} {:>14} {:>12} {:>12} {:>10} {:>9} {:>9}",
                i,
                p.name,
                p.threads,
                secs(p.start_ns),
                secs(p.completion_ns),
                secs(p.turnaround_ns),
                p.refs.local,
                p.refs.remote,
                p.migrations,
                p.resident_pages,
                // Migrations as a fraction of the resident set (the paper's Table 1).
                pct(p.migrations, p.resident_pages)
            );
        }
    }
    let _ = writeln!(o, "  threads:");
    let _ = writeln!(
        o,
        "    {:>4} {:>4} {:>14} {:>12} {:>12} {:>8} {:>12}",
        "id", "node", "completion", "local", "remote", "faults", "sync wait"
    );
    let shown = s.threads.len().min(64);
    for t in &s.threads[..shown] {
        let _ = writeln!(
            o,
            "    {:>4} {:>4} {:>14} {:>12} {:>12} {:>8} {:>12}",
            t.id,
            t.node,
            secs(t.completion_ns),
            t.refs.local,
            t.refs.remote,
            t.faults,
            secs(t.sync_wait_ns)
        );
    }
    if shown < s.threads.len() {
        let _ = writeln!(
            o,
            "    ... {} more threads in the JSON output",
            s.threads.len() - shown
        );
    }
    o
}

/// The per-page post-mortem, after PLATINUM's kernel report (§4.2): for the `top` pages by
/// fault count (then remote references), the data on the page, references, faults and
/// contention in the page's fault handler (faults that waited for another fault on the
/// page, and how long), moves (migrations), copies made, coherency faults, freezes and
/// the time spent frozen, and where the page ended.
pub fn page_report(s: &Stats, data: &PageNames, top: usize) -> String {
    let mut pages: Vec<_> = s
        .pages
        .iter()
        .filter(|p| p.refs.total > 0 || p.faults > 0)
        .collect();
    pages.sort_by_key(|p| {
        (
            std::cmp::Reverse(p.faults),
            std::cmp::Reverse(p.refs.remote),
            p.vpn,
        )
    });
    let mut o = String::new();
    let _ = writeln!(
        o,
        "  {:>6} {:<20} {:>10} {:>10} {:>7} {:>9} {:>11} {:>6} {:>6} {:>6} {:>7} {:>11} {:>5} {:>6} {:>6}",
        "page", "data", "local", "remote", "faults", "contended", "fault wait", "moves",
        "copies", "cohf", "freezes", "frozen for", "home", "ncopy", "frozen"
    );
    for p in pages.iter().take(top) {
        let name = data.get(p.vpn as usize).unwrap_or("");
        let _ = writeln!(
            o,
            "  {:>6} {:<20} {:>10} {:>10} {:>7} {:>9} {:>11} {:>6} {:>6} {:>6} {:>7} {:>11} {:>5} {:>6} {:>6}",
            p.vpn,
            truncate(name, 20),
            p.refs.local,
            p.refs.remote,
            p.faults,
            p.contended_faults,
            secs_short(p.fault_wait_ns),
            p.migrations,
            p.replications,
            p.coherency_faults,
            p.freezes,
            secs_short(p.frozen_ns),
            p.home,
            p.copies,
            if p.frozen_at_end { "yes" } else { "no" }
        );
    }
    o
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n - 1).collect();
        t.push('~');
        t
    }
}

fn secs_short(ns: u64) -> String {
    format!("{:.4} s", ns as f64 * 1e-9)
}

/// A machine's resolved values.
pub fn machine_summary(m: &Machine) -> String {
    let c = &m.config;
    let mut o = String::new();
    let _ = writeln!(o, "{}: {}", c.preset, c.description);
    let _ = writeln!(
        o,
        "  nodes {} x {} processors, {} frames of {} bytes per node, {}-byte words",
        c.nodes, c.procs_per_node, c.frames_per_node, c.page_size_bytes, c.word_size_bytes
    );
    let _ = writeln!(
        o,
        "  remote/local read ratio {:.2}; migration {} ns, replication {} ns per page",
        m.remote_local_ratio(),
        m.migration_cost().0,
        m.replication_cost().0
    );
    o
}

/// The resource estimate of a run, term by term, against the limits.
pub fn estimate_summary(e: &numaplace_core::Estimate, limits: &crate::Limits) -> String {
    use numaplace_core::estimate::human_bytes;
    let mut o = String::new();
    let _ = writeln!(
        o,
        "pages {}  threads {}  operations about {:.3e} (driven by {})",
        e.pages, e.threads, e.ops as f64, e.ops_field
    );
    let _ = writeln!(
        o,
        "memory about {} (limit {}: {})",
        human_bytes(e.bytes),
        human_bytes(limits.max_bytes),
        limits.bytes_source
    );
    for p in &e.parts {
        let _ = writeln!(
            o,
            "  {:<48} {:>10}  {}",
            p.what,
            human_bytes(p.bytes),
            p.field
        );
    }
    o
}
