//! One CPU's series ids by function name: looked up on nearly every line.

use std::hash::BuildHasher;

use hashbrown::HashTable;

use crate::intern::same;

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
