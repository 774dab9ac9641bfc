//! The memory of job cells, reused instead of given back to the allocator.
//!
//! A producer allocates a job's cell and, as a rule, a worker frees it. With
//! the system allocator each such job moves one chunk from the worker's
//! cache back to the producer's through the allocator's shared bins: with
//! glibc that was a fifth of a producer's time with trivial jobs, most of it
//! cache misses walking the chunks the workers freed (benches/README.md).
//!
//! Here a thread keeps the cells it frees, by size, and passes them on in
//! batches:
//! - cells of up to [`CLASSES`] × 8 bytes with an alignment of at most 8 are
//!   kept, in classes 8 bytes apart; any other cell goes to the allocator;
//! - a thread allocates from its own spare cells first, then takes a whole
//!   batch from the shared depot (one lock per [`BATCH`] cells), and only
//!   then asks the allocator;
//! - a thread that holds 2 × [`BATCH`] spare cells of a class passes
//!   [`BATCH`] of them to the depot; the depot keeps at most a set number
//!   of bytes of cells, all classes together ([`DEFAULT_DEPOT_LIMIT`],
//!   4 MiB, enough for the cells of a backlog of 65 536 jobs to serve the
//!   next one; [`set_spare_cell_limit`](crate::set_spare_cell_limit)
//!   changes it), and beyond that cells go back to the allocator;
//! - a job's path never waits for the depot's lock: if another thread
//!   holds it, the producer allocates, and the worker keeps the cell (up to
//!   [`LOCAL_MAX`]) or frees it;
//! - a thread that exits passes its spare cells on the same way;
//!   [`release_spare_cells`](crate::release_spare_cells) frees the depot's
//!   and the calling thread's.
//!
//! So memory kept for reuse is bounded, whatever the bursts before: the
//! depot's limit, plus per thread and class at most [`LOCAL_MAX`] cells
//! (2 × [`BATCH`] unless the depot's lock was busy), so at worst 32 KiB
//! for each class a thread used (256 cells of the largest, 128 bytes).
//! With the default limit, a process whose pools ran a burst of any size
//! keeps at most 4 MiB plus that, about what the allocator itself would
//! keep of a freed backlog.
//!
//! Under loom cells come from the allocator directly: the cache is a mutex
//! and thread-locals, not a lock-free protocol of its own, and loom's
//! models are about the cell's state word.
//!
//! Built with `--cfg priority_executor_no_recycle` (in `RUSTFLAGS`), cells
//! come from and go back to the allocator directly as well, so that Miri,
//! sanitizers, valgrind and a fuzzer's leak check see every cell's free:
//! a recycled cell is never handed back to the allocator, and a use after
//! its reuse would look like a use of live memory.

use std::alloc::Layout;
use std::ptr::NonNull;

/// Size classes kept: 8, 16, ... up to `CLASSES * GRAIN` bytes.
const CLASSES: usize = 16;
/// Size step between classes, and the largest alignment kept.
const GRAIN: usize = 8;
/// Cells passed between a thread and the depot at once.
#[cfg_attr(any(loom, priority_executor_no_recycle), allow(dead_code))]
const BATCH: usize = 32;
/// Cells a thread keeps per class while the depot is busy.
#[cfg_attr(any(loom, priority_executor_no_recycle), allow(dead_code))]
const LOCAL_MAX: usize = 8 * BATCH;
/// The bytes of spare cells the depot keeps, all classes together (with
/// its record of each, 8 bytes), unless the application sets another
/// limit: the cells of a backlog of 100 000 to 175 000 usual jobs (16 to
/// 32 bytes each), for the next burst.
#[cfg_attr(any(loom, priority_executor_no_recycle), allow(dead_code))]
pub(crate) const DEFAULT_DEPOT_LIMIT: usize = 4 << 20;

/// The class of a layout, if its cells are kept.
#[inline]
fn class_of(layout: Layout) -> Option<usize> {
    if layout.align() > GRAIN || layout.size() == 0 || layout.size() > CLASSES * GRAIN {
        return None;
    }
    Some((layout.size() - 1) / GRAIN)
}

/// The layout every cell of a class is allocated with.
const fn class_layout(class: usize) -> Layout {
    match Layout::from_size_align((class + 1) * GRAIN, GRAIN) {
        Ok(layout) => layout,
        Err(_) => panic!("a class layout is valid"),
    }
}

/// Memory for one `T`, from the spare cells if one fits.
#[inline]
fn allocate<T>() -> NonNull<T> {
    let layout = Layout::new::<T>();
    let layout = match class_of(layout) {
        Some(class) => {
            if let Some(spare) = imp::take(class) {
                return spare.cast();
            }
            class_layout(class)
        }
        None if layout.size() == 0 => return NonNull::dangling(),
        None => layout,
    };
    // SAFETY: `layout` has a non-zero size (zero-sized ones returned above;
    // a class layout is at least 8 bytes).
    let raw = unsafe { std::alloc::alloc(layout) };
    match NonNull::new(raw) {
        Some(raw) => raw.cast(),
        None => std::alloc::handle_alloc_error(layout),
    }
}

/// Gives back memory [`allocate`] returned for a `T`, whose value is gone.
///
/// # Safety
///
/// `ptr` came from `allocate::<T>()`, its value was dropped or moved out,
/// and nothing uses it again.
#[inline]
unsafe fn release<T>(ptr: NonNull<T>) {
    let layout = Layout::new::<T>();
    let layout = match class_of(layout) {
        Some(class) => {
            if imp::keep(class, ptr.cast()) {
                return;
            }
            class_layout(class)
        }
        None if layout.size() == 0 => return,
        None => layout,
    };
    // SAFETY: allocated by `allocate::<T>` with this same layout (the class
    // layout for a kept class, `T`'s own otherwise).
    unsafe { std::alloc::dealloc(ptr.as_ptr().cast(), layout) };
}

/// A value in recycled memory: a `Box` whose memory comes from and goes
/// back to the spare cells.
pub(crate) struct Recycled<T>(NonNull<T>);

// SAFETY: `Recycled<T>` owns its `T` as a `Box<T>` does.
unsafe impl<T: Send> Send for Recycled<T> {}
// SAFETY: as above: shared access gives `&T` only.
unsafe impl<T: Sync> Sync for Recycled<T> {}

impl<T> Recycled<T> {
    #[inline]
    pub(crate) fn new(value: T) -> Self {
        let ptr = allocate::<T>();
        // SAFETY: fresh memory for one `T`, or a spare cell of `T`'s class
        // (its size and alignment fit `T`), that nothing else uses.
        unsafe { ptr.as_ptr().write(value) };
        Recycled(ptr)
    }

    /// The value back, its memory released.
    pub(crate) fn into_inner(self) -> T {
        let ptr = self.into_raw();
        // SAFETY: `ptr` holds a value this box owned; it is read once and
        // the memory released without dropping it again.
        unsafe {
            let value = ptr.as_ptr().read();
            release(ptr);
            value
        }
    }

    /// The pointer, owned from now on by the caller, who frees it with
    /// [`Recycled::free`].
    #[inline]
    pub(crate) fn into_raw(self) -> NonNull<T> {
        let ptr = self.0;
        std::mem::forget(self);
        ptr
    }

    /// Drops the value and releases its memory.
    ///
    /// # Safety
    ///
    /// `ptr` came from [`Recycled::into_raw`], and nothing uses it again.
    #[inline]
    pub(crate) unsafe fn free(ptr: NonNull<T>) {
        // SAFETY: the caller owns the value and gives it up; its memory
        // came from `allocate::<T>`.
        unsafe {
            std::ptr::drop_in_place(ptr.as_ptr());
            release(ptr);
        }
    }
}

impl<T> Drop for Recycled<T> {
    fn drop(&mut self) {
        // SAFETY: the box owns its value; this is its last use.
        unsafe { Self::free(self.0) };
    }
}

impl<T> std::ops::Deref for Recycled<T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: the box owns a live value.
        unsafe { self.0.as_ref() }
    }
}

/// Frees the spare cells of the calling thread and of the depot.
pub(crate) fn release_spare() {
    imp::release_spare();
}

/// Sets the most bytes of spare cells the depot keeps; returns the limit
/// before.
pub(crate) fn set_depot_limit(bytes: usize) -> usize {
    imp::set_limit(bytes)
}

#[cfg(not(any(loom, priority_executor_no_recycle)))]
#[path = "cache.rs"]
mod imp;

#[cfg(any(loom, priority_executor_no_recycle))]
#[path = "direct.rs"]
mod imp;

#[cfg(all(test, not(any(loom, priority_executor_no_recycle))))]
mod tests;
