//! The history pass after uploads, shared by the uploads that are ready together: rigs
//! uploading one build add to the same histories, so every upload stored while a pass runs is
//! placed, and its histories read and re-analysed once, in the next pass.
//!
//! As with the store's group commit, each upload queues its part and waits for the turn;
//! whoever gets it runs the pass for everything queued by then, and each upload is answered
//! when the pass that took it is done.

use std::sync::{Arc, Mutex};

use store::{ImportOutcome, Placement, Store};
use tokio::sync::oneshot;

/// What an upload asks of the pass, and where its answer goes: `Err` holds why its placement
/// was refused (the request's fault).
struct Pending {
    run_ids: Vec<i64>,
    metrics: Option<Vec<(i64, String)>>,
    placement: Placement,
    reply: oneshot::Sender<Result<(), String>>,
}

/// The uploads of this server waiting for a history pass.
#[derive(Default)]
pub struct Passes {
    queue: Mutex<Vec<Pending>>,
    turn: Arc<tokio::sync::Mutex<()>>,
}

impl Passes {
    /// Places the runs of `outcome` and re-analyses the histories they add to, together with
    /// the uploads queued meanwhile. `Err` is a placement the request got wrong (an unknown
    /// parent, say); failures of detection itself are logged, as the runs are stored.
    pub async fn after_stored(
        self: &Arc<Self>,
        store: &Store,
        outcome: &ImportOutcome,
        placement: &Placement,
    ) -> Result<(), String> {
        let (reply, answer) = oneshot::channel();
        self.queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Pending {
                run_ids: outcome.run_ids.clone(),
                metrics: outcome.history_metrics.clone(),
                placement: placement.clone(),
                reply,
            });
        let (passes, store) = (self.clone(), store.clone());
        // A task of its own: an upload whose client went away must not cancel a pass that
        // holds other uploads, nor leave its part queued with no pass to come.
        tokio::spawn(async move {
            let turn = passes.turn.clone().lock_owned().await;
            // Nothing queued: an earlier holder of the turn took this upload's part. The
            // database-wide lock below is not asked for then, as every other server waits
            // behind each holder of it.
            if passes
                .queue
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .is_empty()
            {
                return;
            }
            // One pass at a time on the whole database: servers sharing one would otherwise
            // read and re-analyse the same histories side by side, and each waits here while
            // more of its uploads join its next pass.
            let shared = store.lock_named("history pass").await;
            let group =
                std::mem::take(&mut *passes.queue.lock().unwrap_or_else(|e| e.into_inner()));
            if !group.is_empty() {
                pass(&store, group).await;
            }
            if let Ok(lock) = shared {
                lock.release().await;
            }
            drop(turn);
        });
        answer
            .await
            .unwrap_or_else(|_| Err("the history pass ended without an answer".into()))
    }
}

/// One pass for a group of uploads.
async fn pass(store: &Store, group: Vec<Pending>) {
    let mut metrics: Vec<(i64, String)> = Vec::new();
    let mut unnamed: Vec<i64> = Vec::new();
    let mut replies = Vec::with_capacity(group.len());
    for p in group {
        if let Err(e) = super::place(store, &p.run_ids, &p.placement).await {
            let invalid = e
                .downcast_ref::<store::Error>()
                .is_some_and(|e| matches!(e, store::Error::Invalid(_)));
            if invalid {
                let _ = p.reply.send(Err(format!("{e:#}")));
            } else {
                tracing::error!("placing uploaded runs {:?} failed: {e:#}", p.run_ids);
                let _ = p.reply.send(Ok(()));
            }
            continue;
        }
        match p.metrics {
            Some(m) => metrics.extend(m),
            None => unnamed.extend(p.run_ids),
        }
        replies.push(p.reply);
    }
    if let Err(e) = detect(store, &metrics, &unnamed).await {
        tracing::error!("change-point detection after upload failed: {e:#}");
    }
    for r in replies {
        let _ = r.send(Ok(()));
    }
}

/// Re-analyses the histories of every run of the pass, each history once.
async fn detect(store: &Store, metrics: &[(i64, String)], unnamed: &[i64]) -> anyhow::Result<()> {
    let mut keys = store.history_keys_of_metrics(metrics).await?;
    if !unnamed.is_empty() {
        keys.extend(store.history_keys_of_runs(unnamed).await?);
    }
    keys.sort_unstable();
    keys.dedup();
    super::detect_keys(store, &keys).await?;
    Ok(())
}
