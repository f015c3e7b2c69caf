//! Reports and comparison pages already computed, keyed by what was asked and by the data
//! generation (the highest run id): a comparison is a pure function of the stored runs, and
//! runs are only ever added, so a new import invalidates every entry at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;

use crate::report::Report;

/// Entries kept per map.
const CAPACITY: usize = 64;
/// Samples held by cached reports at most (8 bytes each: 128 MiB).
const MAX_SAMPLES: usize = 16 << 20;
/// What a report's row weighs, in samples: with its names and statistics a row holds about
/// half a KiB. A report of millions of rows (two profiles) is not kept.
const ROW_WEIGHT: usize = 64;
/// Bytes of cached pages at most.
const MAX_PAGE_BYTES: usize = 64 << 20;

/// A map bounded by entry count and total weight; cleared when either would be exceeded
/// (simple, and a new import empties it anyway).
struct Bounded<V> {
    map: HashMap<String, (i64, V, usize)>,
    weight: usize,
    max_weight: usize,
}

impl<V: Clone> Bounded<V> {
    fn new(max_weight: usize) -> Self {
        Bounded {
            map: HashMap::new(),
            weight: 0,
            max_weight,
        }
    }

    fn get(&self, key: &str, generation: i64) -> Option<V> {
        match self.map.get(key) {
            Some((g, v, _)) if *g == generation => Some(v.clone()),
            _ => None,
        }
    }

    fn put(&mut self, key: String, generation: i64, value: V, weight: usize) {
        if weight > self.max_weight {
            return;
        }
        if self.map.len() >= CAPACITY || self.weight + weight > self.max_weight {
            self.map.clear();
            self.weight = 0;
        }
        if let Some((_, _, old)) = self.map.insert(key, (generation, value, weight)) {
            self.weight -= old;
        }
        self.weight += weight;
    }
}

pub struct ReportCache {
    reports: Mutex<Bounded<Arc<Report>>>,
    pages: Mutex<Bounded<Bytes>>,
}

impl Default for ReportCache {
    fn default() -> Self {
        ReportCache {
            reports: Mutex::new(Bounded::new(MAX_SAMPLES)),
            pages: Mutex::new(Bounded::new(MAX_PAGE_BYTES)),
        }
    }
}

impl ReportCache {
    pub fn get(&self, key: &str, generation: i64) -> Option<Arc<Report>> {
        self.reports.lock().ok()?.get(key, generation)
    }

    pub fn put(&self, key: String, generation: i64, report: Arc<Report>) {
        let samples = report
            .comparisons
            .iter()
            .map(|r| r.base_samples.len() + r.head_samples.len())
            .sum::<usize>()
            + report.comparisons.len() * ROW_WEIGHT;
        if let Ok(mut m) = self.reports.lock() {
            m.put(key, generation, report, samples);
        }
    }

    /// A rendered page.
    pub fn get_page(&self, key: &str, generation: i64) -> Option<Bytes> {
        self.pages.lock().ok()?.get(key, generation)
    }

    pub fn put_page(&self, key: String, generation: i64, body: Bytes) {
        let len = body.len();
        if let Ok(mut m) = self.pages.lock() {
            m.put(key, generation, body, len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_by_generation_count_and_weight() {
        let mut b: Bounded<u32> = Bounded::new(100);
        b.put("a".into(), 1, 10, 60);
        assert_eq!(b.get("a", 1), Some(10));
        assert_eq!(b.get("a", 2), None, "another generation is a miss");
        b.put("b".into(), 1, 20, 30);
        assert_eq!((b.get("a", 1), b.weight), (Some(10), 90));
        b.put("c".into(), 1, 30, 20); // 110 > 100: cleared first
        assert_eq!(
            (b.get("a", 1), b.get("c", 1), b.weight),
            (None, Some(30), 20)
        );
        b.put("c".into(), 1, 31, 25); // replacing an entry replaces its weight
        assert_eq!(b.weight, 25);
        b.put("huge".into(), 1, 0, 101);
        assert_eq!((b.get("huge", 1), b.weight), (None, 25));
        for i in 0..CAPACITY + 1 {
            b.put(format!("k{i}"), 1, 0, 0);
        }
        assert!(b.map.len() <= CAPACITY);
    }
}
