//! One CPU's series ids by function name: looked up on nearly every line.

use std::hash::BuildHasher;

use hashbrown::HashTable;

#[derive(Default)]
pub(super) struct Ids {
    table: HashTable<(Box<str>, usize)>,
    hasher: foldhash::fast::RandomState,
}

impl Ids {
    /// The id of `name`, or the one `new` makes for it.
    pub(super) fn get_or(&mut self, name: &str, new: impl FnOnce() -> usize) -> usize {
        let hash = self.hasher.hash_one(name);
        if let Some(&(_, id)) = self
            .table
            .find(hash, |(k, _)| same(k.as_bytes(), name.as_bytes()))
        {
            return id;
        }
        let id = new();
        let hasher = &self.hasher;
        self.table
            .insert_unique(hash, (name.into(), id), |(k, _)| hasher.hash_one(&**k));
        id
    }
}

/// Byte equality without a library call: names are a few words long, and the call cost more
/// than the comparison.
fn same(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n < 8 {
        return a.iter().zip(b).all(|(x, y)| x == y);
    }
    let word = |s: &[u8], i: usize| u64::from_le_bytes(s[i..i + 8].try_into().unwrap_or_default());
    let mut i = 0;
    while i + 8 < n {
        if word(a, i) != word(b, i) {
            return false;
        }
        i += 8;
    }
    // The last word may overlap the one before.
    word(a, n - 8) == word(b, n - 8)
}

#[cfg(test)]
mod tests {
    #[test]
    fn same() {
        let names = [
            "",
            "a",
            "ab",
            "abcdefg",
            "abcdefgh",
            "abcdefgi",
            "abcdefghi",
            "_raw_spin_lock_irqsave",
            "_raw_spin_lock_irqsavf",
            "xraw_spin_lock_irqsave",
            "_raw_spin_lock_irqrestore",
        ];
        for a in names {
            for b in names {
                assert_eq!(super::same(a.as_bytes(), b.as_bytes()), a == b, "{a} {b}");
            }
        }
    }
}
