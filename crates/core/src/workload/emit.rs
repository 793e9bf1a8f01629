//! Building a thread's operations: element ranges and walks turned into page reference
//! runs, consecutive runs to one page merged, and a generator's call ended so that the
//! next one merges as if everything had been appended at once.

use crate::component::Op;
use crate::types::Vpn;

/// Turns element ranges into page reference runs, merging consecutive runs to one page.
#[derive(Clone, Copy, Debug)]
pub struct Emitter {
    /// Page size in bytes.
    pub page_size: u64,
}

impl Emitter {
    /// Emits `per_elem` references to each of `len` consecutive elements of `elem_bytes`
    /// bytes starting at byte address `addr` (an element counts on the page of its first
    /// byte).
    pub fn range(
        &self,
        out: &mut Vec<Op>,
        addr: u64,
        len: u64,
        elem_bytes: u64,
        per_elem: u32,
        write: bool,
    ) {
        self.pieces(out, addr, len, elem_bytes, per_elem, write, true);
    }

    /// Like [`Emitter::range`] with one reference per element, but the first run never
    /// merges into the op before it: a walk that repeats the previous one (another pass
    /// over the same lines) stays a run of its own, so a processor cache sees the lines
    /// walked again rather than twice as many lines.
    pub fn walk(&self, out: &mut Vec<Op>, addr: u64, len: u64, elem_bytes: u64, write: bool) {
        self.pieces(out, addr, len, elem_bytes, 1, write, false);
    }

    #[allow(clippy::too_many_arguments)]
    fn pieces(
        &self,
        out: &mut Vec<Op>,
        mut addr: u64,
        len: u64,
        elem_bytes: u64,
        per_elem: u32,
        write: bool,
        merge_first: bool,
    ) {
        let mut left = len;
        let mut merge = merge_first;
        // Page sizes are powers of two in practice: a shift and a mask then, not divisions.
        let ps = self.page_size;
        let shift = ps.is_power_of_two().then(|| ps.trailing_zeros());
        if let Some(s) = shift.filter(|_| len > 0) {
            // Most ranges start all their elements on one page: one run, no loop.
            let last = addr + (len - 1) * elem_bytes;
            if addr >> s == last >> s {
                let at = addr & (ps - 1);
                let span = (len * elem_bytes).min(ps - at);
                let count = len * per_elem as u64;
                let vpn = Vpn((addr >> s) as u32);
                push_piece(out, merge, vpn, write, count, at as u32, span as u32);
                return;
            }
        }
        while left > 0 {
            let (page, at) = match shift {
                Some(s) => (addr >> s, addr & (ps - 1)),
                None => (addr / ps, addr % ps),
            };
            // Elements that start on this page (the last may run over its end).
            let room = ps - at;
            let k = left.min(if elem_bytes.is_power_of_two() {
                (room + elem_bytes - 1) >> elem_bytes.trailing_zeros()
            } else {
                room.div_ceil(elem_bytes)
            });
            let span = (k * elem_bytes).min(room);
            let vpn = Vpn(page as u32);
            let count = k * per_elem as u64;
            push_piece(out, merge, vpn, write, count, at as u32, span as u32);
            merge = true;
            addr += k * elem_bytes;
            left -= k;
        }
    }
}

/// Appends a reference run, merging it into the previous op when that is a run of the same
/// kind to the same page.
pub fn push_ref(out: &mut Vec<Op>, vpn: Vpn, write: bool, count: u64) {
    push_span(out, vpn, write, count, 0, 0);
}

/// One piece of a range: merged into the previous run when `merge` (see [`push_span`]),
/// else a run of its own (the range's first piece never joins a run before it). A page's
/// elements always fit one run's count.
#[inline]
fn push_piece(
    out: &mut Vec<Op>,
    merge: bool,
    vpn: Vpn,
    write: bool,
    count: u64,
    at: u32,
    span: u32,
) {
    if merge {
        push_span(out, vpn, write, count, at, span);
    } else {
        out.push(Op::Ref {
            vpn,
            write,
            count: count.min(u32::MAX as u64) as u32,
            at,
            span,
        });
    }
}

/// Appends a reference run walking `span` bytes of the page from byte `at` (0: see
/// [`Op::Ref`]), merging it into the previous op when that is a run of the same kind to
/// the same page (the merged run walks the smallest range holding both).
pub fn push_span(out: &mut Vec<Op>, vpn: Vpn, write: bool, count: u64, at: u32, span: u32) {
    if count == 0 {
        return;
    }
    if let Some(Op::Ref {
        vpn: v,
        write: w,
        count: c,
        at: a,
        span: s,
    }) = out.last_mut()
    {
        if *v == vpn && *w == write && (*c as u64 + count) <= u32::MAX as u64 {
            *c += count as u32;
            let lo = (*a).min(at);
            *s = if *s == 0 || span == 0 {
                0
            } else {
                (*a + *s).max(at + span) - lo
            };
            *a = lo;
            return;
        }
    }
    let mut count = count;
    while count > 0 {
        let c = count.min(u32::MAX as u64);
        out.push(Op::Ref {
            vpn,
            write,
            count: c as u32,
            at,
            span,
        });
        count -= c;
    }
}

/// About how many operations a generator appends per call before it stops and keeps the
/// rest for the next: threads hold a few hundred operations each, never a whole row,
/// iteration or program, so the buffers stay in the host's caches.
pub const STREAM_OPS: usize = 256;

/// Ends a call of a generator that has more to append: when the last operation appended is
/// a reference run it is taken back (returned) to start the next call, so that a run the
/// next part would merge into it (as [`push_span`] merges consecutive runs to one page)
/// merges as if everything had been appended in one call. `out` keeps at least one
/// operation when it had two.
pub fn hold_back(out: &mut Vec<Op>) -> Option<Op> {
    match out.last() {
        Some(Op::Ref { .. }) if out.len() >= 2 => out.pop(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn emitter_splits_ranges_at_page_boundaries() {
        let e = Emitter { page_size: 16 };
        let mut out = Vec::new();
        // 10 four-byte elements from byte 8: 2 on page 0, 4 on page 1, 4 on page 2.
        e.range(&mut out, 8, 10, 4, 3, false);
        let run = |vpn, count, at, span| Op::Ref {
            vpn: Vpn(vpn),
            write: false,
            count,
            at,
            span,
        };
        assert_eq!(
            out,
            vec![run(0, 6, 8, 8), run(1, 12, 0, 16), run(2, 12, 0, 16)]
        );
    }

    #[test]
    fn a_walk_stays_apart_from_the_run_before_it_on_the_same_page() {
        let e = Emitter { page_size: 16 };
        let mut out = Vec::new();
        e.walk(&mut out, 0, 2, 4, false);
        e.walk(&mut out, 0, 2, 4, false);
        assert_eq!(out.len(), 2);
        e.range(&mut out, 8, 2, 4, 1, false);
        // A range merges, and the merged run walks both parts of the page.
        assert_eq!(
            out[1],
            Op::Ref {
                vpn: Vpn(0),
                write: false,
                count: 4,
                at: 0,
                span: 16
            }
        );
    }

    #[test]
    fn consecutive_runs_to_one_page_merge() {
        let mut out = Vec::new();
        push_ref(&mut out, Vpn(3), true, 2);
        push_ref(&mut out, Vpn(3), true, 5);
        push_ref(&mut out, Vpn(3), false, 1);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0], Op::run(Vpn(3), true, 7));
    }
}
