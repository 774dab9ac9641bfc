use super::*;
use crate::sync::thread;
use loom::model::Builder;
use std::sync::Arc;

/// Tickets over three blocks, the third holding one: it is linked when
/// the first may be all read, and the first recycled for it then.
const N: usize = 2 * BLOCK + 1;

/// Runs `f` under loom with `bound` preemptions, unless
/// `LOOM_MAX_PREEMPTIONS` says otherwise.
fn check(bound: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut builder = Builder::new();
    if builder.preemption_bound.is_none() {
        builder.preemption_bound = Some(bound);
    }
    // Takes wait for pushes, and producers for links, by yielding.
    builder.max_branches = 100_000;
    builder.check(f);
}

/// One producer and one worker over five blocks, so blocks are recycled
/// twice: the worker may walk from `taking` through a block the producer
/// recycles under it, or find `taking` at a block recycled since.
#[test]
fn tickets_one_producer_one_worker() {
    const N: usize = 4 * BLOCK + 1;
    check(2, || {
        let q = Arc::new(Tickets::new());
        let producer = {
            let q = Arc::clone(&q);
            thread::spawn(move || push_in_order(&q, N))
        };
        take_in_order(&q, N);
        producer.join().unwrap();
    });
}

/// Two producers taking tickets from one count, then the values read
/// back: a producer may link a block, wait for the other's link of the
/// one before, or find `tail` past its block and walk back.
#[test]
fn tickets_two_producers() {
    check(3, || {
        let q = Arc::new(Tickets::new());
        let opened = Arc::new(AtomicUsize::new(0));
        let producer = {
            let (q, opened) = (Arc::clone(&q), Arc::clone(&opened));
            thread::spawn(move || produce(&q, &opened))
        };
        produce(&q, &opened);
        producer.join().unwrap();
        take_in_order(&q, N);
    });
}

/// Pushes tickets `0..n`, in order.
fn push_in_order(q: &Tickets<usize>, n: usize) {
    for t in 0..n {
        // SAFETY: each ticket once, in order, by this thread alone.
        unsafe { q.push(t, t) };
    }
}

/// Takes claims `0..n` in order, each finding its own ticket's value.
fn take_in_order(q: &Tickets<usize>, n: usize) {
    for c in 0..n {
        // SAFETY: each claim once, by this thread alone; its ticket is
        // handed out (pushed, or pushed later by a producer of the model:
        // the take waits for it as for a producer between ticket and push).
        assert_eq!(unsafe { q.take(c) }, c);
    }
}

/// Pushes tickets from `opened` until `N` are handed out.
fn produce(q: &Tickets<usize>, opened: &AtomicUsize) {
    loop {
        let t = opened.fetch_add(1, Ordering::SeqCst);
        if t >= N {
            return;
        }
        // SAFETY: the ticket is this thread's alone, pushed before it takes
        // another.
        unsafe { q.push(t, t) };
    }
}

/// Two producers taking tickets from one count (so either may link a
/// block, or wait for the other's link, or find `tail` past its block and
/// walk back), and one worker taking the claims in order while blocks are
/// linked and recycled.
#[test]
fn tickets_two_producers_one_worker() {
    check(1, || {
        let q = Arc::new(Tickets::new());
        let opened = Arc::new(AtomicUsize::new(0));
        let producers: Vec<_> = (0..2)
            .map(|_| {
                let (q, opened) = (Arc::clone(&q), Arc::clone(&opened));
                thread::spawn(move || produce(&q, &opened))
            })
            .collect();
        take_in_order(&q, N);
        for p in producers {
            p.join().unwrap();
        }
    });
}

/// Two workers taking claims from one count while one producer pushes:
/// blocks are read out of order, one worker may walk through a block the
/// producer recycles, and `taking` may point behind or past a worker's
/// block.
#[test]
fn tickets_two_workers_while_blocks_recycle() {
    check(1, || {
        let q = Arc::new(Tickets::new());
        let claimed = Arc::new(AtomicUsize::new(0));
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let (q, claimed) = (Arc::clone(&q), Arc::clone(&claimed));
                thread::spawn(move || {
                    loop {
                        let c = claimed.fetch_add(1, Ordering::SeqCst);
                        if c >= N {
                            return;
                        }
                        // SAFETY: the claim is this thread's alone; its
                        // ticket is pushed below.
                        assert_eq!(unsafe { q.take(c) }, c);
                    }
                })
            })
            .collect();
        push_in_order(&q, N);
        for w in workers {
            w.join().unwrap();
        }
    });
}
