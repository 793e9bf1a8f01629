//! Page-indexed tables backed by huge pages where the host offers them.
//!
//! A reference reads its page's record at an address that, for a program like GUPS,
//! is random over the whole table. With 4 KB host pages a table of millions of records
//! spans more host pages than the processor's TLB holds, so nearly every random
//! reference also walks the host's page table. Linux backs an anonymous mapping with
//! 2 MB pages when asked (`madvise(MADV_HUGEPAGE)`, which transparent huge pages in their
//! common `madvise` mode require) before the memory is first written; the tables here
//! are asked for it between allocation and initialisation. Elsewhere, or when the host
//! declines, the tables are ordinary vectors: the hint changes speed, never contents.

/// Tables smaller than this stay on ordinary pages (a few huge pages' worth: below it
/// the TLB covers the table anyway).
const HUGE_MIN_BYTES: usize = 8 << 20;

/// The host's huge page size asked for (x86-64 and aarch64 with 4 KB base pages).
const HUGE_PAGE: usize = 2 << 20;

/// `n` copies of `value`, in memory the host is asked to back with huge pages when the
/// table is large.
pub fn filled<T: Clone>(n: usize, value: T) -> Vec<T> {
    let mut v: Vec<T> = Vec::with_capacity(n);
    advise_huge(
        v.as_mut_ptr().cast::<u8>(),
        n.saturating_mul(size_of::<T>()),
    );
    v.resize(n, value);
    v
}

#[cfg(target_os = "linux")]
fn advise_huge(ptr: *mut u8, bytes: usize) {
    if bytes < HUGE_MIN_BYTES {
        return;
    }
    // Only whole huge pages inside the allocation are advised.
    let start = (ptr as usize).next_multiple_of(HUGE_PAGE);
    let end = (ptr as usize + bytes) / HUGE_PAGE * HUGE_PAGE;
    if end > start {
        // SAFETY: [start, end) lies inside the allocation just made and not yet
        // written; MADV_HUGEPAGE changes how it is backed, not what it holds. A host
        // that refuses the advice leaves it as it was, which is correct too.
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_ptr: *mut u8, _bytes: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_table_holds_its_value_everywhere() {
        let v = filled(3 << 20, 7u32);
        assert_eq!(v.len(), 3 << 20);
        assert!(v.iter().all(|&x| x == 7));
    }

    #[test]
    fn a_small_table_is_an_ordinary_vector() {
        assert_eq!(filled(5, 1u8), vec![1u8; 5]);
    }
}
