//! The binaries' allocator: mimalloc for everything below [`LARGE`] bytes, the C library's
//! `malloc` (one `mmap` per block) from there up.
//!
//! Operators allocate and free column buffers of 10-100 KB per batch: mimalloc keeps those
//! pages and hands them out again, where glibc returns them to the kernel and faults them
//! in again (docs/design/0006). Keyed state is the other kind of allocation: a few vectors
//! and hash tables per operator that grow to hundreds of megabytes by doubling. mimalloc
//! grows a block by copying it into a new one and keeps the old block's pages for a while,
//! so a vector's earlier halves stay resident beside it. glibc's `realloc` of a block it
//! mapped moves the pages (`mremap`) without copying, and `free` unmaps it at once, so peak
//! memory is what the state holds (docs/design/0007).
//!
//! Only those large blocks ask for transparent huge pages. mimalloc is built without them
//! (its `no_thp` feature): it advised its own arenas as huge pages, and where the kernel
//! compacts memory to find a huge page for a fault (`defrag` = `madvise`), the per-batch
//! buffers it recycles cost up to a second of system time per million Nexmark events, varying
//! tenfold from run to run (docs/design/0007).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Once;

/// Blocks of this size and up come from the C library; a per-batch column buffer is mostly
/// smaller, a keyed operator's state vector reaches it at about half a million keys.
pub const LARGE: usize = 1 << 20;

pub struct Allocator;

static MALLOC_OPTIONS: Once = Once::new();

/// The C library's block of `layout`, mapped on its own (a fixed `mmap` threshold also
/// stops glibc from raising the threshold after a free and serving the next large block
/// from its heap).
unsafe fn large(layout: Layout, zeroed: bool) -> *mut u8 {
    MALLOC_OPTIONS.call_once(|| {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: `mallopt` only sets an option of the C library's allocator.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, LARGE as libc::c_int);
        }
    });
    // SAFETY: the caller's layout has a non-zero size (at least LARGE).
    let block = unsafe {
        if zeroed {
            System.alloc_zeroed(layout)
        } else {
            System.alloc(layout)
        }
    };
    huge_pages(block, layout.size());
    block
}

/// Asks the kernel to back a large block with huge pages where it can: keyed state is
/// probed at random, and with 4 KB pages nearly every probe of a table of a million keys
/// also misses the TLB.
fn huge_pages(block: *mut u8, size: usize) {
    #[cfg(target_os = "linux")]
    if !block.is_null() {
        const PAGE: usize = 4096;
        let start = (block as usize).next_multiple_of(PAGE);
        let end = (block as usize + size) & !(PAGE - 1);
        if end > start {
            // SAFETY: the range lies within the block just allocated; the advice changes
            // how it is backed, never its contents.
            unsafe {
                libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
            }
        }
    }
}

// SAFETY: every block is freed or resized by the allocator that made it: the size in the
// layout, which the caller passes back unchanged, says which one that is.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() >= LARGE {
            unsafe { large(layout, false) }
        } else {
            unsafe { mimalloc::MiMalloc.alloc(layout) }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() >= LARGE {
            unsafe { large(layout, true) }
        } else {
            unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if layout.size() >= LARGE {
            unsafe { System.dealloc(ptr, layout) }
        } else {
            unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        match (layout.size() >= LARGE, new_size >= LARGE) {
            (true, true) => unsafe {
                let block = System.realloc(ptr, layout, new_size);
                huge_pages(block, new_size);
                block
            },
            (false, false) => unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) },
            // Crossing the line: a block from the other allocator, the bytes copied over.
            _ => unsafe {
                let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
                let new = self.alloc(new_layout);
                if !new.is_null() {
                    std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                    self.dealloc(ptr, layout);
                }
                new
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks cross the line both ways with their bytes.
    #[test]
    fn blocks_keep_their_bytes_across_the_line() {
        let a = Allocator;
        unsafe {
            let small = Layout::from_size_align(1000, 8).unwrap();
            let p = a.alloc(small);
            for i in 0..1000 {
                *p.add(i) = (i % 251) as u8;
            }
            let p = a.realloc(p, small, LARGE + 10);
            let big = Layout::from_size_align(LARGE + 10, 8).unwrap();
            *p.add(LARGE + 9) = 7;
            let p = a.realloc(p, big, 2 * LARGE);
            let bigger = Layout::from_size_align(2 * LARGE, 8).unwrap();
            assert_eq!(*p.add(LARGE + 9), 7);
            let p = a.realloc(p, bigger, 500);
            assert!((0..500).all(|i| *p.add(i) == (i % 251) as u8));
            a.dealloc(p, Layout::from_size_align(500, 8).unwrap());
            let z = a.alloc_zeroed(big);
            assert!((0..LARGE + 10).step_by(4096).all(|i| *z.add(i) == 0));
            a.dealloc(z, big);
        }
    }
}
