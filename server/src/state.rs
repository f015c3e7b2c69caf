//! What every handler shares.

use std::sync::Arc;

use sqlx::SqlitePool;

use crate::config::ServeArgs;

#[derive(Clone)]
pub struct AppState {
    pub store: store::Store,
    /// The store's pool, for the queries that have not moved into the store yet.
    pub pool: SqlitePool,
    pub config: Arc<ServeArgs>,
    /// Comparison reports already computed (see `web::cache`).
    pub cache: Arc<crate::web::cache::ReportCache>,
    /// Serialises this process's write transactions (uploads): waiting on it is cheaper and
    /// fairer than polling SQLite's busy handler.
    pub writer: Arc<tokio::sync::Mutex<()>>,
}

impl AppState {
    pub fn new(store: store::Store, config: ServeArgs) -> Self {
        AppState {
            pool: store.sqlite_pool().clone(),
            store,
            config: Arc::new(config),
            cache: Arc::default(),
            writer: Arc::new(tokio::sync::Mutex::new(())),
        }
    }
}
