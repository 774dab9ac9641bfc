//! The pickers' cycles and schedules: exact shares, order, and the
//! cursor's wrap.

use super::*;
use proptest::prelude::*;
use std::cell::RefCell;

fn letters(cycle: &[usize]) -> String {
    cycle.iter().map(|&l| (b'A' + l as u8) as char).collect()
}

#[test]
fn the_cursor_goes_to_the_lane_the_cycle_visits_most() {
    let visited = |kind, weights: &[u32]| Schedule::new(kind, weights).most_visited();
    assert_eq!(visited(Picker::Smooth, &[10, 1]), 0);
    assert_eq!(visited(Picker::Smooth, &[1, 10, 5]), 1);
    assert_eq!(
        visited(Picker::Classic, &[2, 3, 3]),
        1,
        "the first of equals"
    );
    assert_eq!(visited(Picker::Strict, &[1, 10]), 0, "no cycle");
    assert_eq!(visited(Picker::Smooth, &[7]), 0, "one lane");
}

#[test]
fn ten_to_one_orders() {
    // Lane 0 has weight 10, lane 1 weight 1.
    let order = |picker: Picker| -> String {
        picker
            .cycle(&[10, 1])
            .into_iter()
            .map(|lane| if lane == 0 { 'H' } else { 'L' })
            .collect()
    };
    assert_eq!(order(Picker::Smooth), "HHHHHLHHHHH");
    assert_eq!(order(Picker::Classic), "HHHHHHHHHHL");
    assert_eq!(Picker::Smooth.cycle(&[2, 1]), vec![0, 1, 0]);
    assert_eq!(Picker::Classic.cycle(&[2, 1]), vec![0, 0, 1]);
}

#[test]
fn smooth_10_1_spreads_the_low_turn() {
    assert_eq!(letters(&Picker::Smooth.cycle(&[10, 1])), "AAAAABAAAAA");
}

#[test]
fn smooth_10_5_1_interleaves() {
    assert_eq!(
        letters(&Picker::Smooth.cycle(&[10, 5, 1])),
        "ABAABACABAABAABA"
    );
}

/// The largest lag of any lane behind or ahead of its exact share over
/// the prefixes of one cycle.
fn largest_lag(cycle: &[usize], weights: &[u32]) -> f64 {
    let total: u32 = weights.iter().sum();
    let mut served = vec![0u32; weights.len()];
    let mut worst = 0f64;
    for (k, &lane) in cycle.iter().enumerate() {
        served[lane] += 1;
        for (i, &w) in weights.iter().enumerate() {
            let ideal = (k + 1) as f64 * f64::from(w) / f64::from(total);
            worst = worst.max((f64::from(served[i]) - ideal).abs());
        }
    }
    worst
}

/// The documented bound is two jobs, not one: with many lanes the
/// smooth order can lag just past one (this case was found by the
/// property test below).
#[test]
fn smooth_lag_can_pass_one_job_but_stays_under_two() {
    let weights = [61, 2, 61, 5, 57, 20, 12];
    let lag = largest_lag(&Picker::Smooth.cycle(&weights), &weights);
    assert!(lag > 1.0 && lag < 2.0, "lag {lag}");
    assert!(largest_lag(&Picker::Smooth.cycle(&[10, 1]), &[10, 1]) < 1.0);
}

#[test]
fn classic_10_5_1_serves_in_runs() {
    assert_eq!(
        letters(&Picker::Classic.cycle(&[10, 5, 1])),
        "AAAAAAAAAABBBBBC"
    );
}

#[test]
fn unknown_picker_is_an_error_naming_the_choices() {
    let err = "round-robin".parse::<Picker>().unwrap_err();
    assert!(err.to_string().contains("smooth, classic, strict"));
}

/// Runs `n` picks on a single thread over lanes holding `backlog[i]`
/// jobs; `arrivals(step)` may add jobs before each pick.
fn simulate(
    kind: Picker,
    weights: &[u32],
    backlog: Vec<usize>,
    n: usize,
    mut arrivals: impl FnMut(usize, &mut [usize]),
) -> Vec<(usize, Vec<usize>)> {
    let schedule = Schedule::new(kind, weights);
    let cursor = AtomicUsize::new(0);
    let counts = RefCell::new(backlog);
    let mut out = Vec::new();
    for step in 0..n {
        arrivals(step, &mut counts.borrow_mut());
        let before = counts.borrow().clone();
        let lane = schedule.pick(
            &cursor,
            weights.len(),
            |l| counts.borrow()[l] > 0,
            |l| {
                let mut c = counts.borrow_mut();
                (c[l] > 0).then(|| c[l] -= 1)
            },
        );
        match lane {
            Some((l, ())) => out.push((l, before)),
            None => assert!(before.iter().all(|&c| c == 0), "idle with work queued"),
        }
    }
    out
}

fn weights_strategy() -> impl Strategy<Value = Vec<u32>> {
    prop::collection::vec(1u32..=100, 1..=8)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Every lane backlogged: every window of sum(weights) dispatches
    /// gives each lane exactly its weight, and prefixes stay within the
    /// documented lag (smooth: under 2 jobs, classic: under the weight).
    #[test]
    fn backlogged_lanes_get_exact_shares(weights in weights_strategy(), classic in any::<bool>()) {
        let kind = if classic { Picker::Classic } else { Picker::Smooth };
        let total: usize = weights.iter().map(|&w| w as usize).sum();
        let n = total * 3;
        let picks = simulate(kind, &weights, vec![n; weights.len()], n, |_, _| {});
        let lanes: Vec<usize> = picks.iter().map(|(l, _)| *l).collect();
        prop_assert_eq!(lanes.len(), n);
        for window in lanes.windows(total) {
            for (i, &w) in weights.iter().enumerate() {
                prop_assert_eq!(window.iter().filter(|&&l| l == i).count(), w as usize);
            }
        }
        let mut served = vec![0f64; weights.len()];
        for (k, &l) in lanes.iter().enumerate() {
            served[l] += 1.0;
            for (i, &w) in weights.iter().enumerate() {
                let ideal = (k + 1) as f64 * f64::from(w) / total as f64;
                let bound = if classic { f64::from(w) } else { 2.0 };
                prop_assert!((served[i] - ideal).abs() < bound + 1e-9,
                    "lane {} served {} ideal {:.2} after {}", i, served[i], ideal, k + 1);
            }
        }
    }

    /// Random arrivals and emptiness: empty lanes never get a turn, the
    /// pool never idles while work is queued, and a lane with work is
    /// served within sum(weights) dispatches.
    #[test]
    fn work_conserving_and_starvation_free(
        weights in weights_strategy(),
        picker in 0u8..3,
        seed in any::<u64>(),
    ) {
        let kind = [Picker::Smooth, Picker::Classic, Picker::Strict][picker as usize];
        let total: usize = weights.iter().map(|&w| w as usize).sum();
        let lanes = weights.len();
        let mut rng = seed;
        let mut next = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let picks = simulate(kind, &weights, vec![0; lanes], total * 4, |_, counts| {
            let lane = (next() % lanes as u64) as usize;
            counts[lane] += (next() % 3) as usize;
        });
        let mut waiting_since: Vec<Option<usize>> = vec![None; lanes];
        for (k, (lane, before)) in picks.iter().enumerate() {
            prop_assert!(before[*lane] > 0, "picked empty lane {}", lane);
            for i in 0..lanes {
                if i == *lane || before[i] == 0 {
                    waiting_since[i] = None;
                } else if waiting_since[i].is_none() {
                    waiting_since[i] = Some(k);
                }
                if kind != Picker::Strict
                    && let Some(since) = waiting_since[i]
                {
                    prop_assert!(k - since < total,
                        "lane {} waited {} dispatches (cycle {})", i, k - since, total);
                }
            }
        }
    }
}

#[test]
fn strict_serves_highest_first() {
    let picks = simulate(Picker::Strict, &[1, 1, 1], vec![2, 2, 2], 6, |_, _| {});
    let lanes: Vec<usize> = picks.iter().map(|(l, _)| *l).collect();
    assert_eq!(lanes, vec![0, 0, 1, 1, 2, 2]);
}

#[test]
fn empty_lane_turns_are_not_banked() {
    // Lane A idle for a while, then both backlogged: the very next
    // cycle must already be exact, with no burst of saved-up A turns.
    let picks = simulate(Picker::Smooth, &[1, 1], vec![0, 100], 20, |step, c| {
        if step == 10 {
            c[0] = 100;
        }
    });
    let tail: Vec<usize> = picks[10..].iter().map(|(l, _)| *l).collect();
    for pair in tail.chunks(2) {
        assert_eq!(pair.iter().filter(|&&l| l == 0).count(), 1, "{tail:?}");
    }
}
