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
//!   [`BATCH`] of them to the depot; the depot keeps at most
//!   [`DEPOT_BATCHES`] batches a class (enough for the cells of a backlog
//!   of 65 536 jobs to serve the next one), and beyond that cells go back
//!   to the allocator;
//! - a job's path never waits for the depot's lock: if another thread
//!   holds it, the producer allocates, and the worker keeps the cell (up to
//!   [`LOCAL_MAX`]) or frees it;
//! - a thread that exits passes its spare cells on the same way;
//!   [`release_spare_cells`](crate::release_spare_cells) frees the depot's
//!   and the calling thread's.
//!
//! So memory kept for reuse is bounded: per class, at most [`LOCAL_MAX`]
//! cells a thread and [`DEPOT_BATCHES`] × [`BATCH`] in the depot (3 MiB of
//! the usual 40-byte cells, 48 bytes each from glibc), about what the
//! allocator itself would keep of a freed backlog.
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
/// Batches the depot keeps per class.
#[cfg_attr(any(loom, priority_executor_no_recycle), allow(dead_code))]
const DEPOT_BATCHES: usize = 2048;

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

#[cfg(not(any(loom, priority_executor_no_recycle)))]
mod imp {
    use super::{BATCH, CLASSES, DEPOT_BATCHES, LOCAL_MAX, class_layout};
    use std::cell::RefCell;
    use std::ptr::NonNull;
    use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};

    /// A cell nothing uses, kept for the next job of its class.
    struct Spare(NonNull<u8>);

    // SAFETY: a spare cell is plain memory that belongs to no thread.
    unsafe impl Send for Spare {}

    /// The cells a thread keeps, by class.
    struct Local {
        classes: [Vec<Spare>; CLASSES],
    }

    impl Drop for Local {
        fn drop(&mut self) {
            for (class, spare) in self.classes.iter_mut().enumerate() {
                while !spare.is_empty() {
                    let batch = spare.split_off(spare.len().saturating_sub(BATCH));
                    to_depot(class, batch);
                }
            }
        }
    }

    thread_local! {
        static LOCAL: RefCell<Local> = const {
            RefCell::new(Local {
                classes: [const { Vec::new() }; CLASSES],
            })
        };
    }

    /// Full batches passed on by threads, by class.
    static DEPOT: [Mutex<Vec<Vec<Spare>>>; CLASSES] = [const { Mutex::new(Vec::new()) }; CLASSES];

    fn depot(class: usize) -> MutexGuard<'static, Vec<Vec<Spare>>> {
        // Nothing panics while holding the lock; if something did, the
        // lists are still whole.
        DEPOT[class].lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The depot of `class` if no other thread holds it: a job's path never
    /// waits for the depot (it frees or allocates instead).
    #[inline]
    fn try_depot(class: usize) -> Option<MutexGuard<'static, Vec<Vec<Spare>>>> {
        match DEPOT[class].try_lock() {
            Ok(depot) => Some(depot),
            Err(TryLockError::Poisoned(poisoned)) => Some(poisoned.into_inner()),
            Err(TryLockError::WouldBlock) => None,
        }
    }

    /// Passes a batch to the depot (waiting for its lock: a thread's exit),
    /// or frees it if the depot is full.
    fn to_depot(class: usize, batch: Vec<Spare>) {
        let mut depot = depot(class);
        if depot.len() < DEPOT_BATCHES {
            depot.push(batch);
        } else {
            drop(depot);
            free_all(class, batch);
        }
    }

    fn free_all(class: usize, cells: Vec<Spare>) {
        for Spare(ptr) in cells {
            // SAFETY: every spare cell of `class` was allocated with its
            // class layout, and a spare cell is used by nobody.
            unsafe { std::alloc::dealloc(ptr.as_ptr(), class_layout(class)) };
        }
    }

    /// A spare cell of `class`, if this thread or the depot has one.
    #[inline]
    pub(super) fn take(class: usize) -> Option<NonNull<u8>> {
        LOCAL
            .try_with(|local| {
                let mut local = local.try_borrow_mut().ok()?;
                let spare = &mut local.classes[class];
                if spare.is_empty() {
                    *spare = try_depot(class)?.pop()?;
                }
                let taken = spare.pop().map(|Spare(ptr)| ptr);
                if let Some(Spare(next)) = spare.last() {
                    prefetch_for_write(*next);
                }
                taken
            })
            .ok()
            .flatten()
    }

    /// Asks for the cell the next job of this thread will get: it was
    /// freed on another core, and writing the new job into it would wait
    /// for its line; fetched now, it is here by then.
    #[inline]
    fn prefetch_for_write(cell: NonNull<u8>) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_MM_HINT_ET0, _mm_prefetch};
            // SAFETY: a prefetch is a hint: it reads and writes nothing and
            // never faults, whatever the address (and this one is a spare
            // cell's, allocated and unused).
            unsafe { _mm_prefetch::<_MM_HINT_ET0>(cell.as_ptr().cast::<i8>().cast_const()) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = cell;
    }

    /// Keeps a cell of `class` nothing uses any more. `false`: it was not
    /// kept (the thread is exiting, or its cells and the depot are full, or
    /// another thread holds the depot), the caller frees it.
    #[inline]
    pub(super) fn keep(class: usize, ptr: NonNull<u8>) -> bool {
        LOCAL
            .try_with(|local| {
                let Ok(mut local) = local.try_borrow_mut() else {
                    return false;
                };
                let spare = &mut local.classes[class];
                if spare.len() >= 2 * BATCH {
                    // Pass a batch on if the depot has room; while another
                    // thread holds it, keep up to `LOCAL_MAX` cells here.
                    // Beyond either, the cell goes back to the allocator.
                    match try_depot(class) {
                        Some(mut depot) if depot.len() < DEPOT_BATCHES => {
                            depot.push(spare.split_off(spare.len() - BATCH));
                        }
                        None if spare.len() < LOCAL_MAX => {}
                        _ => return false,
                    }
                }
                spare.push(Spare(ptr));
                true
            })
            .unwrap_or(false)
    }

    /// Spare cells of `class` this thread holds.
    #[cfg(test)]
    pub(super) fn spare_len(class: usize) -> usize {
        LOCAL.with(|local| local.borrow().classes[class].len())
    }

    /// Batches of `class` in the depot.
    #[cfg(test)]
    pub(super) fn depot_len(class: usize) -> usize {
        depot(class).len()
    }

    pub(super) fn release_spare() {
        let _ = LOCAL.try_with(|local| {
            if let Ok(mut local) = local.try_borrow_mut() {
                for (class, spare) in local.classes.iter_mut().enumerate() {
                    free_all(class, std::mem::take(spare));
                }
            }
        });
        for class in 0..CLASSES {
            let batches = std::mem::take(&mut *depot(class));
            for batch in batches {
                free_all(class, batch);
            }
        }
    }
}

#[cfg(any(loom, priority_executor_no_recycle))]
mod imp {
    use std::ptr::NonNull;

    #[inline]
    pub(super) fn take(_class: usize) -> Option<NonNull<u8>> {
        None
    }

    #[inline]
    pub(super) fn keep(_class: usize, _ptr: NonNull<u8>) -> bool {
        false
    }

    pub(super) fn release_spare() {}
}

#[cfg(all(test, not(any(loom, priority_executor_no_recycle))))]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::collections::HashSet;
    use std::rc::Rc;

    /// 16 bytes: smaller than any job cell (see the next test), so the
    /// shared depot holds only this test's cells of its class, whatever the
    /// other tests run at the same time.
    struct Small([u64; 2]);

    #[test]
    fn a_job_cell_is_larger_than_the_test_class() {
        fn cell_size<F: FnOnce() + Send + 'static>(_: &F) -> usize {
            size_of::<super::super::JobCell<crate::job::body::Once<F>, super::super::NoMeta>>()
        }
        // The smallest job there is: a closure that captures nothing and
        // returns nothing, with no deadline or timestamp.
        assert!(cell_size(&|| {}) > size_of::<Small>());
    }

    /// Held by the tests that look at the depot or empty it, which the
    /// test harness would otherwise run at the same time.
    static DEPOT_TESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn depot_tests() -> std::sync::MutexGuard<'static, ()> {
        DEPOT_TESTS
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn address<T>(cell: &Recycled<T>) -> usize {
        cell.0.as_ptr() as usize
    }

    #[test]
    fn cells_freed_on_another_thread_come_back_through_the_depot() {
        let _serial = depot_tests();
        let class = class_of(Layout::new::<Small>()).expect("a kept class");
        let depot_before = imp::depot_len(class);
        let cells: Vec<Recycled<Small>> = (0..2 * BATCH)
            .map(|_| Recycled::new(Small([0; 2])))
            .collect();
        let freed: HashSet<usize> = cells.iter().map(address).collect();
        // The other thread keeps them, then passes them on as it exits.
        std::thread::spawn(move || drop(cells))
            .join()
            .expect("the thread only drops");
        assert_eq!(imp::depot_len(class), depot_before + 2);
        // This thread takes one batch and hands out its cells.
        let again: Vec<Recycled<Small>> =
            (0..BATCH).map(|_| Recycled::new(Small([1; 2]))).collect();
        assert_eq!(imp::depot_len(class), depot_before + 1);
        assert_eq!(imp::spare_len(class), 0);
        assert!(again.iter().all(|cell| freed.contains(&address(cell))));
        assert!(again.iter().all(|cell| (**cell).0 == [1; 2]));
    }

    #[test]
    fn release_spare_gives_this_threads_cells_back() {
        let _serial = depot_tests();
        let class = class_of(Layout::new::<[u64; 13]>()).expect("a kept class");
        drop(
            (0..10)
                .map(|_| Recycled::new([0u64; 13]))
                .collect::<Vec<_>>(),
        );
        assert!(imp::spare_len(class) >= 10);
        release_spare();
        assert_eq!(imp::spare_len(class), 0);
    }

    struct Counted(Rc<Cell<usize>>);

    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.set(self.0.get() + 1);
        }
    }

    #[test]
    fn a_value_is_dropped_once_or_given_back_whole() {
        let drops = Rc::new(Cell::new(0));
        drop(Recycled::new(Counted(drops.clone())));
        assert_eq!(drops.get(), 1);
        let value = Recycled::new(Counted(drops.clone())).into_inner();
        assert_eq!(drops.get(), 1);
        drop(value);
        assert_eq!(drops.get(), 2);
    }

    #[repr(align(64))]
    struct Aligned(u8);

    #[test]
    fn over_aligned_and_large_values_bypass_the_classes() {
        assert_eq!(class_of(Layout::new::<Aligned>()), None);
        assert_eq!(class_of(Layout::new::<[u8; 4096]>()), None);
        let aligned = Recycled::new(Aligned(7));
        assert_eq!(address(&aligned) % 64, 0);
        assert_eq!((*aligned).0, 7);
        let large = Recycled::new([3u8; 4096]);
        assert_eq!(large[4095], 3);
    }
}
