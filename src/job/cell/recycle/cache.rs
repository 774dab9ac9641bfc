//! The spare cells themselves: each thread's, and the shared depot's.

use super::{BATCH, CLASSES, DEFAULT_DEPOT_LIMIT, LOCAL_MAX, class_layout};
use std::cell::RefCell;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
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

/// The bytes of the cells in the depot, all classes, with the depot's
/// record of each.
// ORDERING: Relaxed: a budget, changed under a class's lock by the
// bytes of the batch that class gains or loses; a stale read lets one
// batch in or out too many, never a cell lost or freed twice.
static DEPOT_BYTES: AtomicUsize = AtomicUsize::new(0);
/// The most bytes the depot keeps.
static DEPOT_LIMIT: AtomicUsize = AtomicUsize::new(DEFAULT_DEPOT_LIMIT);

/// The bytes a batch holds: its cells and the depot's record of each (a
/// pointer, which for the smallest cells is half as much again).
fn batch_bytes(class: usize, cells: usize) -> usize {
    cells * (class_layout(class).size() + size_of::<Spare>())
}

/// Stores a batch in a class's depot (its lock held) if the budget has
/// room; gives it back otherwise.
fn store(depot: &mut Vec<Vec<Spare>>, class: usize, batch: Vec<Spare>) -> Result<(), Vec<Spare>> {
    let bytes = batch_bytes(class, batch.len());
    let held = DEPOT_BYTES.load(Ordering::Relaxed);
    if held + bytes > DEPOT_LIMIT.load(Ordering::Relaxed) {
        return Err(batch);
    }
    DEPOT_BYTES.fetch_add(bytes, Ordering::Relaxed);
    depot.push(batch);
    Ok(())
}

/// Takes a batch from a class's depot (its lock held).
fn unstore(depot: &mut Vec<Vec<Spare>>, class: usize) -> Option<Vec<Spare>> {
    let batch = depot.pop()?;
    DEPOT_BYTES.fetch_sub(batch_bytes(class, batch.len()), Ordering::Relaxed);
    Some(batch)
}

/// Sets the depot's limit, freeing what is over it now.
pub(super) fn set_limit(bytes: usize) -> usize {
    let previous = DEPOT_LIMIT.swap(bytes, Ordering::Relaxed);
    for class in (0..CLASSES).rev() {
        while DEPOT_BYTES.load(Ordering::Relaxed) > bytes {
            let Some(batch) = unstore(&mut depot(class), class) else {
                break;
            };
            free_all(class, batch);
        }
    }
    previous
}

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
    let stored = store(&mut depot(class), class, batch);
    if let Err(batch) = stored {
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
                let mut depot = try_depot(class)?;
                *spare = unstore(&mut depot, class)?;
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
                    Some(mut depot) => {
                        let batch = spare.split_off(spare.len() - BATCH);
                        if let Err(batch) = store(&mut depot, class, batch) {
                            // The depot is full: this thread keeps its
                            // batch back, and the cell is freed.
                            spare.extend(batch);
                            return false;
                        }
                    }
                    None if spare.len() < LOCAL_MAX => {}
                    None => return false,
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

/// The bytes the depot holds.
#[cfg(test)]
pub(super) fn held_bytes() -> usize {
    DEPOT_BYTES.load(Ordering::Relaxed)
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
        let mut depot = depot(class);
        let batches: Vec<_> = std::iter::from_fn(|| unstore(&mut depot, class)).collect();
        // The list's own memory goes back too, as everything else here.
        *depot = Vec::new();
        drop(depot);
        for batch in batches {
            free_all(class, batch);
        }
    }
}
