//! Processor caches: only misses reach memory.
//!
//! On a cache-coherent machine (the Origin2000) a reference that hits in the processor's
//! cache never reaches a memory module, so it costs no memory latency, takes no module
//! or switch time and is not counted by the per-page hardware counters, which count
//! memory accesses. Placement policies see misses only; that is what this module gives
//! the engine.
//!
//! **The fast model** ([`Caches`]) is LRU over lines, kept by *segments*: runs of
//! consecutive lines of one page with the same recency, in one LRU list per processor.
//! A reference run walks the bytes `[at, at + span)` of its page in ascending order
//! ([`crate::component::Op::Ref`]), so its lines form one range: the walk gathers them
//! into a new most recent segment, lines held are hits (taken out of their old
//! segments, which may split), lines not held are misses, and each miss beyond the
//! room evicts the least recently used line, the lowest of the oldest segment (possibly
//! one of this page's that the walk has yet to reach, which then misses too: LRU's
//! cyclic case). That is exactly line-by-line LRU for ascending walks, at a cost per run
//! of the segments it touches. A write run drops the lines it writes from every other
//! processor's cache (write-invalidate coherence; the caches holding a page are a bit
//! each per page), and a page that moves (migration, replication, collapse) leaves every
//! cache. A page × processor table of 4 bytes an entry finds a page's segments.
//!
//! What it leaves out: associativity (the caches are fully associative; a
//! set-associative cache's conflict misses are not there), the write-back of dirty lines
//! an eviction causes (memory traffic the counters would also see), a cache-to-cache
//! transfer being cheaper or dearer than a memory access (a miss is priced as a memory
//! access to the page's home), and the primary caches (their hits are the program's
//! computation). [`ExactLru`] is the reference it is validated against: line by line,
//! set-associative, true LRU within a set, invalidation per line; `tests/cache.rs` runs
//! both on the NAS kernels' address streams: the same misses against a fully associative
//! exact cache, and the difference associativity makes against a 2-way one.

use crate::error::ConfigError;
use crate::fields::Fields;
use serde::{Deserialize, Serialize};

/// A machine's processor caches.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, Fields)]
#[serde(deny_unknown_fields)]
pub struct CacheConfig {
    /// Whether references go through the caches (default true when the table is given).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// Capacity of each processor's cache (the last level before memory).
    #[field(min = 0, max = 1_099_511_627_776u64, unit = "bytes")]
    pub bytes: u64,
    /// Line size: the unit a miss brings from memory and a memory access counts.
    #[field(min = 0, max = 1_073_741_824, unit = "bytes")]
    pub line_bytes: u64,
    /// Time a run spends per line that hits (ns); the words within a line are the
    /// program's computation.
    #[serde(default)]
    #[field(min = 0, max = crate::TIME_LIMIT, unit = "ns")]
    pub hit_ns: u64,
}

fn yes() -> bool {
    true
}

impl Default for CacheConfig {
    /// No cache.
    fn default() -> Self {
        CacheConfig {
            enabled: false,
            bytes: 0,
            line_bytes: 0,
            hit_ns: 0,
        }
    }
}

impl CacheConfig {
    /// Whether references bypass caches (nothing to serialise).
    pub fn is_off(&self) -> bool {
        !self.enabled
    }

    /// Lines each cache holds.
    pub fn lines(&self) -> u64 {
        self.bytes / self.line_bytes.max(1)
    }

    /// Checks the configuration against the machine's page size.
    pub fn validate(&self, page_size: u64) -> Result<(), ConfigError> {
        if !self.enabled {
            return Ok(());
        }
        if self.line_bytes == 0 || !page_size.is_multiple_of(self.line_bytes) {
            return Err(ConfigError::new(
                "machine.cache.line_bytes",
                format!(
                    "{}: a line must divide the page ({page_size} bytes)",
                    self.line_bytes
                ),
            ));
        }
        if self.bytes < self.line_bytes {
            return Err(ConfigError::new(
                "machine.cache.bytes",
                format!(
                    "{}: the cache must hold at least one line of {} bytes",
                    self.bytes, self.line_bytes
                ),
            ));
        }
        Ok(())
    }
}

/// What the caches did, in lines.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CacheStats {
    /// Lines found in the cache.
    pub hits: u64,
    /// Lines brought from memory (memory accesses).
    pub misses: u64,
    /// Lines dropped from other caches by writes (coherence).
    pub invalidated: u64,
    /// Lines dropped to make room.
    pub evicted: u64,
    /// Lines dropped because their page moved.
    pub flushed: u64,
}

const NIL: u32 = u32::MAX;

/// A run of consecutive lines of one page with the same recency: `[lo, hi)`.
#[derive(Clone, Copy, Debug)]
struct Seg {
    page: u32,
    lo: u32,
    hi: u32,
    /// Towards the most recently used end.
    prev: u32,
    /// Towards the least recently used end.
    next: u32,
    /// The page's next segment in this cache.
    next_in_page: u32,
}

/// One processor's cache: an LRU list of segments.
#[derive(Clone, Debug)]
struct Lru {
    segs: Vec<Seg>,
    free: Vec<u32>,
    mru: u32,
    lru: u32,
    lines: u64,
}

impl Lru {
    fn new() -> Lru {
        Lru {
            segs: Vec::new(),
            free: Vec::new(),
            mru: NIL,
            lru: NIL,
            lines: 0,
        }
    }

    fn unlink(&mut self, e: u32) {
        let Seg { prev, next, .. } = self.segs[e as usize];
        if prev == NIL {
            self.mru = next;
        } else {
            self.segs[prev as usize].next = next;
        }
        if next == NIL {
            self.lru = prev;
        } else {
            self.segs[next as usize].prev = prev;
        }
    }

    /// Links `e` between `prev` and `next` (either may be NIL: an end).
    fn link(&mut self, e: u32, prev: u32, next: u32) {
        self.segs[e as usize].prev = prev;
        self.segs[e as usize].next = next;
        if prev == NIL {
            self.mru = e;
        } else {
            self.segs[prev as usize].next = e;
        }
        if next == NIL {
            self.lru = e;
        } else {
            self.segs[next as usize].prev = e;
        }
    }

    fn alloc(&mut self, seg: Seg) -> u32 {
        match self.free.pop() {
            Some(e) => {
                self.segs[e as usize] = seg;
                e
            }
            None => {
                self.segs.push(seg);
                (self.segs.len() - 1) as u32
            }
        }
    }
}

/// The processors' caches (the fast model; see the module docs).
#[derive(Clone, Debug)]
pub struct Caches {
    procs: usize,
    lines_per_page: u32,
    capacity: u64,
    /// `slot[page * procs + proc]`: 1 + the page's first segment in that processor's
    /// cache, or 0.
    slot: Vec<u32>,
    /// Per page, a bit per processor whose cache holds some of it (`words` words a page):
    /// a write visits only those caches.
    holders: Vec<u64>,
    words: usize,
    caches: Vec<Lru>,
    /// What the caches did.
    pub stats: CacheStats,
}

impl Caches {
    /// Bytes the caches of `procs` processors over `npages` pages of `lines_per_page`
    /// lines, `capacity` lines each, can take: the page × processor table and holder
    /// bits at once, and at most one segment (and a free-list slot) per line held, since
    /// every segment holds a line. Kept beside the allocations so estimates stay in step.
    pub fn bytes_needed(npages: u64, procs: u64, lines_per_page: u64, capacity: u64) -> u64 {
        let table = npages
            .saturating_mul(procs)
            .saturating_mul(4)
            .saturating_add(npages.saturating_mul(procs.div_ceil(64)).saturating_mul(8));
        let held = capacity.min(npages.saturating_mul(lines_per_page));
        let per_seg = (std::mem::size_of::<Seg>() + 4) as u64;
        table.saturating_add(procs.saturating_mul(held).saturating_mul(per_seg))
    }

    /// Empty caches of `capacity` lines for `procs` processors over `npages` pages of
    /// `lines_per_page` lines.
    pub fn new(procs: usize, npages: usize, lines_per_page: u32, capacity: u64) -> Caches {
        let words = procs.div_ceil(64);
        Caches {
            procs,
            lines_per_page,
            capacity: capacity.max(1),
            slot: vec![0; npages * procs],
            holders: vec![0; npages * words],
            words,
            caches: (0..procs).map(|_| Lru::new()).collect(),
            stats: CacheStats::default(),
        }
    }

    /// Adds segment `e` to its page's list in `proc`'s cache.
    fn page_push(&mut self, proc: usize, e: u32) {
        let c = &mut self.caches[proc];
        let s = c.segs[e as usize].page as usize * self.procs + proc;
        c.segs[e as usize].next_in_page = match self.slot[s] {
            0 => NIL,
            h => h - 1,
        };
        self.slot[s] = e + 1;
        let page = c.segs[e as usize].page as usize;
        self.holders[page * self.words + proc / 64] |= 1 << (proc % 64);
    }

    /// Drops segment `e` (already empty of lines or counted out) from `proc`'s cache.
    fn drop_seg(&mut self, proc: usize, e: u32) {
        let c = &mut self.caches[proc];
        c.unlink(e);
        let seg = c.segs[e as usize];
        let s = seg.page as usize * self.procs + proc;
        let head = self.slot[s] - 1;
        if head == e {
            self.slot[s] = if seg.next_in_page == NIL {
                self.holders[seg.page as usize * self.words + proc / 64] &= !(1 << (proc % 64));
                0
            } else {
                seg.next_in_page + 1
            };
        } else {
            let mut v = head;
            while c.segs[v as usize].next_in_page != e {
                v = c.segs[v as usize].next_in_page;
            }
            c.segs[v as usize].next_in_page = seg.next_in_page;
        }
        c.free.push(e);
    }

    /// Removes lines `[a, b)` from segment `e` of `proc`'s cache (the part of them it
    /// holds), splitting it if they lie inside; returns the lines removed.
    fn cut(&mut self, proc: usize, e: u32, a: u32, b: u32) -> u32 {
        let c = &mut self.caches[proc];
        let seg = c.segs[e as usize];
        let (a, b) = (a.max(seg.lo), b.min(seg.hi));
        if a >= b {
            return 0;
        }
        let gone = b - a;
        c.lines -= gone as u64;
        if a == seg.lo && b == seg.hi {
            self.drop_seg(proc, e);
        } else if a == seg.lo {
            c.segs[e as usize].lo = b;
        } else if b == seg.hi {
            c.segs[e as usize].hi = a;
        } else {
            // The upper part is the more recent (walks ascend): it goes on the more
            // recent side of the lower part, which keeps `e`.
            c.segs[e as usize].hi = a;
            let up = c.alloc(Seg {
                page: seg.page,
                lo: b,
                hi: seg.hi,
                prev: NIL,
                next: NIL,
                next_in_page: NIL,
            });
            let before = c.segs[e as usize].prev;
            c.link(up, before, e);
            self.page_push(proc, up);
        }
        gone
    }

    /// Evicts least recently used lines of `proc`'s cache until it fits.
    fn make_room(&mut self, proc: usize) {
        loop {
            let c = &mut self.caches[proc];
            if c.lines <= self.capacity {
                return;
            }
            let excess = c.lines - self.capacity;
            let v = c.lru;
            let seg = c.segs[v as usize];
            // A segment's lowest lines are its oldest.
            let take = excess.min((seg.hi - seg.lo) as u64) as u32;
            self.stats.evicted += take as u64;
            self.cut(proc, v, seg.lo, seg.lo + take);
        }
    }

    /// A run of processor `proc` walking lines `[first, first + lines)` of `page` (in
    /// ascending order): returns (hits, misses). Line by line it is LRU: a line held is a
    /// hit and becomes the most recent; a line missed is brought in, evicting the least
    /// recently used line (possibly one of this page's that the walk has yet to reach).
    pub fn access(
        &mut self,
        proc: usize,
        page: u32,
        first: u64,
        lines: u64,
        write: bool,
    ) -> (u64, u64) {
        let lpp = self.lines_per_page as u64;
        let lo = first.min(lpp) as u32;
        let end = first.saturating_add(lines).min(lpp) as u32;
        if lo >= end {
            return (0, 0);
        }
        // The walk's lines gather in a new most recent segment `n`.
        let c = &mut self.caches[proc];
        let n = c.alloc(Seg {
            page,
            lo,
            hi: lo,
            prev: NIL,
            next: NIL,
            next_in_page: NIL,
        });
        let head = c.mru;
        c.link(n, NIL, head);
        self.page_push(proc, n);
        let (mut hits, mut misses) = (0u64, 0u64);
        let mut x = lo;
        while x < end {
            // The page's segment holding `x`, or the nearest one above it.
            let (mut holder, mut next_lo) = (NIL, end);
            let c = &self.caches[proc];
            let mut v = match self.slot[page as usize * self.procs + proc] {
                0 => NIL,
                h => h - 1,
            };
            while v != NIL {
                let seg = c.segs[v as usize];
                if v != n {
                    if seg.lo <= x && x < seg.hi {
                        holder = v;
                        break;
                    }
                    if seg.lo > x {
                        next_lo = next_lo.min(seg.lo);
                    }
                }
                v = seg.next_in_page;
            }
            if holder != NIL {
                let upto = end.min(c.segs[holder as usize].hi);
                let got = self.cut(proc, holder, x, upto);
                let c = &mut self.caches[proc];
                c.segs[n as usize].hi += got;
                c.lines += got as u64;
                hits += got as u64;
                x = upto;
            } else {
                let upto = next_lo;
                let c = &mut self.caches[proc];
                c.segs[n as usize].hi += upto - x;
                c.lines += (upto - x) as u64;
                misses += (upto - x) as u64;
                x = upto;
                // The walk's own segment is the most recent, so it loses lines (its
                // oldest, lowest) only when it is all the cache holds: it never empties.
                self.make_room(proc);
            }
        }
        if write {
            self.invalidate_others(proc, page, lo, end);
        }
        self.stats.hits += hits;
        self.stats.misses += misses;
        (hits, misses)
    }

    /// A write of lines `[a, b)` of `page` by `proc` invalidates them in every other cache.
    fn invalidate_others(&mut self, proc: usize, page: u32, a: u32, b: u32) {
        for w in 0..self.words {
            let mut bits = self.holders[page as usize * self.words + w];
            if w == proc / 64 {
                bits &= !(1 << (proc % 64));
            }
            while bits != 0 {
                let r = w * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                self.invalidate_in(r, page, a, b);
            }
        }
    }

    /// Drops lines `[a, b)` of `page` from processor `r`'s cache.
    fn invalidate_in(&mut self, r: usize, page: u32, a: u32, b: u32) {
        loop {
            let c = &self.caches[r];
            let mut v = match self.slot[page as usize * self.procs + r] {
                0 => NIL,
                h => h - 1,
            };
            let mut hit = NIL;
            while v != NIL {
                let seg = c.segs[v as usize];
                if seg.lo < b && a < seg.hi {
                    hit = v;
                    break;
                }
                v = seg.next_in_page;
            }
            if hit == NIL {
                return;
            }
            let gone = self.cut(r, hit, a, b);
            self.stats.invalidated += gone as u64;
        }
    }

    /// `page` moved to another frame: no cache holds its lines any more.
    pub fn flush_page(&mut self, page: u32) {
        let base = page as usize * self.procs;
        if base >= self.slot.len() {
            return;
        }
        for r in 0..self.procs {
            while self.slot[base + r] != 0 {
                let e = self.slot[base + r] - 1;
                let c = &mut self.caches[r];
                let seg = c.segs[e as usize];
                let gone = seg.hi - seg.lo;
                c.lines -= gone as u64;
                self.stats.flushed += gone as u64;
                self.drop_seg(r, e);
            }
        }
    }

    /// Lines processor `proc` holds of `page`.
    pub fn held(&self, proc: usize, page: u32) -> u32 {
        let c = &self.caches[proc];
        let mut v = match self.slot[page as usize * self.procs + proc] {
            0 => NIL,
            h => h - 1,
        };
        let mut sum = 0;
        while v != NIL {
            let seg = c.segs[v as usize];
            sum += seg.hi - seg.lo;
            v = seg.next_in_page;
        }
        sum
    }

    /// Lines processor `proc` holds in all.
    pub fn occupancy(&self, proc: usize) -> u64 {
        self.caches[proc].lines
    }
}

/// The reference model: line-by-line, set-associative caches with true LRU in each set
/// and write-invalidate coherence per line (slow; for validation).
#[derive(Clone, Debug)]
pub struct ExactLru {
    sets: usize,
    ways: usize,
    /// Per processor, per set: line addresses, most recently used first.
    caches: Vec<Vec<Vec<u64>>>,
    /// What the caches did.
    pub stats: CacheStats,
}

impl ExactLru {
    /// `procs` caches of `lines` lines each, `ways`-way set-associative (`ways >= lines`:
    /// fully associative).
    pub fn new(procs: usize, lines: u64, ways: usize) -> ExactLru {
        let ways = ways.clamp(1, lines.max(1) as usize);
        let sets = (lines as usize / ways).max(1);
        ExactLru {
            sets,
            ways,
            caches: vec![vec![Vec::new(); sets]; procs],
            stats: CacheStats::default(),
        }
    }

    /// Processor `proc` references line `line` (a global line number): whether it hit.
    pub fn access(&mut self, proc: usize, line: u64, write: bool) -> bool {
        let set = (line % self.sets as u64) as usize;
        let s = &mut self.caches[proc][set];
        let hit = match s.iter().position(|&l| l == line) {
            Some(i) => {
                s.remove(i);
                true
            }
            None => false,
        };
        s.insert(0, line);
        if s.len() > self.ways {
            s.pop();
            self.stats.evicted += 1;
        }
        if hit {
            self.stats.hits += 1;
        } else {
            self.stats.misses += 1;
        }
        if write {
            for (r, c) in self.caches.iter_mut().enumerate() {
                if r == proc {
                    continue;
                }
                let s = &mut c[set];
                if let Some(i) = s.iter().position(|&l| l == line) {
                    s.remove(i);
                    self.stats.invalidated += 1;
                }
            }
        }
        hit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A whole-page walk of `k` lines.
    fn walk(c: &mut Caches, proc: usize, page: u32, k: u64) -> (u64, u64) {
        c.access(proc, page, 0, k, false)
    }

    #[test]
    fn a_page_walked_twice_hits_the_second_time() {
        let mut c = Caches::new(1, 4, 8, 64);
        assert_eq!(walk(&mut c, 0, 1, 8), (0, 8));
        assert_eq!(walk(&mut c, 0, 1, 8), (8, 0));
    }

    #[test]
    fn a_run_of_more_lines_than_held_misses_the_difference() {
        let mut c = Caches::new(1, 4, 8, 64);
        walk(&mut c, 0, 1, 3);
        assert_eq!(walk(&mut c, 0, 1, 8), (3, 5));
        assert_eq!(c.held(0, 1), 8);
    }

    #[test]
    fn runs_at_different_places_in_a_page_hold_different_lines() {
        let mut c = Caches::new(1, 4, 8, 64);
        c.access(0, 1, 0, 2, false);
        assert_eq!(c.access(0, 1, 4, 2, false), (0, 2));
        assert_eq!(c.access(0, 1, 0, 6, false), (4, 2));
    }

    #[test]
    fn the_least_recently_used_page_is_evicted_first() {
        // Room for two pages of 8 lines.
        let mut c = Caches::new(1, 4, 8, 16);
        walk(&mut c, 0, 0, 8);
        walk(&mut c, 0, 1, 8);
        walk(&mut c, 0, 0, 8); // page 1 is now least recently used
        walk(&mut c, 0, 2, 8);
        assert_eq!(c.held(0, 1), 0);
        assert_eq!(c.held(0, 0), 8);
        assert_eq!(c.held(0, 2), 8);
        assert_eq!(c.occupancy(0), 16);
        assert_eq!(c.stats.evicted, 8);
    }

    #[test]
    fn eviction_takes_a_pages_oldest_lines_when_that_is_enough() {
        let mut c = Caches::new(1, 4, 8, 12);
        walk(&mut c, 0, 0, 8);
        walk(&mut c, 0, 1, 8);
        assert_eq!(c.held(0, 0), 4);
        // The lines kept are the last four walked.
        assert_eq!(c.access(0, 0, 4, 4, false), (4, 0));
    }

    #[test]
    fn a_cyclic_walk_larger_than_the_cache_misses_every_time() {
        // Three pages of 8 lines through 20 lines: LRU keeps nothing a walk comes back to.
        let mut c = Caches::new(1, 4, 8, 20);
        for _ in 0..4 {
            for p in 0..3 {
                walk(&mut c, 0, p, 8);
            }
        }
        assert_eq!(c.stats.hits, 0);
    }

    #[test]
    fn a_cache_smaller_than_a_page_keeps_the_last_lines_of_a_walk_and_a_rewalk_misses() {
        let mut c = Caches::new(1, 2, 8, 5);
        assert_eq!(walk(&mut c, 0, 0, 8), (0, 8));
        assert_eq!(c.held(0, 0), 5);
        // As LRU: the walk's first misses evict the page's own oldest lines first.
        assert_eq!(walk(&mut c, 0, 0, 8), (0, 8));
    }

    #[test]
    fn a_write_invalidates_the_lines_it_writes_in_other_caches() {
        let mut c = Caches::new(3, 4, 8, 64);
        walk(&mut c, 1, 2, 8);
        walk(&mut c, 2, 2, 8);
        c.access(0, 2, 2, 3, true);
        assert_eq!(c.held(1, 2), 5);
        assert_eq!(c.held(2, 2), 5);
        assert_eq!(c.held(0, 2), 3);
        assert_eq!(c.stats.invalidated, 6);
        // The lines around the written ones stay; the written ones miss.
        assert_eq!(walk(&mut c, 1, 2, 8), (5, 3));
        // The writer's own lines stay.
        assert_eq!(c.access(0, 2, 2, 3, false), (3, 0));
    }

    #[test]
    fn a_page_that_moves_leaves_every_cache() {
        let mut c = Caches::new(2, 4, 8, 64);
        walk(&mut c, 0, 3, 8);
        walk(&mut c, 1, 3, 8);
        c.flush_page(3);
        assert_eq!(c.held(0, 3) + c.held(1, 3), 0);
        assert_eq!(c.occupancy(0) + c.occupancy(1), 0);
        assert_eq!(c.stats.flushed, 16);
    }

    #[test]
    fn the_exact_model_misses_a_cyclic_sweep_larger_than_the_cache_every_time() {
        let mut x = ExactLru::new(1, 4, 4);
        for _ in 0..3 {
            for l in 0..5 {
                x.access(0, l, false);
            }
        }
        assert_eq!(x.stats.hits, 0);
    }

    #[test]
    fn the_exact_model_invalidates_written_lines_in_other_caches() {
        let mut x = ExactLru::new(2, 8, 8);
        x.access(1, 5, false);
        x.access(0, 5, true);
        assert!(!x.access(1, 5, false));
        assert_eq!(x.stats.invalidated, 1);
    }
}
