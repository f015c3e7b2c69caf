//! Reports and comparison pages already computed, keyed by what was asked and by the data
//! generation (the highest run id): a comparison is a pure function of the stored runs, and
//! runs are only ever added, so a new import invalidates every entry at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use sqlx::SqlitePool;

use crate::report::Report;

/// Entries kept; the cache is cleared when full (simple, bounded).
const CAPACITY: usize = 64;

#[derive(Default)]
pub struct ReportCache {
    map: Mutex<HashMap<String, (i64, Arc<Report>)>>,
    pages: Mutex<HashMap<String, (i64, Bytes)>>,
}

impl ReportCache {
    /// The data generation: the highest run id (an O(1) rowid lookup).
    pub async fn generation(&self, pool: &SqlitePool) -> Result<i64, sqlx::Error> {
        sqlx::query_scalar("SELECT COALESCE(MAX(id), 0) FROM runs")
            .fetch_one(pool)
            .await
    }

    pub fn get(&self, key: &str, generation: i64) -> Option<Arc<Report>> {
        let map = self.map.lock().ok()?;
        match map.get(key) {
            Some((g, r)) if *g == generation => Some(r.clone()),
            _ => None,
        }
    }

    pub fn put(&self, key: String, generation: i64, report: Arc<Report>) {
        if let Ok(mut map) = self.map.lock() {
            if map.len() >= CAPACITY {
                map.clear();
            }
            map.insert(key, (generation, report));
        }
    }

    /// A rendered page.
    pub fn get_page(&self, key: &str, generation: i64) -> Option<Bytes> {
        let pages = self.pages.lock().ok()?;
        match pages.get(key) {
            Some((g, b)) if *g == generation => Some(b.clone()),
            _ => None,
        }
    }

    pub fn put_page(&self, key: String, generation: i64, body: Bytes) {
        if let Ok(mut pages) = self.pages.lock() {
            if pages.len() >= CAPACITY {
                pages.clear();
            }
            pages.insert(key, (generation, body));
        }
    }
}
