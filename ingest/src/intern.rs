//! Strings handed out as dense ids, each stored once: the names of a profile's millions of
//! series are a few thousand strings.

use std::hash::BuildHasher;

use hashbrown::HashTable;

/// Strings seen once each, handed out as dense ids (0, 1, ...).
pub struct Interner {
    /// The strings one after another: a table's names are compared in the order they were
    /// added, and one buffer keeps them in a few cache lines instead of one allocation each.
    text: String,
    /// Where each string starts in `text`, and one more entry for where the last one ends.
    starts: Vec<usize>,
    /// Ids, hashed by their string, each with its hash: growing the table moves entries
    /// without reading their strings again.
    index: HashTable<(u32, u32)>,
    hasher: foldhash::fast::RandomState,
    /// The last string looked up: consecutive series mostly share scope and label.
    last: Option<u32>,
}

impl Default for Interner {
    fn default() -> Self {
        Interner {
            text: String::new(),
            starts: vec![0],
            index: HashTable::new(),
            hasher: foldhash::fast::RandomState::default(),
            last: None,
        }
    }
}

/// The table hash of a kept 32-bit hash.
#[inline]
fn spread(kept: u32) -> u64 {
    u64::from(kept) * 0x1_0000_0001
}

/// `a == b` for the short strings of series keys, compared 8 bytes at a time inline: the
/// library comparison is a call that costs more than such a string.
#[inline]
pub(crate) fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let word = |c: &[u8], i: usize| u64::from_ne_bytes(c[i..i + 8].try_into().unwrap_or_default());
    let n = a.len();
    if n < 8 {
        return a.iter().zip(b).all(|(p, q)| p == q);
    }
    let mut i = 0;
    while i + 8 < n {
        if word(a, i) != word(b, i) {
            return false;
        }
        i += 8;
    }
    // The last 8 bytes, overlapping the words before when the length is not a multiple of 8.
    word(a, n - 8) == word(b, n - 8)
}

impl Interner {
    /// A string's hash as kept in the index (32 bits), and as given to the table: the same
    /// bits in both halves, so that the table's bucket (low bits) and tag (high bits) both
    /// come from the kept hash.
    #[inline]
    fn hash(&self, s: &str) -> (u32, u64) {
        let h = self.hasher.hash_one(s);
        let kept = h as u32 ^ (h >> 32) as u32;
        (kept, spread(kept))
    }

    #[inline]
    fn bytes(&self, id: u32) -> &[u8] {
        let i = id as usize;
        &self.text.as_bytes()[self.starts[i]..self.starts[i + 1]]
    }

    /// The id of `s`, given a new one if it was not seen before.
    #[inline(always)]
    pub fn id(&mut self, s: &str) -> u32 {
        let b = s.as_bytes();
        if let Some(l) = self.last {
            if same(self.bytes(l), b) {
                return l;
            }
            // Tables repeat their rows in the same order (one trace_stat table per CPU): the
            // string after the last one is the likely next.
            if (l as usize + 1) < self.len() && same(self.bytes(l + 1), b) {
                self.last = Some(l + 1);
                return l + 1;
            }
        }
        self.find_or_add(s)
    }

    /// [`Interner::id`] for strings that mostly come in the order they were first seen (the
    /// rows of one table after another): the string after the last one is tried first.
    #[inline(always)]
    pub fn id_in_order(&mut self, s: &str) -> u32 {
        let b = s.as_bytes();
        if let Some(l) = self.last {
            if (l as usize + 1) < self.len() && same(self.bytes(l + 1), b) {
                self.last = Some(l + 1);
                return l + 1;
            }
            if same(self.bytes(l), b) {
                return l;
            }
        }
        self.find_or_add(s)
    }

    #[inline(never)]
    fn find_or_add(&mut self, s: &str) -> u32 {
        let b = s.as_bytes();
        let (kept, hash) = self.hash(s);
        let (text, starts) = (&self.text, &self.starts);
        let found = self.index.find(hash, |&(i, h)| {
            h == kept
                && same(
                    &text.as_bytes()[starts[i as usize]..starts[i as usize + 1]],
                    b,
                )
        });
        let id = match found {
            Some(&(id, _)) => id,
            None => {
                let id = self.len() as u32;
                self.text.push_str(s);
                self.starts.push(self.text.len());
                self.index
                    .insert_unique(hash, (id, kept), |&(_, h)| spread(h));
                id
            }
        };
        self.last = Some(id);
        id
    }

    /// The id of `s` if it was seen.
    pub fn lookup(&self, s: &str) -> Option<u32> {
        let (kept, hash) = self.hash(s);
        self.index
            .find(hash, |&(i, h)| {
                h == kept && same(self.bytes(i), s.as_bytes())
            })
            .map(|&(i, _)| i)
    }

    /// The string of `id`.
    #[inline]
    pub fn get(&self, id: u32) -> &str {
        let i = id as usize;
        &self.text[self.starts[i]..self.starts[i + 1]]
    }

    /// Strings seen so far.
    pub fn len(&self) -> usize {
        self.starts.len() - 1
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
        for (a, b) in [
            ("", ""),
            ("abcdefgh", "abcdefgh"),
            ("abcdefghi", "abcdefghj"),
        ] {
            assert_eq!(same(a.as_bytes(), b.as_bytes()), a == b);
        }
        for n in 0..40 {
            let a: Vec<u8> = (0..n).map(|k| k as u8).collect();
            assert!(same(&a, &a));
            for k in 0..n {
                let mut b = a.clone();
                b[k] ^= 1;
                assert!(!same(&a, &b), "{n} {k}");
            }
        }
        // Many strings: the table grows and every id is found again.
        let many: Vec<u32> = (0..10_000).map(|n| i.id(&format!("s{n}"))).collect();
        let again: Vec<u32> = (0..10_000).rev().map(|n| i.id(&format!("s{n}"))).collect();
        assert!(many.iter().eq(again.iter().rev()));
        assert_eq!(i.len(), 10_004);
        // In order or not, a string keeps its id.
        let in_order: Vec<u32> = (0..10_000)
            .chain([5, 5, 3, 10_001])
            .map(|n| i.id_in_order(&format!("s{n}")))
            .collect();
        assert!(in_order[..10_000].iter().eq(many.iter()));
        assert_eq!(in_order[10_000..], [many[5], many[5], many[3], 10_004]);
    }
}
