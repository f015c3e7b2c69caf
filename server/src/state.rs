//! What every handler shares.

use std::sync::Arc;

use crate::config::ServeArgs;

#[derive(Clone)]
pub struct AppState {
    pub store: store::Store,
    pub config: Arc<ServeArgs>,
    /// Comparison reports already computed (see `cache`).
    pub cache: Arc<crate::cache::ReportCache>,
    /// Bytes all uploads in flight may hold together.
    pub upload_budget: Arc<crate::web::limits::UploadBudget>,
    /// Anonymous writes (shares) per client and minute.
    pub anon_writes: Arc<crate::web::limits::RateLimiter>,
    /// Where uploads are received: one directory per upload under it.
    pub spool_dir: std::path::PathBuf,
    /// Uploads waiting for their history pass (see `history::passes`).
    pub history_passes: Arc<crate::history::passes::Passes>,
    /// Upload tokens looked up lately (see `tokens::authenticate_upload`).
    pub upload_tokens: Arc<crate::tokens::TokenCache>,
}

impl AppState {
    pub fn new(store: store::Store, config: ServeArgs) -> Self {
        // Uploads from many rigs: a large one must not hold the writer for long.
        let store = store.staging_large_imports();
        AppState {
            history_passes: Arc::new(crate::history::passes::Passes::new(&store)),
            store,
            cache: Arc::default(),
            upload_tokens: Arc::default(),
            upload_budget: Arc::new(crate::web::limits::UploadBudget::new(
                config.upload_budget_mib,
                config.upload_wait_secs,
            )),
            anon_writes: Arc::new(crate::web::limits::RateLimiter::new(
                config.anon_writes_per_minute,
            )),
            spool_dir: config
                .spool_dir
                .clone()
                .unwrap_or_else(|| std::env::temp_dir().join("quiescent-spool")),
            config: Arc::new(config),
        }
    }
}
