use super::*;
use std::sync::Arc;
use std::sync::atomic::AtomicUsize as Counter;

#[test]
fn values_come_out_by_ticket_across_blocks() {
    let q = Tickets::new();
    let n = 3 * BLOCK + 5;
    for t in 0..n {
        // SAFETY: each ticket once, in order.
        unsafe { q.push(t, t * 10) };
    }
    for c in 0..n {
        // SAFETY: each claim once, every ticket pushed.
        assert_eq!(unsafe { q.take(c) }, c * 10);
    }
}

#[test]
fn a_short_backlog_recycles_its_blocks() {
    let q = Tickets::new();
    let lag = BLOCK / 2;
    let n = if cfg!(miri) { 8 * BLOCK } else { 100 * BLOCK };
    for t in 0..n {
        // SAFETY: each ticket once, in order.
        unsafe { q.push(t, t) };
        if t >= lag {
            // SAFETY: each claim once, its ticket pushed.
            assert_eq!(unsafe { q.take(t - lag) }, t - lag);
        }
    }
    // The block being filled and the one before it (the older one is
    // recycled as the next): a new block per link would be one per BLOCK
    // tickets.
    assert_eq!(q.blocks(), 2);
}

#[test]
fn a_drop_frees_what_was_never_read_once() {
    let dropped = Arc::new(Counter::new(0));
    struct Counted(Arc<Counter>);
    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
    let q = Tickets::new();
    for t in 0..2 * BLOCK + 3 {
        // SAFETY: each ticket once, in order.
        unsafe { q.push(t, Counted(Arc::clone(&dropped))) };
    }
    for c in 0..BLOCK + 1 {
        // SAFETY: each claim once, every ticket pushed.
        drop(unsafe { q.take(c) });
    }
    assert_eq!(dropped.load(Ordering::Relaxed), BLOCK + 1);
    drop(q);
    assert_eq!(dropped.load(Ordering::Relaxed), 2 * BLOCK + 3);
}

/// Two producers and two workers through many blocks, recycled as they
/// go; every value comes out once, to the claim of its ticket. Under
/// Miri, fewer.
#[test]
fn two_producers_two_workers_take_every_ticket_once() {
    let per = if cfg!(miri) { 2 * BLOCK } else { 500 * BLOCK };
    let q = Arc::new(Tickets::new());
    let opened = Arc::new(Counter::new(0));
    let claimed = Arc::new(Counter::new(0));
    let total = 2 * per;
    let producers: Vec<_> = (0..2)
        .map(|_| {
            let (q, opened) = (Arc::clone(&q), Arc::clone(&opened));
            std::thread::spawn(move || {
                for _ in 0..per {
                    let t = opened.fetch_add(1, Ordering::SeqCst);
                    // SAFETY: the ticket is this thread's alone, pushed
                    // before it takes another.
                    unsafe { q.push(t, t) };
                }
            })
        })
        .collect();
    let workers: Vec<_> = (0..2)
        .map(|_| {
            let (q, opened, claimed) = (Arc::clone(&q), Arc::clone(&opened), Arc::clone(&claimed));
            std::thread::spawn(move || {
                let mut got = Vec::new();
                loop {
                    let c = claimed.load(Ordering::SeqCst);
                    if c == total {
                        return got;
                    }
                    if c < opened.load(Ordering::SeqCst)
                        && claimed
                            .compare_exchange(c, c + 1, Ordering::SeqCst, Ordering::SeqCst)
                            .is_ok()
                    {
                        // SAFETY: the claim is this thread's alone, and
                        // below the tickets handed out.
                        let v = unsafe { q.take(c) };
                        assert_eq!(v, c);
                        got.push(v);
                    } else {
                        std::thread::yield_now();
                    }
                }
            })
        })
        .collect();
    for p in producers {
        p.join().unwrap();
    }
    let mut all: Vec<usize> = workers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    all.sort_unstable();
    assert_eq!(all, (0..total).collect::<Vec<_>>());
}
