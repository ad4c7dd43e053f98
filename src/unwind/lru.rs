// SPDX-License-Identifier: GPL-2.0

//! Orders over the slots of an array, each step O(1): a doubly linked
//! list threaded through one [`Link`] per slot, so that neither the
//! table cache nor a file's functions scan their slots to find the least
//! recently used one (or a free one).  Pure `core`: the host tests
//! compare it with a plain model on random operations.
//!
//! A slot is on at most one list at a time; which one is the caller's
//! record (a cache keeps its taken slots on one list and its free slots
//! on another).  Nothing here panics: a slot number past the links, or
//! a slot not on the list it is taken from, leaves the list as it was.

/// No slot: the end of a list.
const NIL: u32 = u32::MAX;

/// One slot's place in a list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    /// The slot used before this one (older), or `NIL`.
    prev: u32,
    /// The slot used after this one (newer), or `NIL`.
    next: u32,
    /// On a list: told apart from a list's only slot, whose ends are both
    /// `NIL` too.
    on: bool,
}

impl Link {
    /// A slot on no list.
    pub const OFF: Link = Link {
        prev: NIL,
        next: NIL,
        on: false,
    };
}

/// A list of slots, oldest first.
///
/// # Invariants
///
/// `oldest` and `newest` are both `NIL` or both slots on this list; the
/// slots between them are linked both ways, `len` of them, each with
/// `on` set.  Upheld as long as every call passes the same links array
/// (or a copy of it extended with [`Link::OFF`] slots).
#[derive(Clone, Debug)]
pub struct Lru {
    oldest: u32,
    newest: u32,
    len: usize,
}

impl Lru {
    /// An empty list.
    pub const fn new() -> Self {
        Self {
            oldest: NIL,
            newest: NIL,
            len: 0,
        }
    }

    /// How many slots are on it.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// The least recently used slot.
    pub fn oldest(&self) -> Option<usize> {
        (self.oldest != NIL).then_some(self.oldest as usize)
    }

    /// Whether slot `i` is on a list.
    #[cfg(test)]
    pub fn is_on(links: &[Link], i: usize) -> bool {
        links.get(i).is_some_and(|l| l.on)
    }

    /// Puts slot `i` at the newest end; returns false (and changes
    /// nothing) if it is already on a list or past the links.
    pub fn push(&mut self, links: &mut [Link], i: usize) -> bool {
        let Ok(n) = u32::try_from(i) else {
            return false;
        };
        match links.get_mut(i) {
            Some(l) if n != NIL && !l.on => {
                *l = Link {
                    prev: self.newest,
                    next: NIL,
                    on: true,
                }
            }
            _ => return false,
        }
        match links.get_mut(self.newest as usize) {
            Some(l) => l.next = n,
            None => self.oldest = n,
        }
        self.newest = n;
        self.len += 1;
        true
    }

    /// Takes slot `i` off this list; returns false (and changes nothing)
    /// if it is on none.  `i` must be on this list, not on another.
    pub fn remove(&mut self, links: &mut [Link], i: usize) -> bool {
        let Some(&Link { prev, next, on }) = links.get(i) else {
            return false;
        };
        if !on {
            return false;
        }
        match links.get_mut(prev as usize) {
            Some(p) => p.next = next,
            None => self.oldest = next,
        }
        match links.get_mut(next as usize) {
            Some(q) => q.prev = prev,
            None => self.newest = prev,
        }
        if let Some(l) = links.get_mut(i) {
            *l = Link::OFF;
        }
        self.len = self.len.saturating_sub(1);
        true
    }

    /// Makes slot `i`, on this list, the newest (a lookup found it).
    pub fn touch(&mut self, links: &mut [Link], i: usize) {
        if self.newest as usize != i && self.remove(links, i) {
            self.push(links, i);
        }
    }

    /// Takes the oldest slot off the list.
    pub fn pop_oldest(&mut self, links: &mut [Link]) -> Option<usize> {
        let i = self.oldest()?;
        self.remove(links, i);
        Some(i)
    }
}
