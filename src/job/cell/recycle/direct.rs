//! Without the cache (under loom, or built with
//! `--cfg priority_executor_no_recycle`): every cell comes from and goes
//! back to the allocator.

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

pub(super) fn set_limit(_bytes: usize) -> usize {
    super::DEFAULT_DEPOT_LIMIT
}
