// SPDX-License-Identifier: GPL-2.0

//! Host tests of the bounded search of a sorted array read piece by piece
//! (`src/unwind/sorted.rs`, compiled in as is), which both lookups by
//! function use: on random arrays (keys repeated, blocks of every size,
//! targets before, between, on and after the keys) it gives the model's
//! answer, reads at most `MAX_PROBES` plus a block of entries, gives the
//! same answers with a memo kept across searches, and reports a failed
//! read or decode, or a scratch too small, as an error.

#[path = "../../src/unwind/sorted.rs"]
mod sorted;

#[path = "common/rng.rs"]
#[allow(dead_code)]
mod rng;

use rng::Rng;
use sorted::{find, Hit, Sorted, MAX_ENTRY_LEN, MAX_PROBES};

#[derive(Debug, PartialEq)]
enum Err {
    Read,
    Decode,
    Unusable,
}

/// Keys as little-endian u32 entries, each padded to `len` bytes; the
/// value of an entry is its index.
struct Array {
    keys: Vec<u32>,
    len: usize,
    block: u32,
    /// Entries read (counted here, against the search's own count).
    read: u64,
    /// A read of this entry fails; a decode of that one does.
    bad_read: Option<u32>,
    bad_decode: Option<u32>,
}

impl Sorted for Array {
    type Error = Err;

    fn count(&self) -> u32 {
        self.keys.len() as u32
    }

    fn entry_len(&self) -> usize {
        self.len
    }

    fn block(&self) -> u32 {
        self.block
    }

    fn read(&mut self, first: u32, buf: &mut [u8]) -> Result<(), Err> {
        let n = buf.len() / self.len;
        assert_eq!(n * self.len, buf.len(), "a whole number of entries");
        assert!(first as usize + n <= self.keys.len(), "read past the array");
        if let Some(b) = self.bad_read {
            if (first..first + n as u32).contains(&b) {
                return Err(Err::Read);
            }
        }
        self.read += n as u64;
        for (i, e) in buf.chunks_exact_mut(self.len).enumerate() {
            e.fill(0xee);
            e[..4].copy_from_slice(&self.keys[first as usize + i].to_le_bytes());
        }
        Ok(())
    }

    fn decode(&self, i: u32, entry: &[u8]) -> Result<(u64, u64), Err> {
        if self.bad_decode == Some(i) {
            return Err(Err::Decode);
        }
        assert_eq!(entry.len(), self.len);
        let key = u32::from_le_bytes([entry[0], entry[1], entry[2], entry[3]]);
        Ok((key as u64, i as u64))
    }

    fn unusable(&self) -> Err {
        Err::Unusable
    }
}

/// The model: the last entry whose key is at or below `t`.
fn model(keys: &[u32], t: u64) -> Option<(u64, usize)> {
    let n = keys.iter().take_while(|&&k| k as u64 <= t).count();
    n.checked_sub(1).map(|i| (keys[i] as u64, i))
}

fn array(rng: &mut Rng) -> Array {
    let count = match rng.below(4) {
        0 => rng.below(8),
        1 => rng.below(300),
        _ => rng.below(20_000),
    } as usize;
    let mut keys = Vec::with_capacity(count);
    let mut k = rng.below(100) as u32;
    for _ in 0..count {
        // Repeated keys now and then, as a header may have them.
        k += rng.below(40) as u32 * (rng.below(8) != 0) as u32;
        keys.push(k);
    }
    Array {
        keys,
        len: 4 + rng.below(MAX_ENTRY_LEN as u64 - 3) as usize,
        block: 1 + rng.below(200) as u32,
        read: 0,
        bad_read: None,
        bad_decode: None,
    }
}

fn target(rng: &mut Rng, keys: &[u32]) -> u64 {
    let last = keys.last().copied().unwrap_or(0) as u64;
    match rng.below(4) {
        0 if !keys.is_empty() => keys[rng.below(keys.len() as u64) as usize] as u64,
        1 => u64::MAX - rng.below(3),
        _ => rng.below(last + 200),
    }
}

#[test]
fn random_arrays_give_the_models_answer_within_the_bound() {
    let mut rng = Rng(0x5eed_0f_50_47ed);
    for _ in 0..400 {
        let mut a = array(&mut rng);
        let mut scratch = vec![0u8; a.block as usize * a.len];
        let mut memo = vec![None; 1 + rng.below(64) as usize];
        for _ in 0..200 {
            let t = target(&mut rng, &a.keys);
            let (mut steps, before) = (0u64, a.read);
            let hit = find(&mut a, t, &mut scratch, &mut steps, &mut memo).expect("no error");
            let want = model(&a.keys, t);
            assert_eq!(hit.map(|h| h.key), want.map(|w| w.0), "target {t}");
            if let (Some(h), Some((_, i))) = (hit, want) {
                // With repeated keys, any entry of the answer's key is
                // right; its value names it.
                assert_eq!(a.keys[h.value as usize] as u64, h.key);
                assert!(h.value as usize <= i);
                let after = a.keys.get(h.value as usize + 1).map(|&k| k as u64);
                if let Some(n) = h.next {
                    assert!(n > t, "next {n} is above the target {t}");
                    assert!(a.keys.contains(&(n as u32)));
                    assert!(after.is_some_and(|k| k <= n));
                }
            }
            if let (None, Some(n)) = (hit, a.keys.first()) {
                assert!(*n as u64 > t);
            }
            assert!(steps <= MAX_PROBES + a.block as u64, "{steps} steps");
            assert!(
                a.read - before <= steps,
                "read {} > steps {steps}",
                a.read - before
            );
        }
    }
}

#[test]
fn the_memo_changes_no_answer_and_saves_reads() {
    let mut rng = Rng(0x3e30);
    let mut a = array(&mut rng);
    a.keys = (0..100_000u32).map(|i| i * 16).collect();
    a.block = 64;
    let mut scratch = vec![0u8; 64 * a.len];
    // Nodes 1 to 31: the first 5 levels of the search tree.
    let mut memo = vec![None; 32];
    for round in 0..2 {
        for _ in 0..1000 {
            let t = rng.below(1_700_000);
            let (mut s1, mut s2) = (0, 0);
            let r0 = a.read;
            let plain = find(&mut a, t, &mut scratch, &mut s1, &mut []).expect("found");
            let r1 = a.read;
            let hit = find(&mut a, t, &mut scratch, &mut s2, &mut memo).expect("found");
            let r2 = a.read;
            assert_eq!(hit, plain);
            assert_eq!(s1, s2, "the same steps, read or kept");
            let want = model(&a.keys, t).map(|(k, i)| (k, i as u64));
            assert_eq!(hit.map(|h| (h.key, h.value)), want);
            // 100,000 entries narrow to a block of 64 in 11 probes; once
            // the memo is filled, the first 5 are never read again.
            assert_eq!(s1 - (r1 - r0), 0);
            if round == 1 {
                assert_eq!(r2 - r1 + 5, r1 - r0, "target {t}");
            }
        }
    }
}

#[test]
fn errors_are_reported_not_guessed() {
    let mut rng = Rng(0xe440);
    let mut a = array(&mut rng);
    a.keys = (0..5000u32).map(|i| i * 4).collect();
    a.block = 16;
    let mut scratch = vec![0u8; 16 * a.len];
    let mut steps = 0;
    // A failed read or decode anywhere on the search's path is an error.
    for bad in [0u32, 2500, 4999, 1249, 3] {
        let t = bad as u64 * 4;
        a.bad_read = Some(bad);
        assert_eq!(
            find(&mut a, t, &mut scratch, &mut steps, &mut []),
            Err(Err::Read)
        );
        a.bad_read = None;
        a.bad_decode = Some(bad);
        assert_eq!(
            find(&mut a, t, &mut scratch, &mut steps, &mut []),
            Err(Err::Decode)
        );
        a.bad_decode = None;
    }
    // A scratch that cannot hold the block, an entry longer than the
    // search takes, or none at all.
    let mut small = vec![0u8; a.len - 1];
    assert_eq!(
        find(&mut a, 7, &mut small, &mut steps, &mut []),
        Err(Err::Unusable)
    );
    for len in [0, MAX_ENTRY_LEN + 1] {
        a.len = len;
        assert_eq!(
            find(&mut a, 7, &mut scratch, &mut steps, &mut []),
            Err(Err::Unusable)
        );
    }
    // An empty array has no answer, and reads nothing.
    let mut e = array(&mut rng);
    e.keys.clear();
    let r = find(&mut e, 5, &mut scratch, &mut steps, &mut []);
    assert_eq!(r, Ok(None::<Hit>));
    assert_eq!(e.read, 0);
}
