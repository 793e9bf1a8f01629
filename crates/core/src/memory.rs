//! The shared virtual address space: arrays laid out on pages, and the state of every page
//! (its physical copies, per-node mappings, and modification history; a policy's own per-page
//! state, such as PLATINUM's frozen pages, lives in the policy).

use crate::error::ConfigError;
use crate::types::{NodeId, NodeSet, Ns, Vpn};

/// Identifies an array of a [`Layout`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrayId(pub usize);

/// A two-dimensional array placed in the address space (one-dimensional arrays have one row).
#[derive(Clone, Debug)]
pub struct Array {
    /// Name, for reports.
    pub name: String,
    /// Byte address of element (0, 0).
    pub base: u64,
    /// Rows.
    pub rows: u64,
    /// Elements per row.
    pub cols: u64,
    /// Element size in bytes.
    pub elem_bytes: u64,
    /// Bytes from the start of one row to the start of the next (>= cols * elem_bytes:
    /// padding lets a program start every row on a new page).
    pub row_stride: u64,
}

impl Array {
    /// Byte address of element (`row`, `col`) in row-major order.
    #[inline]
    pub fn addr(&self, row: u64, col: u64) -> u64 {
        self.base + row * self.row_stride + col * self.elem_bytes
    }

    /// Bytes the array spans, padding included.
    pub fn span(&self) -> u64 {
        if self.rows == 0 {
            0
        } else {
            (self.rows - 1) * self.row_stride + self.cols * self.elem_bytes
        }
    }
}

/// The allocator: places arrays one after another with alignment and padding, so the page
/// size decides which data share a page.
#[derive(Clone, Debug, Default)]
pub struct Layout {
    arrays: Vec<Array>,
    cursor: u64,
    /// The first array whose size or position overflowed 64-bit byte addresses: such a
    /// layout is refused by [`Layout::pages_checked`] before anything is allocated for it.
    overflowed: Option<String>,
}

impl Layout {
    /// An empty address space.
    pub fn new() -> Layout {
        Layout::default()
    }

    /// Places a `rows` x `cols` array of `elem_bytes`-byte elements whose start is aligned to
    /// `align` bytes and whose rows start at multiples of `row_align` bytes from the start
    /// (1 = packed rows).
    pub fn alloc_2d(
        &mut self,
        name: &str,
        rows: u64,
        cols: u64,
        elem_bytes: u64,
        align: u64,
        row_align: u64,
    ) -> ArrayId {
        let align = align.max(1);
        let row_align = row_align.max(1);
        // Sizes come from configurations: every step is checked, and an overflow marks the
        // layout (saturating the cursor) instead of wrapping into a wrong address space.
        let placed = (|| {
            let base = self.cursor.div_ceil(align).checked_mul(align)?;
            let row_stride = cols
                .checked_mul(elem_bytes)?
                .div_ceil(row_align)
                .checked_mul(row_align)?;
            let end = base.checked_add(rows.checked_mul(row_stride)?)?;
            Some((base, row_stride, end))
        })();
        let (base, row_stride, end) = placed.unwrap_or_else(|| {
            self.overflowed.get_or_insert_with(|| name.to_string());
            (u64::MAX, 0, u64::MAX)
        });
        let a = Array {
            name: name.to_string(),
            base,
            rows,
            cols,
            elem_bytes,
            row_stride,
        };
        self.cursor = end;
        self.arrays.push(a);
        ArrayId(self.arrays.len() - 1)
    }

    /// Places a one-dimensional array of `len` elements aligned to `align` bytes.
    pub fn alloc(&mut self, name: &str, len: u64, elem_bytes: u64, align: u64) -> ArrayId {
        self.alloc_2d(name, 1, len, elem_bytes, align, 1)
    }

    /// Leaves `bytes` of padding after the last array.
    pub fn pad(&mut self, bytes: u64) {
        self.cursor = self.cursor.checked_add(bytes).unwrap_or_else(|| {
            self.overflowed.get_or_insert_with(|| "padding".to_string());
            u64::MAX
        });
    }

    /// The array `id`.
    #[inline]
    pub fn array(&self, id: ArrayId) -> &Array {
        &self.arrays[id.0]
    }

    /// All arrays in allocation order.
    pub fn arrays(&self) -> &[Array] {
        &self.arrays
    }

    /// Bytes used, padding included.
    pub fn bytes(&self) -> u64 {
        self.cursor
    }

    /// Number of pages of `page_size` bytes the address space needs.
    pub fn pages(&self, page_size: u64) -> u64 {
        self.cursor.div_ceil(page_size)
    }

    /// The number of pages, or an error naming `field` (the parameter that sizes the
    /// arrays) when the layout overflowed or needs more pages than a run can address.
    pub fn pages_checked(&self, page_size: u64, field: &str) -> Result<u64, ConfigError> {
        if let Some(name) = &self.overflowed {
            return Err(ConfigError::new(
                field,
                format!("array `{name}` does not fit in a 64-bit address space"),
            ));
        }
        let pages = self.pages(page_size);
        if pages > crate::estimate::MAX_PAGES {
            return Err(ConfigError::new(
                field,
                format!(
                    "the arrays need {pages} pages of {page_size} bytes; a run addresses at most {}",
                    crate::estimate::MAX_PAGES
                ),
            ));
        }
        Ok(pages)
    }
}

/// Access rights of a mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Access {
    /// No mapping: the next reference faults.
    #[default]
    None,
    /// Read-only mapping: a write faults.
    Read,
    /// Read-write mapping.
    Write,
}

/// One node's mapping of one page: which physical copy it reaches, with which rights.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Mapping {
    /// The node whose copy the mapping reaches (meaningless when `access` is `None`).
    pub target: NodeId,
    /// The rights.
    pub access: Access,
}

/// The state of one virtual page.
#[derive(Clone, Debug, Default)]
pub struct PageState {
    /// Nodes holding a physical copy (empty until the page is placed).
    pub copies: NodeSet,
    /// The node of the primary copy; meaningful when `copies` is not empty.
    pub home: NodeId,
    /// Nodes holding a mapping of any kind (kept in step with the mapping table).
    pub mapped: NodeSet,
    /// Nodes holding a writable mapping.
    pub writers: NodeSet,
    /// Written since it was last replicated or placed (PLATINUM's "modified" state).
    pub dirty: bool,
    /// Aged modification history: bit 31 is the most recent interval (see
    /// [`Memory::age_modifications`]).
    pub mod_history: u32,
    /// Written since the last aging.
    pub written_since_age: bool,
}

/// All pages, their mappings and the free frames of every node.
#[derive(Clone, Debug)]
pub struct Memory {
    nodes: usize,
    pages: Vec<PageState>,
    mappings: Vec<Mapping>,
    pte_locked_until: Vec<Ns>,
    pte_users: Vec<UserRun>,
    pte_delays: Vec<(u32, Ns)>,
    free_frames: Vec<u32>,
    /// Free frames on all nodes together, and pages without a copy: a replica takes only
    /// a frame that no unplaced page will need, so every page can always be placed.
    free_total: u64,
    unplaced: u64,
}

/// The last run of user references through one page-table-entry copy: a daemon that
/// locks the copy while the run is in progress waits for the access under way to end,
/// and the run's next access waits for the daemon (software address translation locks
/// the entry for every access, Holliday section 4.1).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct UserRun {
    pub(crate) thread: u32,
    pub(crate) start: Ns,
    pub(crate) end: Ns,
    pub(crate) per_access: Ns,
}

impl Memory {
    /// `npages` unplaced pages on a machine of `nodes` nodes with `frames` frames each.
    pub fn new(npages: usize, nodes: usize, frames: u32) -> Memory {
        Memory {
            nodes,
            pages: vec![PageState::default(); npages],
            mappings: vec![Mapping::default(); npages * nodes],
            pte_locked_until: vec![Ns::ZERO; npages * nodes],
            pte_users: Vec::new(),
            pte_delays: Vec::new(),
            free_frames: vec![frames; nodes],
            free_total: frames as u64 * nodes as u64,
            unplaced: npages as u64,
        }
    }

    /// Heap bytes [`Memory::new`] allocates for `npages` pages on `nodes` nodes, plus the
    /// user-run table of [`Memory::track_user_runs`] when `track_users` (kept beside the
    /// allocations so the two stay in step; resource estimates use it).
    pub fn bytes_needed(npages: u64, nodes: u64, track_users: bool) -> u64 {
        let size = |b: usize| b as u64;
        let per_entry = size(std::mem::size_of::<Mapping>())
            + size(std::mem::size_of::<Ns>())
            + if track_users {
                size(std::mem::size_of::<UserRun>())
            } else {
                0
            };
        npages
            .saturating_mul(size(std::mem::size_of::<PageState>()))
            .saturating_add(npages.saturating_mul(nodes).saturating_mul(per_entry))
            .saturating_add(nodes.saturating_mul(4))
    }

    /// Number of pages.
    #[inline]
    pub fn npages(&self) -> usize {
        self.pages.len()
    }

    /// The state of page `p`.
    #[inline]
    pub fn page(&self, p: Vpn) -> &PageState {
        &self.pages[p.idx()]
    }

    /// Mutable state of page `p`.
    #[inline]
    pub(crate) fn page_mut(&mut self, p: Vpn) -> &mut PageState {
        &mut self.pages[p.idx()]
    }

    /// Node `n`'s mapping of page `p`.
    #[inline]
    pub fn mapping(&self, p: Vpn, n: NodeId) -> Mapping {
        self.mappings[p.idx() * self.nodes + n.idx()]
    }

    /// Until when node `n`'s page-table-entry copy for `p` is locked by a daemon.
    #[inline]
    pub fn pte_locked_until(&self, p: Vpn, n: NodeId) -> Ns {
        self.pte_locked_until[p.idx() * self.nodes + n.idx()]
    }

    pub(crate) fn lock_pte(&mut self, p: Vpn, n: NodeId, until: Ns) {
        let slot = &mut self.pte_locked_until[p.idx() * self.nodes + n.idx()];
        *slot = (*slot).max(until);
    }

    /// Starts keeping the last user run through every page-table-entry copy (only runs
    /// whose policy takes entry copies need it, so the others pay nothing).
    pub(crate) fn track_user_runs(&mut self) {
        self.pte_users = vec![UserRun::default(); self.pages.len() * self.nodes];
    }

    /// Records a run of user references from node `n` to page `p`, when tracked.
    #[inline]
    pub(crate) fn record_user_run(&mut self, p: Vpn, n: NodeId, run: UserRun) {
        if let Some(slot) = self.pte_users.get_mut(p.idx() * self.nodes + n.idx()) {
            *slot = run;
        }
    }

    /// The last run of user references from node `n` to page `p` (none when untracked).
    #[inline]
    pub(crate) fn user_run(&self, p: Vpn, n: NodeId) -> UserRun {
        self.pte_users
            .get(p.idx() * self.nodes + n.idx())
            .copied()
            .unwrap_or_default()
    }

    /// Delays thread `thread` by `d` the next time it runs (a page-table-entry copy it was
    /// using was taken by a daemon in the middle of its run).
    pub(crate) fn delay_thread(&mut self, thread: u32, d: Ns) {
        self.pte_delays.push((thread, d));
    }

    /// Takes the pending thread delays.
    pub(crate) fn take_delays(&mut self) -> Vec<(u32, Ns)> {
        std::mem::take(&mut self.pte_delays)
    }

    /// Whether any thread delay is pending.
    #[inline]
    pub(crate) fn has_delays(&self) -> bool {
        !self.pte_delays.is_empty()
    }

    /// Free frames on node `n`.
    #[inline]
    pub fn free_frames(&self, n: NodeId) -> u32 {
        self.free_frames[n.idx()]
    }

    /// Takes a frame on node `n` for a page's copy that moves there (a migration, which
    /// releases the frame it leaves).
    pub(crate) fn take_frame(&mut self, n: NodeId) -> bool {
        let f = &mut self.free_frames[n.idx()];
        if *f == 0 {
            false
        } else {
            *f -= 1;
            self.free_total -= 1;
            true
        }
    }

    /// Takes a frame on node `n` for a page's first copy.
    pub(crate) fn take_first_frame(&mut self, n: NodeId) -> bool {
        let ok = self.take_frame(n);
        if ok {
            self.unplaced -= 1;
        }
        ok
    }

    /// Takes a frame on node `n` for another copy of a placed page, unless the frames
    /// left are all needed by the pages not yet placed (the run was admitted because
    /// every page fits; replicas must not take that away).
    pub(crate) fn take_replica_frame(&mut self, n: NodeId) -> bool {
        self.free_total > self.unplaced && self.take_frame(n)
    }

    pub(crate) fn release_frame(&mut self, n: NodeId) {
        self.free_frames[n.idx()] += 1;
        self.free_total += 1;
    }

    pub(crate) fn set_mapping(&mut self, p: Vpn, n: NodeId, m: Mapping) {
        self.mappings[p.idx() * self.nodes + n.idx()] = m;
        let page = &mut self.pages[p.idx()];
        match m.access {
            Access::None => {
                page.mapped.remove(n);
                page.writers.remove(n);
            }
            Access::Read => {
                page.mapped.insert(n);
                page.writers.remove(n);
            }
            Access::Write => {
                page.mapped.insert(n);
                page.writers.insert(n);
            }
        }
    }

    /// Shifts page `p`'s modification history: the most significant bit records whether it
    /// was written since the previous call.
    pub fn age_modifications(&mut self, p: Vpn) {
        let page = &mut self.pages[p.idx()];
        page.mod_history = (page.mod_history >> 1) | ((page.written_since_age as u32) << 31);
        page.written_since_age = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_array_too_large_for_64_bit_addresses_makes_the_layout_refuse_itself() {
        let mut l = Layout::new();
        l.alloc_2d("huge", 1 << 33, 1 << 33, 8, 4096, 1);
        let e = l.pages_checked(4096, "workload.n").unwrap_err();
        assert_eq!(e.field, "workload.n");
        assert!(e.message.contains("huge"), "{}", e.message);
    }

    #[test]
    fn more_pages_than_a_run_addresses_are_refused() {
        let mut l = Layout::new();
        l.alloc("big", 1 << 40, 8, 64);
        assert!(l.pages_checked(64, "workload.n").is_err());
        assert!(l.pages_checked(1 << 30, "workload.n").is_ok());
    }

    #[test]
    fn bytes_needed_counts_every_per_node_table() {
        let plain = Memory::bytes_needed(100, 4, false);
        let tracked = Memory::bytes_needed(100, 4, true);
        assert!(tracked > plain);
        assert!(plain >= 100 * 4 * (std::mem::size_of::<Mapping>() as u64 + 8));
    }
}
