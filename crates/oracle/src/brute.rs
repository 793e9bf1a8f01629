//! Brute-force enumeration of every schedule of a short run sequence, independent of
//! the dynamic programmes: the reference the property tests hold them to.
//!
//! Migration model: every sequence of homes, one per run. Replication model: every
//! sequence of copy sets, one per run (a write's set a single copy), each change
//! priced as the cheapest sequence of elementary actions (replicate, migrate a single
//! copy, collapse onto a copy), found by relaxing the action graph over all subsets.

use crate::dp::Run;
use crate::model::CostModel;

/// The cheapest schedule's cost in the migration-only model (n^T schedules).
pub fn migration(m: &CostModel, runs: &[Run]) -> u64 {
    let n = m.nodes;
    let mut best = u64::MAX;
    let mut homes = vec![0usize; runs.len()];
    loop {
        let mut cost = 0u64;
        for (t, r) in runs.iter().enumerate() {
            if t > 0 && homes[t] != homes[t - 1] {
                cost += m.migrate;
            }
            let (a, h) = (r.node as usize, homes[t]);
            cost += r.count as u64 * if r.write { m.write(a, h) } else { m.read(a, h) };
        }
        best = best.min(cost);
        // Next sequence (odometer).
        let mut i = 0;
        loop {
            if i == homes.len() {
                return if runs.is_empty() { 0 } else { best };
            }
            homes[i] += 1;
            if homes[i] < n {
                break;
            }
            homes[i] = 0;
            i += 1;
        }
    }
}

/// The cheapest price of turning copy set `from` into `to` by elementary actions, for
/// every pair of non-empty subsets (Bellman-Ford style relaxation; small n only).
pub fn transitions(m: &CostModel) -> Vec<Vec<u64>> {
    let n = m.nodes;
    let sets = 1usize << n;
    let mut d = vec![vec![u64::MAX; sets]; sets];
    for (s, row) in d.iter_mut().enumerate().skip(1) {
        row[s] = 0;
    }
    // One elementary action from `s`.
    let edges = |s: usize| -> Vec<(usize, u64)> {
        let mut e = Vec::new();
        for x in 0..n {
            if s & (1 << x) == 0 {
                e.push((s | 1 << x, m.replicate));
            }
        }
        if s.count_ones() == 1 {
            for x in 0..n {
                if s != 1 << x {
                    e.push((1 << x, m.migrate));
                }
            }
        } else {
            for x in 0..n {
                if s & (1 << x) != 0 {
                    e.push((1 << x, m.collapse(s.count_ones())));
                }
            }
        }
        e
    };
    for row in d.iter_mut().skip(1) {
        loop {
            let mut changed = false;
            for s in 1..sets {
                if row[s] == u64::MAX {
                    continue;
                }
                for (t, w) in edges(s) {
                    let c = row[s] + w;
                    if c < row[t] {
                        row[t] = c;
                        changed = true;
                    }
                }
            }
            if !changed {
                break;
            }
        }
    }
    d
}

/// The cheapest schedule's cost in the replication model ((2^n - 1)^T schedules).
pub fn replication(m: &CostModel, runs: &[Run]) -> u64 {
    if runs.is_empty() {
        return 0;
    }
    let n = m.nodes;
    let sets = (1usize << n) - 1;
    let tr = transitions(m);
    let mut best = u64::MAX;
    let mut seq = vec![1usize; runs.len()];
    loop {
        let mut cost = Some(0u64);
        for (t, r) in runs.iter().enumerate() {
            let s = seq[t];
            let a = r.node as usize;
            let run = if r.write {
                (s.count_ones() == 1)
                    .then(|| r.count as u64 * m.write(a, s.trailing_zeros() as usize))
            } else {
                Some(r.count as u64 * m.read_from(a, s as u64))
            };
            let step = if t == 0 {
                // One copy anywhere, free, then any change.
                (0..n).map(|x| tr[1 << x][s]).min()
            } else {
                Some(tr[seq[t - 1]][s])
            };
            cost = match (cost, run, step) {
                (Some(c), Some(r), Some(st)) if st != u64::MAX => Some(c + r + st),
                _ => None,
            };
        }
        if let Some(c) = cost {
            best = best.min(c);
        }
        let mut i = 0;
        loop {
            if i == seq.len() {
                return best;
            }
            seq[i] += 1;
            if seq[i] <= sets {
                break;
            }
            seq[i] = 1;
            i += 1;
        }
    }
}

/// The cheapest schedule of several pages' timed runs in the migration-only model with
/// frame limits: every sequence of global assignments (each page absent before its
/// first run, then on a node), one per run, every node holding at most its `frames`
/// pages; a change of a page's home costs a migration, a page is placed free at its
/// first run. `runs` are (page, run) in time order; (n+1)^P assignments, small P only.
/// Moves are priced one per page whose home changed (a swap between two full limited
/// nodes would need a third move through another node: this is a relaxation there,
/// exact with one limited node).
pub fn migration_with_limits(m: &CostModel, frames: &[u64], runs: &[(usize, Run)]) -> u64 {
    let n = m.nodes;
    let pages = runs.iter().map(|r| r.0 + 1).max().unwrap_or(0);
    let base = n + 1; // n: absent
    let states = base.pow(pages as u32);
    let decode = |mut s: usize| -> Vec<usize> {
        (0..pages)
            .map(|_| {
                let d = s % base;
                s /= base;
                d
            })
            .collect()
    };
    let fits =
        |a: &[usize]| (0..n).all(|x| a.iter().filter(|&&h| h == x).count() as u64 <= frames[x]);
    let mut cost = vec![u64::MAX; states];
    // Digit n is "absent": before the first run every page is.
    let all_absent: usize = (0..pages).map(|i| n * base.pow(i as u32)).sum();
    cost[all_absent] = 0;
    let mut touched = vec![false; pages];
    for &(page, r) in runs {
        touched[page] = true;
        let mut next = vec![u64::MAX; states];
        for (s, &c) in cost.iter().enumerate() {
            if c == u64::MAX {
                continue;
            }
            let from = decode(s);
            for (t, slot) in next.iter_mut().enumerate() {
                let to = decode(t);
                // A page is on a node exactly once it has been touched.
                let ok = (0..pages).all(|q| touched[q] == (to[q] < n));
                if !ok || !fits(&to) {
                    continue;
                }
                let moves = (0..pages)
                    .filter(|&q| from[q] < n && to[q] != from[q])
                    .count() as u64;
                let a = r.node as usize;
                let h = to[page];
                let price = if r.write { m.write(a, h) } else { m.read(a, h) };
                let v = c + moves * m.migrate + r.count as u64 * price;
                *slot = (*slot).min(v);
            }
        }
        cost = next;
    }
    cost.into_iter().min().unwrap_or(0)
}
