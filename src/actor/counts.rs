//! The count of letters performed, kept per instance: one count per
//! instance index, each on its own cache line and written only by the
//! instance holding that index, summed when read. Instances come and go
//! (`Stage::resize`), so the counts grow by blocks, never move, and an
//! index freed by an instance that exited is taken again by a later one,
//! which adds to the count its predecessor left.

use crate::sync::owned::OwnedCount;
use crossbeam_utils::CachePadded;
use std::sync::OnceLock;

/// Blocks of counts: block `b` holds the indices `2^b - 1 .. 2^(b+1) - 1`,
/// so 32 blocks cover every index a stage can use.
const BLOCKS: usize = 32;

type Block = Box<[CachePadded<OwnedCount>]>;

/// One count per instance index ([`OwnedCount`]): a count that moves with
/// every letter costs its instance no read-modify-write, and N instances
/// do not pass one line between them. A reader after the stage ended is
/// ordered after each instance's last add by the `life` lock its exit
/// took; a reader before gets a figure of the moment. An instance taking
/// a freed index is ordered after its predecessor's last add the same
/// way (the index is freed and taken under that lock).
pub(crate) struct PerInstance {
    blocks: [OnceLock<Block>; BLOCKS],
}

/// The block holding `index`, and the place in it.
fn place(index: usize) -> (usize, usize) {
    let n = index + 1;
    let block = (usize::BITS - 1 - n.leading_zeros()) as usize;
    (block, n - (1 << block))
}

impl PerInstance {
    /// Counts for the indices `0..instances`.
    pub(crate) fn new(instances: usize) -> PerInstance {
        let counts = PerInstance {
            blocks: std::array::from_fn(|_| OnceLock::new()),
        };
        if let Some(last) = instances.checked_sub(1) {
            counts.reserve(last);
        }
        counts
    }

    /// Makes sure every index up to `index` has its count. Called before
    /// the instance holding `index` starts.
    pub(crate) fn reserve(&self, index: usize) {
        let (last, _) = place(index);
        for (b, block) in self.blocks.iter().enumerate().take(last + 1) {
            block.get_or_init(|| (0..1usize << b).map(|_| CachePadded::default()).collect());
        }
    }

    /// Adds one to instance `index`'s count. Only the instance holding
    /// that index calls this, after [`reserve`](PerInstance::reserve).
    #[inline]
    pub(crate) fn add_one(&self, index: usize) {
        let (block, at) = place(index);
        if let Some(counts) = self.blocks[block].get() {
            counts[at].add_one();
        }
    }

    pub(crate) fn sum(&self) -> u64 {
        self.blocks
            .iter()
            .filter_map(OnceLock::get)
            .flat_map(|b| b.iter())
            .map(|c| c.get())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::{PerInstance, place};

    #[test]
    fn indices_fill_blocks_in_order() {
        assert_eq!(place(0), (0, 0));
        assert_eq!(place(1), (1, 0));
        assert_eq!(place(2), (1, 1));
        assert_eq!(place(3), (2, 0));
        assert_eq!(place(6), (2, 3));
        assert_eq!(place(7), (3, 0));
    }

    #[test]
    fn counts_grow_and_sum() {
        let counts = PerInstance::new(3);
        counts.add_one(0);
        counts.add_one(2);
        counts.reserve(40);
        counts.add_one(40);
        counts.add_one(40);
        assert_eq!(counts.sum(), 4);
    }
}
