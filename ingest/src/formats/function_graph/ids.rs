//! One CPU's series ids by function name: looked up on nearly every line.
//!
//! A trace repeats the same few calls, so a small direct-mapped cache indexed by the name's
//! length and first and last eight bytes sits in front of the hash table: a hit costs one
//! comparison of the name, where the table first hashes all of it. A miss (two names sharing a
//! slot, or names crafted to) falls through to the table, which stays the authority.

use std::hash::BuildHasher;

use hashbrown::HashTable;

use crate::intern::same;

/// Slots of the cache in front of the table.
const SLOTS: usize = 1024;
/// A slot that holds no name yet.
const EMPTY: u32 = u32::MAX;

pub(super) struct Ids {
    /// Each name once, with its series id, in the order first seen.
    names: Vec<(Box<str>, usize)>,
    /// Indexes into `names`, by the name's full hash.
    table: HashTable<u32>,
    hasher: foldhash::fast::RandomState,
    /// Indexes into `names` (or [`EMPTY`]) by [`slot`].
    recent: Box<[u32; SLOTS]>,
}

impl Default for Ids {
    fn default() -> Self {
        Ids {
            names: Vec::new(),
            table: HashTable::new(),
            hasher: foldhash::fast::RandomState::default(),
            recent: Box::new([EMPTY; SLOTS]),
        }
    }
}

/// The cache slot of `name`: its length and its first and last eight bytes, mixed.
#[inline]
fn slot(name: &[u8]) -> usize {
    let n = name.len();
    let (head, tail) = if n >= 8 {
        let word = |i: usize| u64::from_le_bytes(name[i..i + 8].try_into().unwrap_or_default());
        (word(0), word(n - 8))
    } else {
        let mut w = [0u8; 8];
        w[..n].copy_from_slice(name);
        (u64::from_le_bytes(w), 0)
    };
    let mixed = (head ^ tail.rotate_left(29) ^ n as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (mixed >> 54) as usize
}

impl Ids {
    /// The id of `name`, or the one `new` makes for it.
    #[inline]
    pub(super) fn get_or(&mut self, name: &str, new: impl FnOnce() -> usize) -> usize {
        let s = slot(name.as_bytes());
        if let Some((known, id)) = self.names.get(self.recent[s] as usize)
            && same(known.as_bytes(), name.as_bytes())
        {
            return *id;
        }
        self.miss(s, name, new)
    }

    /// [`Ids::get_or`] past the cache: the table, adding `name` with the id `new` makes when
    /// it is not there. The cache then holds `name` in slot `s`.
    #[inline(never)]
    fn miss(&mut self, s: usize, name: &str, new: impl FnOnce() -> usize) -> usize {
        let hash = self.hasher.hash_one(name);
        let names = &self.names;
        let i = match self.table.find(hash, |&i| {
            same(names[i as usize].0.as_bytes(), name.as_bytes())
        }) {
            Some(&i) => i as usize,
            None => {
                let id = new();
                self.names.push((name.into(), id));
                let (names, hasher) = (&self.names, &self.hasher);
                let i = names.len() - 1;
                self.table
                    .insert_unique(hash, i as u32, |&j| hasher.hash_one(&*names[j as usize].0));
                i
            }
        };
        self.recent[s] = i as u32;
        self.names[i].1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_sharing_a_slot_keep_their_own_ids() {
        let mut ids = Ids::default();
        let mut next = 0;
        let mut make = || {
            next += 1;
            next - 1
        };
        // More names than slots, so that many share one; each asked for several times, in
        // orders that evict each other from the cache.
        let names: Vec<String> = (0..1000).map(|i| format!("func_{i}")).collect();
        let first: Vec<usize> = names.iter().map(|n| ids.get_or(n, &mut make)).collect();
        assert_eq!(first, (0..1000).collect::<Vec<_>>());
        for round in 0..3 {
            for (i, n) in names.iter().enumerate().rev().step_by(round + 1) {
                assert_eq!(ids.get_or(n, || panic!("{n} is known")), i);
            }
        }
        // Short names (under 8 bytes), and ones equal in length, start and end.
        let a = ids.get_or("a", &mut make);
        let b = ids.get_or("b", &mut make);
        let long1 = ids.get_or("do_nanosleep_xyz_sys_open", &mut make);
        let long2 = ids.get_or("do_nanosleep_abc_sys_open", &mut make);
        assert_eq!([a, b, long1, long2], [1000, 1001, 1002, 1003]);
        assert_eq!(ids.get_or("a", || panic!()), a);
        assert_eq!(ids.get_or("do_nanosleep_xyz_sys_open", || panic!()), long1);
        assert_eq!(ids.get_or("do_nanosleep_abc_sys_open", || panic!()), long2);
    }
}
