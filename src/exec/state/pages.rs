//! `PagedVec`: a vector kept in pages of about 64 KiB that can be frozen in microseconds
//! (docs/design/0008 §7). Freezing gives a [`FrozenVec`], a read-only view of the vector as
//! it was, which another thread reads (a checkpoint's writer) while the operator goes on
//! writing: the view shares every page, and a page still shared is copied once, on the first
//! write into it after the freeze (copy on write, as Flink's `CopyOnWriteStateMap` copies
//! its entries).
//!
//! A page is reached through one shift and one mask; the per-page flag that says it is not
//! shared is a plain load, so a write into an unshared page costs no atomic operation.
//! [`PagedBits`] keeps bits the same way.

use std::cell::{Cell, UnsafeCell};
use std::ops::{Index, IndexMut};
use std::sync::Arc;

/// Bytes a page holds at most (the elements per page are the power of two that fits).
const PAGE_BYTES: usize = 64 * 1024;

/// One page's elements. Written only by the [`PagedVec`] that holds the only reference to it
/// (see `PagedVec::page_mut`), read by any holder.
struct Page<T>(UnsafeCell<Vec<T>>);

// SAFETY: a page is mutated only through `PagedVec::page_mut`, which first makes sure the
// vector holds the only `Arc` to it (a fresh copy, or `Arc::get_mut` succeeding). Every other
// holder (a `FrozenVec`, on any thread) only reads, and no page it holds is ever mutated.
unsafe impl<T: Send + Sync> Sync for Page<T> {}

impl<T> Page<T> {
    fn new(elements: Vec<T>) -> Arc<Self> {
        Arc::new(Page(UnsafeCell::new(elements)))
    }

    fn elements(&self) -> &Vec<T> {
        // SAFETY: see `Sync` above: no one mutates a page while another holds a reference.
        unsafe { &*self.0.get() }
    }
}

/// A page as the vector holds it, with its flag: true while no frozen view shares it, so it
/// is written in place.
struct Slot<T> {
    page: Arc<Page<T>>,
    owned: Cell<bool>,
}

impl<T> Slot<T> {
    fn new(elements: Vec<T>) -> Self {
        Slot {
            page: Page::new(elements),
            owned: Cell::new(true),
        }
    }
}

/// Every page but the last is full (`1 << shift` elements), the last holds the rest: so an
/// index below `len` is always in a page and within it, which the accessors rely on.
pub struct PagedVec<T> {
    slots: Vec<Slot<T>>,
    len: usize,
    /// Elements per page: `1 << shift`.
    shift: u32,
}

impl<T> Default for PagedVec<T> {
    fn default() -> Self {
        PagedVec::new()
    }
}

impl<T> PagedVec<T> {
    /// An empty vector with pages of [`PAGE_BYTES`].
    pub fn new() -> Self {
        let per_page = (PAGE_BYTES / std::mem::size_of::<T>().max(1)).max(2);
        PagedVec::with_page_len(per_page.ilog2())
    }

    /// An empty vector with `1 << shift` elements per page.
    pub fn with_page_len(shift: u32) -> Self {
        PagedVec {
            slots: Vec::new(),
            len: 0,
            shift,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    fn mask(&self) -> usize {
        (1 << self.shift) - 1
    }

    /// Element `i`, which is below `len`.
    #[inline]
    fn at(&self, i: usize) -> &T {
        debug_assert!(i < self.len);
        // SAFETY: `i < len`: by the layout invariant, page `i >> shift` exists and holds
        // more than `i & mask` elements.
        unsafe {
            self.slots
                .get_unchecked(i >> self.shift)
                .page
                .elements()
                .get_unchecked(i & self.mask())
        }
    }

    /// Element `i`, which is below `len`, to write.
    #[inline]
    fn at_mut(&mut self, i: usize) -> &mut T
    where
        T: Clone,
    {
        debug_assert!(i < self.len);
        let (p, at) = (i >> self.shift, i & self.mask());
        // SAFETY: as in `at`; the page is made this vector's own first.
        unsafe {
            if !self.slots.get_unchecked(p).owned.get() {
                self.own(p);
            }
            (&mut *self.slots.get_unchecked(p).page.0.get()).get_unchecked_mut(at)
        }
    }

    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        (i < self.len).then(|| self.at(i))
    }

    #[inline]
    pub fn get_mut(&mut self, i: usize) -> Option<&mut T>
    where
        T: Clone,
    {
        if i < self.len {
            Some(self.at_mut(i))
        } else {
            None
        }
    }

    /// Page `p`'s elements, to write: copied first if a frozen view still shares it.
    #[inline]
    fn page_mut(&mut self, p: usize) -> &mut Vec<T>
    where
        T: Clone,
    {
        if !self.slots[p].owned.get() {
            self.own(p);
        }
        // SAFETY: page `p` is owned: this vector holds the only reference to it (`own`), and
        // `&mut self` excludes every other use of it for as long as the borrow lives.
        unsafe { &mut *self.slots[p].page.0.get() }
    }

    #[cold]
    fn own(&mut self, p: usize)
    where
        T: Clone,
    {
        let slot = &mut self.slots[p];
        if Arc::get_mut(&mut slot.page).is_none() {
            let copy = slot.page.elements().clone();
            slot.page = Page::new(copy);
        }
        slot.owned.set(true);
    }

    pub fn push(&mut self, value: T)
    where
        T: Clone,
    {
        let p = self.len >> self.shift;
        if p == self.slots.len() {
            self.slots.push(Slot::new(Vec::new()));
        }
        let per_page = 1 << self.shift;
        let page = self.page_mut(p);
        reserve_within(page, 1, per_page);
        page.push(value);
        self.len += 1;
    }

    /// Grows the vector to `len` elements of `fill` (a longer vector is left as it is).
    pub fn grow(&mut self, len: usize, fill: T)
    where
        T: Clone,
    {
        let per_page = 1 << self.shift;
        while self.len < len {
            let p = self.len >> self.shift;
            if p == self.slots.len() {
                self.slots.push(Slot::new(Vec::new()));
            }
            let take = (len - self.len).min(per_page - (self.len & self.mask()));
            let page = self.page_mut(p);
            reserve_within(page, take, per_page);
            page.resize(page.len() + take, fill.clone());
            self.len += take;
        }
    }

    /// A read-only view of the vector as it is now, for another thread; the vector's next
    /// write into each page copies that page first.
    pub fn freeze(&self) -> FrozenVec<T> {
        for slot in &self.slots {
            slot.owned.set(false);
        }
        FrozenVec {
            pages: self.slots.iter().map(|s| s.page.clone()).collect(),
            len: self.len,
            shift: self.shift,
        }
    }

    /// The number of pages (the last may be partly filled).
    pub fn page_count(&self) -> usize {
        self.slots.len()
    }

    /// Page `p`'s elements.
    #[inline]
    pub fn page(&self, p: usize) -> &[T] {
        self.slots[p].page.elements()
    }

    /// Page `p`'s elements, to change or extend within the page's capacity, for a caller
    /// that lays out records of its own page by page, as
    /// [`ByteStore`](super::byte_store::ByteStore) does (it uses only the page accessors:
    /// the element accessors rely on [`len`](Self::len), which such a caller leaves at 0).
    #[inline]
    pub fn page_elements_mut(&mut self, p: usize) -> &mut Vec<T>
    where
        T: Clone,
    {
        self.page_mut(p)
    }

    /// Adds an empty page.
    pub fn push_page(&mut self) {
        self.slots.push(Slot::new(Vec::new()));
    }
}

/// Makes room for `more` elements in `page`, growing it as a vector grows (doubling) but
/// never past `limit`, so that a full page holds no spare capacity.
pub fn reserve_within<T>(page: &mut Vec<T>, more: usize, limit: usize) {
    let needed = page.len() + more;
    if page.capacity() < needed {
        let want = (page.capacity() * 2).max(8).min(limit).max(needed);
        page.reserve_exact(want - page.len());
    }
}

impl<T> Index<usize> for PagedVec<T> {
    type Output = T;

    #[inline]
    fn index(&self, i: usize) -> &T {
        assert!(i < self.len, "index {i} out of {} elements", self.len);
        self.at(i)
    }
}

impl<T: Clone> IndexMut<usize> for PagedVec<T> {
    #[inline]
    fn index_mut(&mut self, i: usize) -> &mut T {
        assert!(i < self.len, "index {i} out of {} elements", self.len);
        self.at_mut(i)
    }
}

/// A [`PagedVec`] as it was when frozen; read from any thread.
pub struct FrozenVec<T> {
    pages: Vec<Arc<Page<T>>>,
    len: usize,
    shift: u32,
}

impl<T> FrozenVec<T> {
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn get(&self, i: usize) -> Option<&T> {
        if i < self.len {
            Some(&self.pages[i >> self.shift].elements()[i & ((1 << self.shift) - 1)])
        } else {
            None
        }
    }

    /// Page `p`'s elements.
    #[inline]
    pub fn page(&self, p: usize) -> &[T] {
        self.pages[p].elements()
    }
}

impl<T> Index<usize> for FrozenVec<T> {
    type Output = T;

    #[inline]
    fn index(&self, i: usize) -> &T {
        &self.pages[i >> self.shift].elements()[i & ((1 << self.shift) - 1)]
    }
}

/// Bits by index in pages, as [`PagedVec`] keeps its elements.
#[derive(Default)]
pub struct PagedBits {
    words: PagedVec<u64>,
    len: usize,
}

impl PagedBits {
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Grows to `len` bits, the new ones clear.
    pub fn grow(&mut self, len: usize) {
        if self.len < len {
            self.words.grow(len.div_ceil(64), 0);
            self.len = len;
        }
    }

    #[inline]
    pub fn get(&self, i: usize) -> bool {
        self.words[i / 64] & (1 << (i % 64)) != 0
    }

    #[inline]
    pub fn set(&mut self, i: usize, value: bool) {
        let word = &mut self.words[i / 64];
        if value {
            *word |= 1 << (i % 64);
        } else {
            *word &= !(1 << (i % 64));
        }
    }

    pub fn freeze(&self) -> FrozenBits {
        FrozenBits {
            words: self.words.freeze(),
            len: self.len,
        }
    }
}

/// [`PagedBits`] as they were when frozen.
pub struct FrozenBits {
    words: FrozenVec<u64>,
    len: usize,
}

impl FrozenBits {
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    #[inline]
    pub fn get(&self, i: usize) -> bool {
        self.words[i / 64] & (1 << (i % 64)) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A frozen view keeps what the vector held when frozen, on another thread too, while
    /// the vector goes on changing, growing and being frozen again.
    #[test]
    fn frozen_views_keep_their_moment() {
        let mut v: PagedVec<u64> = PagedVec::with_page_len(3);
        for i in 0..20 {
            v.push(i);
        }
        let first = v.freeze();
        v[3] = 300;
        v[17] = 1700;
        v.push(20);
        let second = v.freeze();
        v[3] = 3000;
        v.grow(40, 7);
        let reader = std::thread::spawn(move || {
            let values: Vec<u64> = (0..first.len()).map(|i| first[i]).collect();
            (values, first.get(20).copied())
        });
        let (values, past_end) = reader.join().unwrap();
        assert_eq!(values, (0..20).collect::<Vec<u64>>());
        assert_eq!(past_end, None);
        assert_eq!((second[3], second[17], second[20]), (300, 1700, 20));
        assert_eq!(second.len(), 21);
        assert_eq!(
            (v[3], v[17], v[20], v[39], v.len()),
            (3000, 1700, 20, 7, 40)
        );
        assert_eq!(v.get(40), None);
    }

    /// A page nobody shares any more is written in place again, not copied.
    #[test]
    fn a_page_no_longer_shared_is_not_copied() {
        let mut v: PagedVec<u32> = PagedVec::new();
        v.grow(10, 1);
        let before = v.page(0).as_ptr();
        drop(v.freeze());
        v[0] = 2;
        assert_eq!(v.page(0).as_ptr(), before);
        let view = v.freeze();
        v[0] = 3;
        assert_ne!(v.page(0).as_ptr(), before);
        assert_eq!((view[0], v[0]), (2, 3));
    }

    #[test]
    fn bits_freeze_as_elements_do() {
        let mut bits = PagedBits::default();
        bits.grow(130);
        bits.set(0, true);
        bits.set(129, true);
        let view = bits.freeze();
        bits.set(0, false);
        bits.set(64, true);
        assert!(view.get(0) && view.get(129) && !view.get(64));
        assert!(!bits.get(0) && bits.get(64) && bits.get(129));
        assert_eq!((view.len(), bits.len()), (130, 130));
    }
}
