//! The jobs of a batch, made as the batch asks for them, from an iterator
//! that may stop early, pause (not fused), lie about its length, or panic
//! part-way.

use crate::common::{Guard, PANIC_MESSAGE, Record};
use arbitrary::Arbitrary;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

#[derive(Arbitrary, Debug, Clone, Copy)]
pub enum Shape {
    /// Yields every job.
    Whole,
    /// Returns `None` after `at` jobs, though its hint promised more.
    StopsAt(u8),
    /// Returns `None` once after `at` jobs, then goes on (not fused).
    PausesAt(u8),
    /// Panics when asked for job `at`.
    PanicsAt(u8),
}

pub struct Made {
    pub record: Arc<Record>,
    pub panics: bool,
}

pub struct Jobs {
    pub len: usize,
    pub shape: Shape,
    pub panics_mask: u16,
    pub next: usize,
    pub paused: bool,
    /// Every job made so far, in order.
    pub made: Rc<RefCell<Vec<Made>>>,
}

pub type Job = Box<dyn FnOnce() + Send>;

impl Iterator for Jobs {
    type Item = Job;

    fn next(&mut self) -> Option<Job> {
        let i = self.next;
        match self.shape {
            Shape::StopsAt(at) if i >= usize::from(at) => return None,
            Shape::PausesAt(at) if i == usize::from(at) && !self.paused => {
                self.paused = true;
                return None;
            }
            Shape::PanicsAt(at) if i == usize::from(at) => {
                panic!("{PANIC_MESSAGE} in a batch's iterator");
            }
            _ => {}
        }
        if i >= self.len {
            return None;
        }
        self.next += 1;
        let panics = self.panics_mask >> (i % 16) & 1 == 1;
        let (guard, record) = Guard::new();
        self.made.borrow_mut().push(Made { record, panics });
        Some(Box::new(move || {
            guard.called();
            if panics {
                panic!("{PANIC_MESSAGE} in a batch");
            }
        }))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.len.saturating_sub(self.next);
        (left, Some(left))
    }
}
