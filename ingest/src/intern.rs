//! Strings handed out as dense ids, each stored once: the names of a profile's millions of
//! series are a few thousand strings.

use std::hash::BuildHasher;

use hashbrown::HashTable;

/// Strings seen once each, handed out as dense ids (0, 1, ...).
#[derive(Default)]
pub struct Interner {
    strings: Vec<Box<str>>,
    /// Ids, hashed by their string.
    index: HashTable<u32>,
    hasher: foldhash::fast::RandomState,
    /// The last string looked up: consecutive series mostly share scope and label.
    last: Option<u32>,
}

impl Interner {
    /// The id of `s`, given a new one if it was not seen before.
    pub fn id(&mut self, s: &str) -> u32 {
        if let Some(l) = self.last {
            if &*self.strings[l as usize] == s {
                return l;
            }
            // Tables repeat their rows in the same order (one trace_stat table per CPU): the
            // string after the last one is the likely next.
            if let Some(next) = self.strings.get(l as usize + 1)
                && &**next == s
            {
                self.last = Some(l + 1);
                return l + 1;
            }
        }
        let hash = self.hasher.hash_one(s);
        let strings = &self.strings;
        let id = match self.index.find(hash, |&i| &*strings[i as usize] == s) {
            Some(&id) => id,
            None => {
                let id = self.strings.len() as u32;
                self.strings.push(s.into());
                let (strings, hasher) = (&self.strings, &self.hasher);
                self.index
                    .insert_unique(hash, id, |&i| hasher.hash_one(&*strings[i as usize]));
                id
            }
        };
        self.last = Some(id);
        id
    }

    /// The id of `s` if it was seen.
    pub fn lookup(&self, s: &str) -> Option<u32> {
        let hash = self.hasher.hash_one(s);
        self.index
            .find(hash, |&i| &*self.strings[i as usize] == s)
            .copied()
    }

    /// The string of `id`.
    pub fn get(&self, id: u32) -> &str {
        &self.strings[id as usize]
    }

    /// Strings seen so far.
    pub fn len(&self) -> usize {
        self.strings.len()
    }

    pub fn is_empty(&self) -> bool {
        self.strings.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_dense_and_stable() {
        let mut i = Interner::default();
        let words = ["a", "b", "a", "c", "b", "b", "d", "a"];
        let ids: Vec<u32> = words.iter().map(|w| i.id(w)).collect();
        assert_eq!(ids, [0, 1, 0, 2, 1, 1, 3, 0]);
        assert_eq!(i.len(), 4);
        assert_eq!(i.get(2), "c");
        assert_eq!(i.lookup("d"), Some(3));
        assert_eq!(i.lookup("e"), None);
        // Many strings: the table grows and every id is found again.
        let many: Vec<u32> = (0..10_000).map(|n| i.id(&format!("s{n}"))).collect();
        let again: Vec<u32> = (0..10_000).rev().map(|n| i.id(&format!("s{n}"))).collect();
        assert!(many.iter().eq(again.iter().rev()));
        assert_eq!(i.len(), 10_004);
    }
}
