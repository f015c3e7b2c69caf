//! A map with a weight limit that drops its least recently used entries to make room: what
//! the history passes keep between passes (read histories, detector states) must stay bounded
//! in a server that runs for months, and the histories being uploaded to now are the ones
//! worth keeping. A cache that refused new entries once full kept whatever came first (a
//! large profile analysed once) and left the busy histories re-read whole at every pass.

use std::collections::HashMap;
use std::hash::Hash;

/// Entries by key, each with its weight (the unit the room is counted in: points, samples)
/// and when it was last put.
pub struct Lru<K, V> {
    map: HashMap<K, Entry<V>>,
    /// The weights of every entry, together.
    weight: usize,
    /// The most the entries may weigh together.
    room: usize,
    /// Counts the puts, to order the entries by use.
    tick: u64,
}

struct Entry<V> {
    value: V,
    weight: usize,
    used: u64,
}

impl<K: Hash + Eq + Clone, V> Lru<K, V> {
    pub fn new(room: usize) -> Self {
        Lru {
            map: HashMap::new(),
            weight: 0,
            room,
            tick: 0,
        }
    }

    /// Takes the entry of `key` out (its user puts it back when done with it).
    pub fn take(&mut self, key: &K) -> Option<V> {
        let e = self.map.remove(key)?;
        self.weight -= e.weight;
        Some(e.value)
    }

    /// Puts `value` of `weight` under `key` as the most recently used entry, first dropping
    /// the least recently used ones down to three quarters of the room when it does not fit
    /// (so that a stream of new entries sorts the others once per many puts, not once each).
    /// A value heavier than the whole room is not kept (nor the key's old one). What was
    /// dropped is handed back, to be freed after the caller's lock is let go.
    pub fn put(&mut self, key: K, value: V, weight: usize) -> Vec<V> {
        // The key's old value goes either way: it is replaced, or its new one is not kept.
        let mut dropped: Vec<V> = self.take(&key).into_iter().collect();
        if weight > self.room {
            dropped.push(value);
            return dropped;
        }
        if self.weight + weight > self.room {
            let target = (self.room / 4 * 3).min(self.room - weight);
            let mut by_use: Vec<(u64, K)> =
                self.map.iter().map(|(k, e)| (e.used, k.clone())).collect();
            by_use.sort_unstable_by_key(|(used, _)| *used);
            for (_, old) in by_use {
                if self.weight <= target {
                    break;
                }
                dropped.extend(self.take(&old));
            }
        }
        self.tick += 1;
        self.weight += weight;
        let used = self.tick;
        self.map.insert(
            key,
            Entry {
                value,
                weight,
                used,
            },
        );
        dropped
    }

    pub fn contains(&self, key: &K) -> bool {
        self.map.contains_key(key)
    }

    /// The weights of every entry, together.
    #[cfg(test)]
    fn weight(&self) -> usize {
        self.weight
    }

    /// Drops every entry.
    pub fn clear(&mut self) {
        self.map.clear();
        self.weight = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_recently_used_entries_make_room() {
        let mut lru: Lru<&str, u32> = Lru::new(100);
        for k in ["a", "b", "c", "d"] {
            assert!(lru.put(k, 0, 25).is_empty());
        }
        assert_eq!(lru.weight(), 100);
        // "a" is taken and put back: now the most recent.
        let a = lru.take(&"a").unwrap();
        assert_eq!(lru.weight(), 75);
        assert!(lru.put("a", a, 25).is_empty());
        // An entry that does not fit drops the least recent down to 3/4 of the room: "b" and
        // "c" go, "d" and "a" stay.
        assert_eq!(lru.put("e", 0, 30).len(), 2);
        let mut left: Vec<&str> = lru.map.keys().copied().collect();
        left.sort_unstable();
        assert_eq!(left, ["a", "d", "e"]);
        assert_eq!(lru.weight(), 80);
        // One heavier than the whole room is not kept, and drops nothing else.
        assert_eq!(lru.put("f", 0, 101).len(), 1);
        assert!(!lru.contains(&"f"));
        assert_eq!(lru.weight(), 80);
        // Putting a key again replaces its entry and its weight.
        assert_eq!(lru.put("e", 1, 10).len(), 1);
        assert_eq!(lru.weight(), 60);
        // A key put again too heavy to keep loses its old entry too.
        assert_eq!(lru.put("e", 2, 101), [1, 2]);
        assert!(!lru.contains(&"e"));
        assert_eq!(lru.weight(), 50);
        lru.clear();
        assert_eq!((lru.weight(), lru.contains(&"a")), (0, false));
    }
}
