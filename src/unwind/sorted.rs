// SPDX-License-Identifier: GPL-2.0

//! The bounded search of a sorted array of fixed-size entries that a
//! lookup by function reads from a file piece by piece: `.eh_frame_hdr`'s
//! table ([`super::ehframe`]) and SFrame's FDE array ([`super::sframe`]).
//! Pure `core`.
//!
//! While the range is wider than a block, a probe reads one entry: at most
//! [`MAX_PROBES`], as 2^32 entries halve to one block in 32.  Then the
//! block is read at once, and its entries are decoded in order.  So a
//! search reads at most `MAX_PROBES + block` entries, whatever the file.
//! Every search of an array starts with the same probes: the caller's
//! `memo` keeps those of the first levels.

/// The most single-entry probes of one search.
pub const MAX_PROBES: u64 = 32;

/// The longest entry a [`Sorted`] array may have.
pub const MAX_ENTRY_LEN: usize = 32;

/// A sorted array of entries, each a key (the first address it covers)
/// and a value, read on demand.
pub trait Sorted {
    /// Why a read or a decode failed.
    type Error;
    /// The number of entries.
    fn count(&self) -> u32;
    /// Each entry's length in bytes, at most [`MAX_ENTRY_LEN`].
    fn entry_len(&self) -> usize;
    /// The entries read at once when the range is that narrow.
    fn block(&self) -> u32;
    /// Reads entries `first..` into `buf`, a whole number of entries.
    fn read(&mut self, first: u32, buf: &mut [u8]) -> Result<(), Self::Error>;
    /// Entry `i`'s key and value, from its bytes.
    fn decode(&self, i: u32, entry: &[u8]) -> Result<(u64, u64), Self::Error>;
    /// The error for a scratch buffer or entry length the search cannot use.
    fn unusable(&self) -> Self::Error;
}

/// What a search found: the last entry whose key is at or below the
/// target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hit {
    /// Its key.
    pub key: u64,
    /// Its value.
    pub value: u64,
    /// The next entry's key, if the search read it.
    pub next: Option<u64>,
}

/// The last entry of `t` whose key is at or below `target`, `None` if
/// there is none.  `scratch` must hold a block of entries; `steps` counts
/// the entries read (at most [`MAX_PROBES`] plus a block).  `memo` (of any
/// length, kept by the caller for this array and empty at first)
/// remembers the first levels' probes, slot `k` the `k`-th node of the
/// search tree (1 its root, `2k` and `2k + 1` its children): the same
/// array gives every node the same entry.
pub fn find<T: Sorted>(
    t: &mut T,
    target: u64,
    scratch: &mut [u8],
    steps: &mut u64,
    memo: &mut [Option<(u64, u64)>],
) -> Result<Option<Hit>, T::Error> {
    let len = t.entry_len();
    if len == 0 || len > MAX_ENTRY_LEN {
        return Err(t.unusable());
    }
    let block = t.block().max(1);
    // The answer is entry `hi - 1`, with `hi` the first entry whose key
    // is above `target`: it lies in `[lo, hi]`.
    let (mut lo, mut hi) = (0u32, t.count());
    // Entry `lo - 1` once a probe read it; entry `hi`'s key.
    let mut below = None;
    let mut above = None;
    let mut probes = 0;
    let mut node = 1usize;
    while hi - lo > block && probes < MAX_PROBES {
        probes += 1;
        *steps = steps.saturating_add(1);
        let mid = lo + (hi - lo) / 2;
        let (key, value) = match memo.get_mut(node) {
            Some(Some(e)) => *e,
            slot => {
                let mut b = [0u8; MAX_ENTRY_LEN];
                let b = &mut b[..len];
                t.read(mid, b)?;
                let e = t.decode(mid, b)?;
                if let Some(slot) = slot {
                    *slot = Some(e);
                }
                e
            }
        };
        node = node
            .saturating_mul(2)
            .saturating_add((key <= target) as usize);
        if key <= target {
            lo = mid + 1;
            below = Some((key, value));
        } else {
            hi = mid;
            above = Some(key);
        }
    }
    // Halving from at most 2^32 entries narrows to a block within
    // MAX_PROBES; anything else is a bug, not a long search.
    let n = (hi - lo).min(block);
    let Some(bytes) = scratch.get_mut(..n as usize * len) else {
        return Err(t.unusable());
    };
    if n > 0 {
        t.read(lo, bytes)?;
    }
    *steps = steps.saturating_add(n as u64);
    // The first entry of the block above `target`: the one before it is
    // the answer (none before the first).
    let mut found = below;
    let mut next = if n == hi - lo { above } else { None };
    for (i, e) in (lo..).zip(bytes.chunks_exact(len)) {
        let (key, value) = t.decode(i, e)?;
        if key > target {
            next = Some(key);
            break;
        }
        found = Some((key, value));
    }
    Ok(found.map(|(key, value)| Hit { key, value, next }))
}
