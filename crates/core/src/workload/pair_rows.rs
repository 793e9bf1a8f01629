//! Holliday's processor pairs (section 4.2): the rows are divided into contiguous blocks,
//! one per pair of threads; the even thread starts at the top of its block and works down,
//! the odd thread starts at the bottom and works up, and each row goes to whichever of the
//! two reaches it first. The rows of the top half start in the even thread's memory and
//! those of the bottom half in the odd thread's, so equal speeds mean no remote work.

use crate::error::ConfigError;

/// The pairs' row blocks and how far each thread has got.
#[derive(Clone, Debug)]
pub struct PairRows {
    /// Per pair: the block's first row, the row that starts the odd thread's half, and the
    /// block's end.
    blocks: Vec<(u64, u64, u64)>,
    /// Per pair: the next row from the top and one past the next row from the bottom.
    next: Vec<(u64, u64)>,
}

impl PairRows {
    /// Blocks of `rows` rows for `threads` threads (an even number, at most twice the rows).
    pub fn new(rows: u64, threads: u32) -> Result<PairRows, ConfigError> {
        if threads == 0 || !threads.is_multiple_of(2) {
            return Err(ConfigError::new(
                "workload.threads",
                format!("{threads}: threads work in pairs, so the count must be even and positive"),
            ));
        }
        let pairs = (threads / 2) as u64;
        if rows < pairs {
            return Err(ConfigError::new(
                "workload.threads",
                format!("{threads} threads need at least {pairs} rows, the matrix has {rows}"),
            ));
        }
        let blocks: Vec<(u64, u64, u64)> = (0..pairs)
            .map(|k| {
                let lo = rows * k / pairs;
                let hi = rows * (k + 1) / pairs;
                (lo, lo + (hi - lo) / 2, hi)
            })
            .collect();
        let next = blocks.iter().map(|&(lo, _, hi)| (lo, hi)).collect();
        Ok(PairRows { blocks, next })
    }

    /// The thread whose memory initially holds row `r`.
    pub fn owner(&self, r: u64) -> u32 {
        let k = self.blocks.partition_point(|&(_, _, hi)| hi <= r);
        let (_, mid, _) = self.blocks[k.min(self.blocks.len() - 1)];
        2 * k as u32 + u32::from(r >= mid)
    }

    /// Whether row `r` lies in the half that starts in the even thread's memory.
    pub fn in_even_half(&self, r: u64) -> bool {
        self.owner(r).is_multiple_of(2)
    }

    /// Gives pair `k` its whole block again (the next product of an iterative method).
    pub fn reset_pair(&mut self, k: usize) {
        let (lo, _, hi) = self.blocks[k];
        self.next[k] = (lo, hi);
    }

    /// Claims thread `t`'s next row, or `None` when its pair has no rows left.
    pub fn claim(&mut self, t: u32) -> Option<u64> {
        let (lo, hi) = &mut self.next[(t / 2) as usize];
        if *lo >= *hi {
            return None;
        }
        if t.is_multiple_of(2) {
            *lo += 1;
            Some(*lo - 1)
        } else {
            *hi -= 1;
            Some(*hi)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pair_threads_meet_without_sharing_a_row() {
        let mut p = PairRows::new(10, 2).unwrap();
        let mut got = Vec::new();
        for _ in 0..5 {
            got.push(p.claim(0).unwrap());
            got.push(p.claim(1).unwrap());
        }
        assert_eq!(p.claim(0), None);
        got.sort_unstable();
        assert_eq!(got, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn top_half_belongs_to_the_even_thread() {
        let p = PairRows::new(8, 4).unwrap();
        let owners: Vec<u32> = (0..8).map(|r| p.owner(r)).collect();
        assert_eq!(owners, vec![0, 0, 1, 1, 2, 2, 3, 3]);
    }

    #[test]
    fn odd_thread_count_is_an_error() {
        assert!(PairRows::new(8, 3).is_err());
    }
}
