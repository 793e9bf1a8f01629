//! The scanner Linux's NUMA balancing and its tiering mode share (`task_numa_work` in
//! `kernel/sched/fair.c`): each scan makes the next `scan_size_mb` of an address space's
//! pages inaccessible for hinting faults, walking at most eight times as many pages as
//! it protects (`virtpages`), and wraps around at the end.

use crate::mm::Mm;
use crate::tune::{Dim, Scale};
use crate::types::{NodeSet, Vpn};

/// The search range of `scan_size_mb`, for each policy that scans.
pub(crate) const SCAN_SIZE_DIM: Dim = Dim {
    field: "scan_size_mb",
    lo: 16.0,
    hi: 4096.0,
    integer: true,
    scale: Scale::Log,
    specials: &[],
    source: "16 MB .. 4 GB on a log scale around the kernel's 256 MB (an estimate)",
};

/// The search range of `scan_delay_ms` of the tiering policies (whose scans follow each
/// other at that delay).
pub(crate) const SCAN_DELAY_DIM: Dim = Dim {
    field: "scan_delay_ms",
    lo: 10.0,
    hi: 10_000.0,
    integer: true,
    scale: Scale::Log,
    specials: &[],
    source: "10 ms .. 10 s on a log scale around the kernel's 1 s (an estimate)",
};

/// A scanner's place in the address space.
#[derive(Clone, Debug)]
pub(crate) struct NumaScan {
    cursor: u32,
    pub(crate) pages_per_scan: u64,
}

impl NumaScan {
    /// A scanner of `scan_size_mb` a scan on pages of `page_bytes`.
    pub(crate) fn new(scan_size_mb: u64, page_bytes: u64) -> NumaScan {
        NumaScan {
            cursor: 0,
            pages_per_scan: (scan_size_mb << 20).div_ceil(page_bytes).max(1),
        }
    }

    /// One scan over pages whose copy is on `homes`: the pages protected, and whether
    /// the scan reached the end of the address space (a pass ended).
    pub(crate) fn scan(&mut self, ctx: &mut dyn Mm, homes: NodeSet) -> (u64, bool) {
        let n = ctx.npages() as u64;
        let budget = self.pages_per_scan.saturating_mul(8).min(n);
        let (mut protected, mut visited, mut wrapped) = (0, 0, false);
        while protected < self.pages_per_scan && visited < budget {
            let start = self.cursor as u64;
            let chunk = (self.pages_per_scan - protected)
                .min(n - start)
                .min(budget - visited);
            protected += ctx.protect(Vpn(self.cursor), chunk, homes);
            visited += chunk;
            if start + chunk >= n {
                self.cursor = 0;
                wrapped = true;
            } else {
                self.cursor = (start + chunk) as u32;
            }
        }
        (protected, wrapped)
    }
}
