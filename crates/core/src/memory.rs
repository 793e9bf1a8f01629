//! The shared virtual address space: arrays laid out on pages, and the state of every page
//! (its physical copies, per-node mappings, and modification history; a policy's own per-page
//! state, such as PLATINUM's frozen pages, lives in the policy).

use crate::error::ConfigError;
use crate::types::{NodeId, NodeSet, Ns, Vpn};

/// Asks the processor to fetch `x`'s cache line ahead of its use (a hint: nothing else
/// happens; on other architectures, nothing at all).
#[inline(always)]
pub(crate) fn prefetch<T>(x: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `_mm_prefetch` only hints the cache hierarchy: it reads nothing
    // architecturally and cannot fault, whatever the address (here a valid reference), and
    // the SSE it needs is part of the x86_64 baseline.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
            (x as *const T).cast(),
        )
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

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

/// For every page of the programs laid out one after another at page size `ps`, the
/// names of the arrays it holds, joined by `+` (a page shared by two data structures
/// shows both: PLATINUM's sec. 4.2 diagnosis).
pub fn page_names<'a>(layouts: impl Iterator<Item = &'a Layout>, ps: u64) -> PageNames {
    let mut names = PageNames::default();
    let mut index = std::collections::HashMap::<String, u32>::new();
    for layout in layouts {
        let base = names.len;
        // Where each array's pages start (+) and end (-), in page order; at one page,
        // ends before starts, and arrays in allocation order.
        let mut edges: Vec<(u64, bool, usize)> = Vec::new();
        for (i, a) in layout.arrays().iter().enumerate() {
            if a.span() == 0 {
                continue;
            }
            edges.push((a.base / ps, true, i));
            edges.push(((a.base + a.span() - 1) / ps + 1, false, i));
        }
        edges.sort_unstable();
        let mut held = std::collections::BTreeSet::new();
        let mut at = 0;
        for (page, starts, i) in edges {
            if page != at {
                names.push_run(base + at, joined(layout, &held), &mut index);
                at = page;
            }
            if starts {
                held.insert(i);
            } else {
                held.remove(&i);
            }
        }
        // Pages after the last array's (alignment padding) hold nothing.
        if at < layout.pages(ps) {
            names.push_run(base + at, joined(layout, &held), &mut index);
        }
        names.len = base + layout.pages(ps);
    }
    names
}

/// The names of `layout`'s arrays `held`, in allocation order, joined by `+`.
fn joined(layout: &Layout, held: &std::collections::BTreeSet<usize>) -> String {
    let mut s = String::new();
    for &i in held {
        if !s.is_empty() {
            s.push('+');
        }
        s.push_str(&layout.arrays()[i].name);
    }
    s
}

/// The arrays on every page of a run ([`page_names`]), held as runs of pages with the
/// same names: a few entries per array instead of a string per page, so a per-page
/// report of a large address space costs no memory for its names.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageNames {
    /// Pages in all.
    len: u64,
    /// The first page of each run, ascending from 0.
    starts: Vec<u64>,
    /// Each run's names, an index into `names`.
    which: Vec<u32>,
    /// The distinct names, each once.
    names: Vec<String>,
}

impl PageNames {
    /// Pages in all.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// No pages.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The names on page `vpn` (`""` for a page that holds no array's data), or `None`
    /// beyond the last page.
    pub fn get(&self, vpn: usize) -> Option<&str> {
        if vpn as u64 >= self.len {
            return None;
        }
        let run = self.starts.partition_point(|&s| s <= vpn as u64) - 1;
        Some(&self.names[self.which[run] as usize])
    }

    /// The names of every page, in page order.
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        (0..self.len()).map(|v| self.get(v).unwrap_or(""))
    }

    /// Pages from `start` on hold `name` (no new run when the last one holds it too).
    fn push_run(
        &mut self,
        start: u64,
        name: String,
        index: &mut std::collections::HashMap<String, u32>,
    ) {
        let next = index.len() as u32;
        let which = *index.entry(name).or_insert_with_key(|name| {
            self.names.push(name.clone());
            next
        });
        debug_assert!(self.starts.last().is_none_or(|&last| last < start));
        if self.which.last() != Some(&which) {
            self.starts.push(start);
            self.which.push(which);
        }
    }
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

/// The state of one virtual page, as a value (see [`Memory::page`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PageState {
    /// Nodes holding a physical copy (empty until the page is placed).
    pub copies: NodeSet,
    /// The node of the primary copy; meaningful when `copies` is not empty.
    pub home: NodeId,
    /// Nodes holding a mapping of any kind.
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

/// What every reference reads and writes of a page, in one 32-byte record (aligned, so
/// a reference touches one cache line of page state): the home node, the copy count and
/// the modification flags, and the copy, mapping and write-mapping sets of nodes 0-63.
/// Nodes beyond 63 keep their bits in [`Memory`]'s `wide` table.
///
/// A mapping always reaches a node holding a copy. With one copy that is the home, so
/// no per-node target is stored; a page with several copies gets a row of the replica
/// target table (`slot`) while it has them.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(32))]
struct PageRec {
    home: NodeId,
    /// Copies (bits 0-13), dirty (bit 14), written since the last aging (bit 15).
    state: u16,
    /// 1 + the page's row in the replica target table; 0 while it has at most one copy.
    slot: u32,
    copies: u64,
    mapped: u64,
    writers: u64,
}

const COPIES_MASK: u16 = (1 << 14) - 1;
const DIRTY: u16 = 1 << 14;
const WRITTEN: u16 = 1 << 15;

/// The three per-page node sets.
#[derive(Clone, Copy)]
enum Set {
    Copies = 0,
    Mapped = 1,
    Writers = 2,
}

/// All pages, their mappings and the free frames of every node.
///
/// Memory per page is independent of the number of nodes up to 64 (a 32-byte record, the
/// aged modification history); machines of more nodes add 3 bits per further node.
/// Per-(page, node) state exists only where something needs it: replica targets for
/// pages with several copies, and page-table-entry lock times and user runs for policies
/// that take entries.
#[derive(Clone, Debug)]
pub struct Memory {
    nodes: usize,
    recs: Vec<PageRec>,
    /// Words of each node set beyond the first (0 on machines of at most 64 nodes).
    extra_words: usize,
    /// Per page, for each set in [`Set`] order, its words beyond the first.
    wide: Vec<u64>,
    /// Per page, its aged modification bits; empty until the first aging.
    mod_history: Vec<u32>,
    /// Rows of `nodes` targets, one per page with several copies.
    targets: Vec<NodeId>,
    free_slots: Vec<u32>,
    /// Until when each (page, node) entry copy is locked; empty until a lock is taken.
    pte_locked_until: Vec<Ns>,
    /// Per page, a time by which every copy of its entry is unlocked and every user run
    /// through them is over (a bound: the latest lock or run end recorded), so a daemon
    /// pass over a page that starts later has nothing to wait for at any copy.
    pte_busy: Vec<Ns>,
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
        Memory::with_frames(npages, &vec![frames; nodes])
    }

    /// `npages` unplaced pages on a machine whose node `n` has `frames[n]` frames.
    pub fn with_frames(npages: usize, frames: &[u32]) -> Memory {
        let nodes = frames.len();
        let extra_words = nodes.div_ceil(64).saturating_sub(1);
        Memory {
            nodes,
            recs: crate::bigvec::filled(npages, PageRec::default()),
            extra_words,
            wide: vec![0; npages * 3 * extra_words],
            // Allocated when a page's modifications are first aged: only a policy that
            // reads their history (DUnX's recent-modification test) pays for it.
            mod_history: Vec::new(),
            targets: Vec::new(),
            free_slots: Vec::new(),
            pte_locked_until: Vec::new(),
            pte_busy: Vec::new(),
            pte_users: Vec::new(),
            pte_delays: Vec::new(),
            free_frames: frames.to_vec(),
            free_total: frames.iter().map(|&f| f as u64).sum(),
            unplaced: npages as u64,
        }
    }

    /// Heap bytes [`Memory::new`] allocates for `npages` pages on `nodes` nodes with
    /// `frames` frames in all, plus what it can grow to: the page-table-entry tables when
    /// the policy takes entries (`ptes`), and the replica target table when it may
    /// replicate (`replicas`: at most one row per page with a spare frame for a second
    /// copy). Kept beside the allocations so the two stay in step; estimates use it.
    pub fn bytes_needed(npages: u64, nodes: u64, frames: u64, ptes: bool, replicas: bool) -> u64 {
        let size = |b: usize| b as u64;
        let extra_words = nodes.div_ceil(64).saturating_sub(1);
        let per_page = size(std::mem::size_of::<PageRec>())
            + 4
            + extra_words.saturating_mul(3 * 8)
            + if ptes {
                size(std::mem::size_of::<Ns>())
            } else {
                0
            };
        let per_entry = if ptes {
            size(std::mem::size_of::<Ns>()) + size(std::mem::size_of::<UserRun>())
        } else {
            0
        };
        let replica_rows = if replicas {
            npages.min(frames.saturating_sub(npages))
        } else {
            0
        };
        // A growing table may hold up to twice its rows' bytes while it grows.
        let per_row = nodes.saturating_mul(2 * size(std::mem::size_of::<NodeId>())) + 8;
        npages
            .saturating_mul(per_page)
            .saturating_add(npages.saturating_mul(nodes).saturating_mul(per_entry))
            .saturating_add(replica_rows.saturating_mul(per_row))
            .saturating_add(nodes.saturating_mul(4))
    }

    /// Number of pages.
    #[inline]
    pub fn npages(&self) -> usize {
        self.recs.len()
    }

    /// Whether `n` is in page `p`'s set `set`.
    #[inline]
    fn has(&self, p: Vpn, set: Set, n: NodeId) -> bool {
        let r = &self.recs[p.idx()];
        if n.0 < 64 {
            let w = match set {
                Set::Copies => r.copies,
                Set::Mapped => r.mapped,
                Set::Writers => r.writers,
            };
            (w >> n.0) & 1 != 0
        } else {
            let i = self.wide_index(p, set, n);
            (self.wide[i] >> (n.0 & 63)) & 1 != 0
        }
    }

    /// Node `n`'s mapped and writable bits of page `p` summed, for nodes beyond 63.
    #[inline(never)]
    fn wide_rights(&self, p: Vpn, n: NodeId) -> u64 {
        self.has(p, Set::Mapped, n) as u64 + self.has(p, Set::Writers, n) as u64
    }

    #[inline]
    fn wide_index(&self, p: Vpn, set: Set, n: NodeId) -> usize {
        (p.idx() * 3 + set as usize) * self.extra_words + (n.idx() >> 6) - 1
    }

    fn set_bit(&mut self, p: Vpn, set: Set, n: NodeId, on: bool) {
        let bit = 1u64 << (n.0 & 63);
        let w = if n.0 < 64 {
            let r = &mut self.recs[p.idx()];
            match set {
                Set::Copies => &mut r.copies,
                Set::Mapped => &mut r.mapped,
                Set::Writers => &mut r.writers,
            }
        } else {
            let i = self.wide_index(p, set, n);
            &mut self.wide[i]
        };
        if on {
            *w |= bit;
        } else {
            *w &= !bit;
        }
    }

    /// Page `p`'s set `set`.
    fn set(&self, p: Vpn, set: Set) -> NodeSet {
        let r = &self.recs[p.idx()];
        let first = match set {
            Set::Copies => r.copies,
            Set::Mapped => r.mapped,
            Set::Writers => r.writers,
        };
        let mut words = [0u64; NodeSet::WORDS];
        words[0] = first;
        if self.extra_words > 0 {
            let at = (p.idx() * 3 + set as usize) * self.extra_words;
            words[1..=self.extra_words].copy_from_slice(&self.wide[at..at + self.extra_words]);
        }
        NodeSet::from_words(&words)
    }

    /// Replaces page `p`'s set `set` by the single node `n` (or empties it).
    #[inline]
    fn set_only(&mut self, p: Vpn, set: Set, n: Option<NodeId>) {
        let r = &mut self.recs[p.idx()];
        let w = match set {
            Set::Copies => &mut r.copies,
            Set::Mapped => &mut r.mapped,
            Set::Writers => &mut r.writers,
        };
        *w = 0;
        if self.extra_words > 0 {
            let at = (p.idx() * 3 + set as usize) * self.extra_words;
            self.wide[at..at + self.extra_words].fill(0);
        }
        if let Some(n) = n {
            self.set_bit(p, set, n, true);
        }
    }

    /// Asks the processor to fetch page `p`'s record ahead of its use.
    #[inline(always)]
    pub(crate) fn prefetch(&self, p: Vpn) {
        if let Some(r) = self.recs.get(p.idx()) {
            prefetch(r);
        }
    }

    /// The state of page `p`.
    pub fn page(&self, p: Vpn) -> PageState {
        let r = &self.recs[p.idx()];
        PageState {
            copies: self.set(p, Set::Copies),
            home: r.home,
            mapped: self.set(p, Set::Mapped),
            writers: self.set(p, Set::Writers),
            dirty: r.state & DIRTY != 0,
            mod_history: self.mod_history.get(p.idx()).copied().unwrap_or(0),
            written_since_age: r.state & WRITTEN != 0,
        }
    }

    /// The nodes mapping page `p` (without building the whole [`PageState`]).
    #[inline]
    pub(crate) fn mapped(&self, p: Vpn) -> NodeSet {
        self.set(p, Set::Mapped)
    }

    /// The nodes mapping page `p` writable.
    #[inline]
    pub(crate) fn writers(&self, p: Vpn) -> NodeSet {
        self.set(p, Set::Writers)
    }

    /// The node of page `p`'s primary copy (meaningful once placed).
    #[inline]
    pub fn home(&self, p: Vpn) -> NodeId {
        self.recs[p.idx()].home
    }

    /// How many copies page `p` has (0 until placed).
    #[inline]
    pub fn copy_count(&self, p: Vpn) -> u32 {
        (self.recs[p.idx()].state & COPIES_MASK) as u32
    }

    /// Whether node `n` holds a copy of page `p`.
    #[inline]
    pub fn has_copy(&self, p: Vpn, n: NodeId) -> bool {
        self.has(p, Set::Copies, n)
    }

    /// Node `n`'s mapping of page `p`.
    #[inline(always)]
    pub fn mapping(&self, p: Vpn, n: NodeId) -> Mapping {
        let r = &self.recs[p.idx()];
        // Writers are a subset of the mapped nodes: the two bits sum to the rights.
        let rights = if n.0 < 64 {
            ((r.mapped >> n.0) & 1) + ((r.writers >> n.0) & 1)
        } else {
            self.wide_rights(p, n)
        };
        let access = match rights {
            0 => return Mapping::default(),
            1 => Access::Read,
            _ => Access::Write,
        };
        let target = if r.slot == 0 {
            r.home
        } else {
            self.targets[(r.slot - 1) as usize * self.nodes + n.idx()]
        };
        Mapping { target, access }
    }

    /// The copy node `n`'s mapping of page `p` reaches, if that mapping allows the access
    /// (`write` or read): the reference path's one look at page state.
    #[inline(always)]
    pub(crate) fn reaches(&self, p: Vpn, n: NodeId, write: bool) -> Option<NodeId> {
        let r = &self.recs[p.idx()];
        let allowed = if n.0 < 64 {
            let set = if write { r.writers } else { r.mapped };
            (set >> n.0) & 1 != 0
        } else {
            self.wide_allows(p, n, write)
        };
        if !allowed {
            return None;
        }
        Some(if r.slot == 0 {
            r.home
        } else {
            self.targets[(r.slot - 1) as usize * self.nodes + n.idx()]
        })
    }

    #[inline(never)]
    fn wide_allows(&self, p: Vpn, n: NodeId, write: bool) -> bool {
        self.has(p, if write { Set::Writers } else { Set::Mapped }, n)
    }

    /// Whether page-table-entry copies are locked or their user runs kept (a policy
    /// takes entries): only then does a reference look at them.
    #[inline]
    pub(crate) fn has_entries(&self) -> bool {
        !self.pte_locked_until.is_empty()
    }

    /// Until when node `n`'s page-table-entry copy for `p` is locked by a daemon.
    #[inline]
    pub fn pte_locked_until(&self, p: Vpn, n: NodeId) -> Ns {
        self.pte_locked_until
            .get(p.idx() * self.nodes + n.idx())
            .copied()
            .unwrap_or(Ns::ZERO)
    }

    #[inline]
    pub(crate) fn lock_pte(&mut self, p: Vpn, n: NodeId, until: Ns) {
        if self.pte_locked_until.is_empty() {
            self.allocate_pte_locks();
        }
        let slot = &mut self.pte_locked_until[p.idx() * self.nodes + n.idx()];
        *slot = (*slot).max(until);
        let busy = &mut self.pte_busy[p.idx()];
        *busy = (*busy).max(until);
    }

    #[cold]
    fn allocate_pte_locks(&mut self) {
        self.pte_locked_until = vec![Ns::ZERO; self.recs.len() * self.nodes];
        self.pte_busy = vec![Ns::ZERO; self.recs.len()];
    }

    /// Starts keeping the last user run through every page-table-entry copy, and the
    /// entries' lock times (only runs whose policy takes entry copies need them, so the
    /// others pay nothing).
    pub(crate) fn track_user_runs(&mut self) {
        self.pte_users = vec![UserRun::default(); self.recs.len() * self.nodes];
        self.allocate_pte_locks();
    }

    /// Records a run of user references from node `n` to page `p`, when tracked.
    #[inline(always)]
    pub(crate) fn record_user_run(&mut self, p: Vpn, n: NodeId, run: UserRun) {
        if let Some(slot) = self.pte_users.get_mut(p.idx() * self.nodes + n.idx()) {
            *slot = run;
            let busy = &mut self.pte_busy[p.idx()];
            *busy = (*busy).max(run.end);
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

    /// [`Memory::pass_entries`] on nodes below 64 that only asks which entries were
    /// passed (their bit set in the result). The common case, a run of consecutive nodes
    /// of which none is held or in use, fills the entries' lock times in one sweep over
    /// the row, with no call per entry: the times are those the pass one entry at a time
    /// gives.
    pub(crate) fn pass_entries_mask(
        &mut self,
        p: Vpn,
        nodes: &[NodeId],
        now: Ns,
        cost: &mut Ns,
        (lock, work): (Ns, Ns),
    ) -> u64 {
        let k = nodes.len();
        if let (Some(first), Some(last)) = (nodes.first(), nodes.last()) {
            let (lo, hi) = (first.idx(), last.idx());
            let held = (lock + work).0;
            let c = *cost;
            let at = (now + c).0;
            // Consecutive and ascending, all below 64, with the sums below saturation.
            let fits = hi < 64
                && hi - lo + 1 == k
                && !self.pte_locked_until.is_empty()
                && held.checked_mul(k as u64).is_some_and(|all| {
                    at.checked_add(all).is_some() && c.0.checked_add(all).is_some()
                });
            if fits && self.pte_busy[p.idx()] <= Ns(at) {
                let row = p.idx() * self.nodes;
                let locks = &mut self.pte_locked_until[row + lo..row + lo + k];
                let mut t = at;
                for slot in locks.iter_mut() {
                    t += held;
                    *slot = Ns(t);
                }
                self.pte_busy[p.idx()] = Ns(t);
                *cost = Ns(c.0 + k as u64 * held);
                return (u64::MAX >> (64 - k)) << lo;
            }
        }
        let mut passed = 0u64;
        self.pass_entries(p, nodes, now, cost, (lock, work), |n| passed |= 1 << n.0);
        passed
    }

    /// A daemon's pass over page `p`'s entry copies on `nodes`, one after the other, from
    /// `now + *cost`: each is acquired as [`crate::mm::Mm::acquire_pte`] does (after any
    /// other holder, and after the access in progress of a user run through it), `read`
    /// and held for `work`, and released as [`crate::mm::Mm::release_pte`] does (a user
    /// whose run it interrupted owes the hold). `*cost` grows as those calls in turn would
    /// make it grow. The page's row of entries is indexed once, and an entry nobody holds
    /// or uses costs a few additions: the lock and the work, with nothing to wait for.
    pub(crate) fn pass_entries(
        &mut self,
        p: Vpn,
        nodes: &[NodeId],
        now: Ns,
        cost: &mut Ns,
        (lock, work): (Ns, Ns),
        mut read: impl FnMut(NodeId),
    ) {
        if self.pte_locked_until.is_empty() {
            self.allocate_pte_locks();
        }
        let row = p.idx() * self.nodes;
        let locks = &mut self.pte_locked_until[row..row + self.nodes];
        let users: &[UserRun] = self.pte_users.get(row..row + self.nodes).unwrap_or(&[]);
        // Saturating sums of non-negative terms do not depend on their grouping, so an
        // uncontended entry adds `lock + work` at once, to the cost and to the time.
        let held = lock + work;
        let mut c = *cost;
        let mut at = now + c;
        let busy = &mut self.pte_busy[p.idx()];
        let k = nodes.len() as u64;
        let no_overflow = held
            .0
            .checked_mul(k)
            .is_some_and(|all| at.0.checked_add(all).is_some() && c.0.checked_add(all).is_some());
        if *busy <= at && no_overflow {
            // No copy is locked or in use from here on: each is held for `held` in turn,
            // and the sums stay below saturation.
            let mut t = at.0;
            for &n in nodes {
                read(n);
                t += held.0;
                locks[n.idx()] = Ns(t);
            }
            *busy = Ns(t);
            *cost = Ns(c.0 + k * held.0);
            return;
        }
        for &n in nodes {
            let slot = &mut locks[n.idx()];
            // A user run under way through this copy: the daemon waits for the access in
            // progress (its end is tested first: most runs are over).
            let under_way = users
                .get(n.idx())
                .is_some_and(|r| at < r.end && r.start <= at && r.per_access > Ns::ZERO);
            if *slot <= at && !under_way {
                read(n);
                at += held;
                c += held;
                *slot = at;
                continue;
            }
            let free = at.max(*slot);
            let mut got = free;
            let mut user = None;
            if let Some(run) = users.get(n.idx()) {
                if free < run.end && run.start <= free && run.per_access > Ns::ZERO {
                    let done = (free - run.start).0.div_ceil(run.per_access.0);
                    got = (run.start + Ns(done.saturating_mul(run.per_access.0))).min(run.end);
                    if got < run.end {
                        user = Some(run.thread);
                    }
                }
            }
            c += got - at;
            c += lock;
            read(n);
            c += work;
            let end = now + c;
            *slot = (*slot).max(end);
            if let Some(t) = user {
                self.pte_delays.push((t, end - got));
            }
            at = end;
        }
        *busy = (*busy).max(at);
        *cost = c;
    }

    /// Whether no copy of page `p`'s entry is locked, or in use by a user run, at or
    /// after `at` (then taking them all waits for nothing).
    #[inline]
    pub(crate) fn entries_free(&self, p: Vpn, at: Ns) -> bool {
        self.pte_busy.get(p.idx()).is_none_or(|&b| b <= at)
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
    #[inline]
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
    #[inline]
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

    /// Gives unplaced page `p` its first copy, on node `n` (the frame is the caller's).
    #[inline]
    pub(crate) fn place_copy(&mut self, p: Vpn, n: NodeId) {
        debug_assert_eq!(self.copy_count(p), 0);
        self.set_only(p, Set::Copies, Some(n));
        let r = &mut self.recs[p.idx()];
        r.home = n;
        r.state = (r.state & !COPIES_MASK) | 1;
    }

    /// Moves single-copy page `p`'s copy to node `to` (frames are the caller's); its
    /// mappings follow it.
    pub(crate) fn move_copy(&mut self, p: Vpn, to: NodeId) {
        debug_assert_eq!(self.copy_count(p), 1);
        self.set_only(p, Set::Copies, Some(to));
        self.recs[p.idx()].home = to;
    }

    /// Adds a copy of placed page `p` on node `n` (the frame is the caller's). The page's
    /// mappings keep their targets: a page that had one copy gets a row of targets.
    pub(crate) fn add_copy(&mut self, p: Vpn, n: NodeId) {
        if self.has_copy(p, n) {
            return;
        }
        let r = self.recs[p.idx()];
        if r.slot == 0 {
            let row = match self.free_slots.pop() {
                Some(row) => row as usize,
                None => {
                    self.targets
                        .resize(self.targets.len() + self.nodes, NodeId::default());
                    self.targets.len() / self.nodes - 1
                }
            };
            self.targets[row * self.nodes..(row + 1) * self.nodes].fill(r.home);
            self.recs[p.idx()].slot = row as u32 + 1;
        }
        self.set_bit(p, Set::Copies, n, true);
        let r = &mut self.recs[p.idx()];
        r.state = (r.state & !COPIES_MASK) | ((r.state & COPIES_MASK) + 1);
    }

    /// Keeps only the copy of page `p` on `keep` (frames are the caller's), which becomes
    /// its home. The caller has removed every mapping that reached another copy.
    pub(crate) fn keep_only(&mut self, p: Vpn, keep: NodeId) {
        self.set_only(p, Set::Copies, Some(keep));
        let r = &mut self.recs[p.idx()];
        r.home = keep;
        r.state = (r.state & !COPIES_MASK) | 1;
        if r.slot != 0 {
            self.free_slots.push(r.slot - 1);
            r.slot = 0;
        }
    }

    /// Sets node `n`'s mapping of page `p`; its target must hold a copy.
    #[inline]
    pub(crate) fn set_mapping(&mut self, p: Vpn, n: NodeId, m: Mapping) {
        let (mapped, writable) = match m.access {
            Access::None => (false, false),
            Access::Read => (true, false),
            Access::Write => (true, true),
        };
        self.set_bit(p, Set::Mapped, n, mapped);
        self.set_bit(p, Set::Writers, n, writable);
        if mapped {
            debug_assert!(self.has_copy(p, m.target), "a mapping reaches a copy");
            let r = self.recs[p.idx()];
            if r.slot != 0 {
                self.targets[(r.slot - 1) as usize * self.nodes + n.idx()] = m.target;
            }
        }
    }

    /// Whether page `p` was written since it was last replicated or placed.
    #[inline]
    pub fn dirty(&self, p: Vpn) -> bool {
        self.recs[p.idx()].state & DIRTY != 0
    }

    /// Sets or clears page `p`'s modified state.
    pub(crate) fn set_dirty(&mut self, p: Vpn, dirty: bool) {
        let r = &mut self.recs[p.idx()];
        if dirty {
            r.state |= DIRTY;
        } else {
            r.state &= !DIRTY;
        }
    }

    /// Records a write to page `p`: modified, and written since the last aging.
    #[inline]
    pub(crate) fn mark_written(&mut self, p: Vpn) {
        self.recs[p.idx()].state |= DIRTY | WRITTEN;
    }

    /// Marks page `p` written since the last aging (to set a test's scene).
    pub(crate) fn set_written_since_age(&mut self, p: Vpn) {
        self.recs[p.idx()].state |= WRITTEN;
    }

    /// Shifts page `p`'s modification history: the most significant bit records whether it
    /// was written since the previous call.
    pub fn age_modifications(&mut self, p: Vpn) {
        let r = &mut self.recs[p.idx()];
        let written = r.state & WRITTEN != 0;
        r.state &= !WRITTEN;
        if self.mod_history.is_empty() {
            self.mod_history = crate::bigvec::filled(self.recs.len(), 0);
        }
        let h = &mut self.mod_history[p.idx()];
        *h = (*h >> 1) | ((written as u32) << 31);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each page's names built a page at a time, as a string each: what
    /// [`page_names`]'s runs must give back.
    fn names_page_by_page(layouts: &[Layout], ps: u64) -> Vec<String> {
        let mut names = Vec::new();
        for layout in layouts {
            let base = names.len();
            names.resize(base + layout.pages(ps) as usize, String::new());
            for a in layout.arrays().iter().filter(|a| a.span() > 0) {
                for v in a.base / ps..=(a.base + a.span() - 1) / ps {
                    let slot: &mut String = &mut names[base + v as usize];
                    if !slot.is_empty() {
                        slot.push('+');
                    }
                    slot.push_str(&a.name);
                }
            }
        }
        names
    }

    #[test]
    fn page_names_give_every_page_the_arrays_on_it_in_allocation_order() {
        // Arrays sharing pages, an empty one, a padded one and a second address space;
        // an empty layout between them.
        let mut first = Layout::new();
        first.alloc("a", 10, 100, 8);
        first.alloc("b", 3, 8, 8);
        first.alloc("empty", 0, 8, 8);
        first.alloc_2d("rows", 5, 30, 8, 1024, 1024);
        first.alloc("tail", 1, 8, 8);
        let mut second = Layout::new();
        second.alloc("x", 700, 8, 4096);
        second.alloc("y", 700, 8, 8);
        let layouts = [first, Layout::new(), second];
        for ps in [64, 512, 1024, 4096] {
            let want = names_page_by_page(&layouts, ps);
            let got = page_names(layouts.iter(), ps);
            assert_eq!(got.len(), want.len(), "page size {ps}");
            assert_eq!(got.iter().collect::<Vec<_>>(), want, "page size {ps}");
            assert_eq!(got.get(want.len()), None);
        }
    }

    #[test]
    fn page_names_hold_a_run_per_change_of_names_not_a_string_per_page() {
        let mut l = Layout::new();
        l.alloc("big", 1 << 20, 8, 4096);
        l.alloc("next", 1 << 20, 8, 8);
        let names = page_names(std::iter::once(&l), 4096);
        assert_eq!(names.len(), 4096);
        assert_eq!(names.starts.len(), 2);
        assert_eq!(names.names.len(), 2);
    }

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
    fn bytes_needed_counts_the_entry_tables_only_for_policies_that_take_entries() {
        let plain = Memory::bytes_needed(100, 4, 64, false, false);
        let tracked = Memory::bytes_needed(100, 4, 64, true, false);
        assert!(tracked >= plain + 100 * 4 * 8);
    }

    #[test]
    fn modification_histories_are_allocated_only_when_first_aged() {
        let mut m = Memory::with_frames(8, &[8, 8]);
        assert!(m.mod_history.is_empty());
        assert_eq!(m.page(Vpn(3)).mod_history, 0);
        m.mark_written(Vpn(3));
        m.age_modifications(Vpn(3));
        assert_eq!(m.mod_history.len(), 8);
        assert_eq!(m.page(Vpn(3)).mod_history, 1 << 31);
        assert_eq!(m.page(Vpn(2)).mod_history, 0);
    }

    #[test]
    fn a_page_record_fills_half_a_cache_line() {
        assert_eq!(std::mem::size_of::<PageRec>(), 32);
        assert_eq!(std::mem::align_of::<PageRec>(), 32);
    }

    #[test]
    fn page_state_without_replication_does_not_grow_with_nodes_up_to_64() {
        assert_eq!(
            Memory::bytes_needed(1000, 2, 64, false, false) - 8,
            Memory::bytes_needed(1000, 64, 64, false, false) - 256
        );
    }

    #[test]
    fn nodes_beyond_64_keep_their_copies_and_mappings() {
        let mut m = Memory::new(2, 1024, 4);
        let (a, b) = (NodeId(3), NodeId(1000));
        m.place_copy(Vpn(1), a);
        m.add_copy(Vpn(1), b);
        m.set_mapping(
            Vpn(1),
            NodeId(700),
            Mapping {
                target: b,
                access: Access::Read,
            },
        );
        m.set_mapping(
            Vpn(1),
            b,
            Mapping {
                target: b,
                access: Access::Read,
            },
        );
        let page = m.page(Vpn(1));
        assert_eq!(page.copies.iter().collect::<Vec<_>>(), vec![a, b]);
        assert_eq!(page.mapped.iter().collect::<Vec<_>>(), vec![NodeId(700), b]);
        assert_eq!(m.mapping(Vpn(1), NodeId(700)).target, b);
        assert_eq!(m.mapping(Vpn(0), NodeId(700)).access, Access::None);
    }

    #[test]
    fn mappings_of_a_single_copy_follow_it_when_it_moves() {
        let mut m = Memory::new(1, 4, 4);
        m.place_copy(Vpn(0), NodeId(0));
        m.set_mapping(
            Vpn(0),
            NodeId(2),
            Mapping {
                target: NodeId(0),
                access: Access::Write,
            },
        );
        m.move_copy(Vpn(0), NodeId(3));
        assert_eq!(
            m.mapping(Vpn(0), NodeId(2)),
            Mapping {
                target: NodeId(3),
                access: Access::Write
            }
        );
    }

    #[test]
    fn a_replicated_page_keeps_each_mapping_target_until_it_is_single_again() {
        let mut m = Memory::new(1, 4, 4);
        m.place_copy(Vpn(0), NodeId(0));
        m.set_mapping(
            Vpn(0),
            NodeId(1),
            Mapping {
                target: NodeId(0),
                access: Access::Read,
            },
        );
        m.add_copy(Vpn(0), NodeId(2));
        m.set_mapping(
            Vpn(0),
            NodeId(3),
            Mapping {
                target: NodeId(2),
                access: Access::Read,
            },
        );
        assert_eq!(m.mapping(Vpn(0), NodeId(1)).target, NodeId(0));
        assert_eq!(m.mapping(Vpn(0), NodeId(3)).target, NodeId(2));
        m.set_mapping(Vpn(0), NodeId(1), Mapping::default());
        m.keep_only(Vpn(0), NodeId(2));
        assert_eq!(m.copy_count(Vpn(0)), 1);
        assert_eq!(m.mapping(Vpn(0), NodeId(3)).target, NodeId(2));
        assert!(m.free_slots.len() == 1, "the target row is reused");
    }

    /// Page 1's entry lock times on nodes 0..8, after a pass by `pass_entries` or
    /// `pass_entries_mask` over `nodes`, with the mask and cost it gives.
    fn after_pass(
        nodes: &[NodeId],
        locked: Option<(NodeId, Ns)>,
        mask: bool,
    ) -> (Vec<Ns>, u64, Ns) {
        let mut m = Memory::new(4, 8, 16);
        m.track_user_runs();
        if let Some((n, until)) = locked {
            m.lock_pte(Vpn(1), n, until);
        }
        let mut cost = Ns(5);
        let timing = (Ns(3), Ns(7));
        let passed = if mask {
            m.pass_entries_mask(Vpn(1), nodes, Ns(100), &mut cost, timing)
        } else {
            let mut p = 0u64;
            m.pass_entries(Vpn(1), nodes, Ns(100), &mut cost, timing, |n| p |= 1 << n.0);
            p
        };
        let locks = (0..8)
            .map(|n| m.pte_locked_until(Vpn(1), NodeId(n)))
            .collect();
        (locks, passed, cost)
    }

    #[test]
    fn a_pass_over_consecutive_free_entries_in_one_sweep_is_the_pass_one_by_one() {
        let nodes: Vec<NodeId> = (2..7).map(NodeId).collect();
        let swept = after_pass(&nodes, None, true);
        assert_eq!(swept, after_pass(&nodes, None, false));
        assert_eq!(swept.1, 0b111_1100);
        assert_eq!(swept.2, Ns(5 + 5 * 10));
    }

    #[test]
    fn a_pass_over_scattered_or_held_entries_is_the_pass_one_by_one() {
        let scattered = [NodeId(0), NodeId(3), NodeId(7)];
        assert_eq!(
            after_pass(&scattered, None, true),
            after_pass(&scattered, None, false)
        );
        let nodes: Vec<NodeId> = (0..8).map(NodeId).collect();
        let held = Some((NodeId(4), Ns(400)));
        let swept = after_pass(&nodes, held, true);
        assert_eq!(swept, after_pass(&nodes, held, false));
        assert!(swept.2 > Ns(5 + 8 * 10), "the held entry was waited for");
    }
}
