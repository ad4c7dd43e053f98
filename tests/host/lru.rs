// SPDX-License-Identifier: GPL-2.0

//! Host tests of the O(1) slot lists (`src/unwind/lru.rs`, compiled in as
//! is): random operations on two lists sharing one links array (taken
//! and free, as the caches keep them), the array growing as the slot
//! arrays do, compared at every step with a plain model (a vector in
//! order of use); and the misuses a caller could make, which change
//! nothing.

#[path = "../../src/unwind/lru.rs"]
#[allow(dead_code)]
mod lru;

#[path = "common/rng.rs"]
#[allow(dead_code)]
mod rng;

use lru::{Link, Lru};
use rng::Rng;

/// A random index below `n`.
fn pick(rng: &mut Rng, n: usize) -> usize {
    rng.below(n as u64) as usize
}

/// The slots of `l`, oldest first, as `pop_oldest` gives them from a
/// copy of the list and its links; each agrees with `oldest()`, and the
/// walk ends within the links' count (no cycle).
fn order(l: &Lru, links: &[Link]) -> Vec<usize> {
    let (mut l, mut links, n) = (l.clone(), links.to_vec(), l.len());
    let mut out = Vec::new();
    while let Some(want) = l.oldest() {
        assert_eq!(l.pop_oldest(&mut links), Some(want));
        out.push(want);
        assert!(out.len() <= links.len(), "cycle in the list");
    }
    assert_eq!((l.len(), out.len()), (0, n), "len() disagrees with the links");
    out
}

#[test]
fn random_operations_match_a_model() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..200 {
        let mut links = vec![Link::OFF; 1 + pick(&mut rng, 8)];
        let (mut taken, mut free) = (Lru::new(), Lru::new());
        let (mut m_taken, mut m_free): (Vec<usize>, Vec<usize>) = (Vec::new(), Vec::new());
        for i in 0..links.len() {
            assert!(free.push(&mut links, i));
            m_free.push(i);
        }
        for step in 0..2000 {
            match pick(&mut rng, 6) {
                // Take a free slot (the oldest free one), as an insertion does.
                0 | 1 => {
                    let got = free.pop_oldest(&mut links);
                    let want = if m_free.is_empty() { None } else { Some(m_free.remove(0)) };
                    assert_eq!(got, want, "round {round} step {step}");
                    if let Some(i) = got {
                        assert!(taken.push(&mut links, i));
                        m_taken.push(i);
                    }
                }
                // A lookup found a taken slot.
                2 => {
                    if !m_taken.is_empty() {
                        let k = pick(&mut rng, m_taken.len());
                        let i = m_taken.remove(k);
                        m_taken.push(i);
                        taken.touch(&mut links, i);
                    }
                }
                // Evict the least recently used.
                3 => {
                    let got = taken.pop_oldest(&mut links);
                    let want = if m_taken.is_empty() { None } else { Some(m_taken.remove(0)) };
                    assert_eq!(got, want);
                    if let Some(i) = got {
                        assert!(free.push(&mut links, i));
                        m_free.push(i);
                    }
                }
                // Drop any taken slot (a newer version replaced it).
                4 => {
                    if !m_taken.is_empty() {
                        let k = pick(&mut rng, m_taken.len());
                        let i = m_taken.remove(k);
                        assert!(taken.remove(&mut links, i));
                        assert!(free.push(&mut links, i));
                        m_free.push(i);
                    }
                }
                // The slot arrays double.
                _ => {
                    if links.len() < 64 && pick(&mut rng, 8) == 0 {
                        let old = links.len();
                        links.resize(old * 2, Link::OFF);
                        for i in old..old * 2 {
                            assert!(free.push(&mut links, i));
                            m_free.push(i);
                        }
                    }
                }
            }
            assert_eq!(order(&taken, &links), m_taken, "round {round} step {step}");
            assert_eq!(order(&free, &links), m_free, "round {round} step {step}");
            for i in 0..links.len() {
                assert!(Lru::is_on(&links, i), "slot {i} lost");
            }
        }
    }
}

#[test]
fn misuse_changes_nothing() {
    let mut links = vec![Link::OFF; 4];
    let mut l = Lru::new();
    assert_eq!(l.oldest(), None);
    assert_eq!(l.pop_oldest(&mut links), None);
    // Past the links.
    assert!(!l.push(&mut links, 4));
    assert!(!l.push(&mut links, usize::MAX));
    assert!(!l.push(&mut links, u32::MAX as usize));
    assert!(!l.remove(&mut links, 9));
    l.touch(&mut links, 9);
    // Twice on, twice off.
    assert!(l.push(&mut links, 2));
    assert!(!l.push(&mut links, 2));
    assert!(l.push(&mut links, 0));
    assert!(l.remove(&mut links, 2));
    assert!(!l.remove(&mut links, 2));
    // Touching a slot on no list does not put it on one.
    l.touch(&mut links, 3);
    assert!(!Lru::is_on(&links, 3));
    assert_eq!(order(&l, &links), vec![0]);
    assert_eq!(links.iter().filter(|k| **k == Link::OFF).count(), 3);
}

#[test]
fn one_slot_list_is_told_from_none() {
    let mut links = vec![Link::OFF; 1];
    let mut l = Lru::new();
    assert!(l.push(&mut links, 0));
    assert!(Lru::is_on(&links, 0));
    assert_eq!(l.len(), 1);
    l.touch(&mut links, 0);
    assert_eq!(l.pop_oldest(&mut links), Some(0));
    assert!(!Lru::is_on(&links, 0));
    assert_eq!(l.len(), 0);
    assert_eq!(l.oldest(), None);
}
