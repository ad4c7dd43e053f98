// SPDX-License-Identifier: GPL-2.0

//! [`Pace`]: how a whole-file compiler lets its caller pause it or stop
//! it.  A file decides how long its compilation runs (within each
//! compiler's stated bound, which can be seconds for a crafted file), so
//! the compiler asks its caller's `keep_going` hook at least every
//! [`YIELD_EVERY`] units of its work (plus the largest step it cannot
//! split, which each compiler states): the kernel's hook reschedules and
//! says stop once the task is being killed.  Pure `core`: the hook is a
//! closure.

/// The work units (each compiler's own count) between two questions.
pub const YIELD_EVERY: u64 = 1 << 12;

/// The caller's hook said stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stopped;

/// Asks the caller, every [`YIELD_EVERY`] units of work, whether to go
/// on.
pub struct Pace<'a> {
    keep_going: &'a mut dyn FnMut() -> bool,
    /// The work count at which to ask next.
    next: u64,
}

impl<'a> Pace<'a> {
    /// A pace that asks `keep_going`: true to go on.
    pub fn new(keep_going: &'a mut dyn FnMut() -> bool) -> Self {
        Self {
            keep_going,
            next: YIELD_EVERY,
        }
    }

    /// `work` units are spent so far (a count that never decreases):
    /// asks the caller if [`YIELD_EVERY`] more were spent since it last
    /// did.
    #[inline]
    pub fn check(&mut self, work: u64) -> Result<(), Stopped> {
        if work < self.next {
            return Ok(());
        }
        self.next = work.saturating_add(YIELD_EVERY);
        if (self.keep_going)() {
            Ok(())
        } else {
            Err(Stopped)
        }
    }
}
