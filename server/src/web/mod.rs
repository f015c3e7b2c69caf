//! The web application: one module per feature, each with its handlers and page templates.

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::Context;
use axum::Router;
use axum::http::StatusCode;
use axum::routing::get;
use tower_http::compression::CompressionLayer;
use tower_http::services::ServeDir;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

use crate::config::{DbArgs, ServeArgs};
use crate::error::AppError;
use crate::state::AppState;

pub mod alerts;
pub mod api;
pub mod assets;
pub mod bisect;
pub mod builds;
pub mod charts;
pub mod compare;
pub mod headers;
pub mod history;
pub mod history_chart;
pub mod home;
pub mod limits;
pub mod machines;
mod own_spool;
pub mod paste;
mod paste_db;
pub mod run_list;
pub mod runs;
pub mod share;
pub mod upload;
pub mod view;

/// The whole router. Tests drive it with `tower::ServiceExt::oneshot`.
pub fn app(state: AppState) -> Router {
    // Built-in static files unless a directory overrides them.
    let statics: Router<AppState> = match &state.config.static_dir {
        Some(dir) => Router::new().nest_service("/static", ServeDir::new(dir)),
        None => Router::new().route("/static/{*path}", get(assets::embedded)),
    };
    let timeout = Duration::from_secs(state.config.request_timeout_secs);
    Router::new()
        .route("/healthz", get(healthz))
        .merge(home::routes())
        .merge(builds::routes())
        .merge(machines::routes())
        .merge(runs::routes())
        .merge(run_list::routes())
        .merge(compare::routes())
        .merge(share::routes())
        .merge(paste::routes())
        .merge(bisect::routes())
        .merge(api::routes())
        .merge(upload::routes())
        .merge(alerts::routes())
        .merge(history::routes())
        .merge(limits::routes())
        .merge(statics)
        .fallback(not_found)
        .layer(CompressionLayer::new())
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            timeout,
        ))
        .layer(axum::middleware::from_fn(headers::no_token_in_query))
        .layer(
            TraceLayer::new_for_http().make_span_with(|req: &axum::extract::Request| {
                tracing::debug_span!("request", method = %req.method(), uri = %headers::loggable_uri(req.uri()))
            }),
        )
        .layer(axum::middleware::from_fn(headers::security))
        .with_state(state)
}

async fn healthz() -> &'static str {
    "ok"
}

async fn not_found(uri: axum::http::Uri) -> AppError {
    AppError::NotFound(format!("no page at {}", uri.path()))
}

/// Opens the database and serves until Ctrl-C.
pub async fn serve(db: &DbArgs, mut config: ServeArgs) -> anyhow::Result<()> {
    let store = db.open_existing_store().await?;
    // Held while serving: it marks the per-process spool directory as in use.
    let mut _spool_lock = None;
    if config.spool_dir.is_none() {
        let beside = limits::default_spool_dir(&db.db);
        // Several servers may share a PostgreSQL database (and a machine), and a database on a
        // read-only filesystem has no room beside it: then one spool per process.
        let per_process = db.is_postgres()
            || matches!(std::fs::create_dir_all(&beside),
                Err(e) if e.kind() == std::io::ErrorKind::ReadOnlyFilesystem);
        config.spool_dir = Some(if per_process {
            let dir = std::env::temp_dir().join(format!(
                "{}{}",
                own_spool::PROCESS_SPOOL_PREFIX,
                std::process::id()
            ));
            _spool_lock = Some(own_spool::own_spool(&dir).with_context(|| {
                format!("preparing the upload spool directory {}", dir.display())
            })?);
            dir
        } else {
            beside
        });
    }
    let shown = db.shown();
    serve_pool(store, config, |addr| {
        println!("quiescent is serving http://{addr}/ (database {shown})");
    })
    .await
}

/// Serves `store`; `ready` is called with the bound address.
pub async fn serve_pool(
    store: store::Store,
    config: ServeArgs,
    ready: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(&config.bind)
        .await
        .with_context(|| format!("binding {}", config.bind))?;
    serve_on(store, config, listener, ready).await
}

/// Serves `store` on a listener already bound (`config.bind` is not used).
pub async fn serve_on(
    store: store::Store,
    config: ServeArgs,
    listener: tokio::net::TcpListener,
    ready: impl FnOnce(SocketAddr),
) -> anyhow::Result<()> {
    let addr = listener.local_addr()?;
    let header_timeout = Duration::from_secs(config.header_timeout_secs.max(1));
    let state = AppState::new(store.clone(), config);
    // Emptied only when it is this server's own (configured, or beside its database): the
    // shared default under the temporary directory may belong to other servers too.
    let spool = if state.config.spool_dir.is_some() {
        limits::prepare_spool(&state.spool_dir)
    } else {
        std::fs::create_dir_all(&state.spool_dir)
    };
    spool.with_context(|| {
        format!(
            "preparing the upload spool directory {}",
            state.spool_dir.display()
        )
    })?;
    ready(addr);
    let passes = state.history_passes.clone();
    let app = app(state);
    // hyper is driven directly (not `axum::serve`) for its header read timeout: a client that
    // trickles its request headers is cut off instead of holding a connection forever.
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(async {
        let _ = tokio::signal::ctrl_c().await;
    });
    loop {
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(conn) => conn,
                Err(e) => {
                    // Out of file descriptors and the like: wait, do not spin.
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        // Without TCP_NODELAY a response written in two pieces (headers, then body) waits for
        // the client's delayed ACK: 40 ms per request on Linux.
        let _ = tcp.set_nodelay(true);
        // The peer address, for per-client limits (`ConnectInfo`, as `axum::serve` gives it).
        let app = tower::ServiceExt::map_request(
            app.clone(),
            move |mut req: hyper::Request<hyper::body::Incoming>| {
                req.extensions_mut()
                    .insert(axum::extract::ConnectInfo(peer));
                req
            },
        );
        let service = hyper_util::service::TowerToHyperService::new(app);
        let conn = hyper::server::conn::http1::Builder::new()
            .timer(hyper_util::rt::TokioTimer::new())
            .header_read_timeout(header_timeout)
            .serve_connection(hyper_util::rt::TokioIo::new(tcp), service);
        let conn = graceful.watch(conn);
        tokio::spawn(async move {
            if let Err(e) = conn.await {
                tracing::debug!("connection ended: {e}");
            }
        });
    }
    // Let requests in flight finish, for a while.
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(Duration::from_secs(10)) => {}
    }
    // The histories of the last uploads are analysed before the store closes.
    if !passes.settled(Duration::from_secs(30)).await {
        tracing::warn!("stopping with history passes still queued");
    }
    store.close().await;
    Ok(())
}
