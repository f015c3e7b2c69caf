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
pub mod builds;
pub mod cache;
pub mod charts;
pub mod compare;
pub mod headers;
pub mod history;
pub mod history_chart;
pub mod home;
pub mod machines;
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
        .merge(compare::routes())
        .merge(share::routes())
        .merge(api::routes())
        .merge(upload::routes())
        .merge(alerts::routes())
        .merge(history::routes())
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
pub async fn serve(db: &DbArgs, config: ServeArgs) -> anyhow::Result<()> {
    let store = db.open_store().await?;
    serve_pool(store, config, |addr| {
        println!(
            "quiescent is serving http://{addr}/ (database {})",
            db.db.display()
        );
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
    let addr = listener.local_addr()?;
    let header_timeout = Duration::from_secs(config.header_timeout_secs.max(1));
    let state = AppState::new(store.clone(), config);
    ready(addr);
    let app = app(state);
    // hyper is driven directly (not `axum::serve`) for its header read timeout: a client that
    // trickles its request headers is cut off instead of holding a connection forever.
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(async {
        let _ = tokio::signal::ctrl_c().await;
    });
    loop {
        let (tcp, _peer) = tokio::select! {
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
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
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
    store.close().await;
    Ok(())
}
