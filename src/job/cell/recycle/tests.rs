use super::*;
use std::cell::Cell;
use std::collections::HashSet;
use std::rc::Rc;

/// 8 bytes: smaller than any job cell (see the next test), so the shared
/// depot holds only this test's cells of its class, whatever the other
/// tests run at the same time.
struct Small([u64; 1]);

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
        .map(|_| Recycled::new(Small([0; 1])))
        .collect();
    let freed: HashSet<usize> = cells.iter().map(address).collect();
    // The other thread keeps them, then passes them on as it exits.
    std::thread::spawn(move || drop(cells))
        .join()
        .expect("the thread only drops");
    assert_eq!(imp::depot_len(class), depot_before + 2);
    // This thread takes one batch and hands out its cells.
    let again: Vec<Recycled<Small>> = (0..BATCH).map(|_| Recycled::new(Small([1; 1]))).collect();
    assert_eq!(imp::depot_len(class), depot_before + 1);
    assert_eq!(imp::spare_len(class), 0);
    assert!(again.iter().all(|cell| freed.contains(&address(cell))));
    assert!(again.iter().all(|cell| (**cell).0 == [1; 1]));
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

#[test]
fn the_depot_keeps_no_more_than_its_limit() {
    let _serial = depot_tests();
    let class = class_of(Layout::new::<Small>()).expect("a kept class");
    release_spare();
    // Room for two batches of the test class, whatever the others hold
    // (emptied above; other tests' jobs may add some meanwhile).
    let room = imp::held_bytes() + 2 * BATCH * class_layout(class).size();
    let before = set_depot_limit(room);
    let cells: Vec<Recycled<Small>> = (0..10 * BATCH)
        .map(|_| Recycled::new(Small([0; 1])))
        .collect();
    std::thread::spawn(move || drop(cells))
        .join()
        .expect("the thread only drops");
    let kept = imp::depot_len(class);
    // Lowering the limit frees what is over it at once.
    set_depot_limit(0);
    let after_zero = imp::depot_len(class);
    set_depot_limit(before);
    assert!(kept <= 2, "{kept} batches kept past a limit of 2");
    assert_eq!(after_zero, 0);
}

/// 120 bytes: of a class no other test here uses (`Small`'s is the
/// depot's tests', 104 bytes the spare-release test's).
struct Counted(Rc<Cell<usize>>, [u64; 14]);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.set(self.0.get() + 1);
    }
}

#[test]
fn a_value_is_dropped_once_or_given_back_whole() {
    let drops = Rc::new(Cell::new(0));
    drop(Recycled::new(Counted(drops.clone(), [0; 14])));
    assert_eq!(drops.get(), 1);
    let value = Recycled::new(Counted(drops.clone(), [7; 14])).into_inner();
    assert_eq!(drops.get(), 1);
    assert_eq!(value.1, [7; 14]);
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
