//! What every handler shares.

use std::sync::Arc;

use crate::config::ServeArgs;

#[derive(Clone)]
pub struct AppState {
    pub store: store::Store,
    pub config: Arc<ServeArgs>,
    /// Comparison reports already computed (see `cache`).
    pub cache: Arc<crate::cache::ReportCache>,
    /// Serialises this process's write transactions (uploads): waiting on it is cheaper and
    /// fairer than polling SQLite's busy handler.
    pub writer: Arc<tokio::sync::Mutex<()>>,
}

impl AppState {
    pub fn new(store: store::Store, config: ServeArgs) -> Self {
        AppState {
            store,
            config: Arc::new(config),
            cache: Arc::default(),
            writer: Arc::new(tokio::sync::Mutex::new(())),
        }
    }
}
