//! The history pass after uploads, in the background and shared by the uploads stored
//! meanwhile: rigs uploading one build add to the same histories, so every upload stored while
//! a pass runs has its histories read and re-analysed once, in the next pass.
//!
//! An upload is answered once its runs are stored and placed on their branch; detection does
//! not hold the answer. Each upload queues its part, and starts a task that waits for the
//! turn unless one is waiting already; the task runs the pass for everything queued by then.
//! A pass that is missed (the server stopped before it ran) costs no alert for good: every
//! pass analyses a history up to its last run (reading only the runs since the pass before
//! where it can, see `kept`), so the next upload to the same history finds its change points.
//!
//! Passes run on a thread of their own, with a tokio runtime of their own shared by the
//! process's servers (`runtime`), and read and write through connections of their own. On the
//! request handlers' runtime, a pass's reading and decoding of thousands of runs took turns
//! with the handlers on the runtime's threads, which spent nearly three times as long in
//! `malloc`: an upload cost about a third more CPU than with no passes at all (the median of
//! 12 pairs of test builds, `bench/README.md`).
//!
//! A pass rests after itself, `REST_PER_PASS` times as long as it took (with its wait for
//! other servers' passes on the same database), before the next one starts: detection is
//! background work, and under a stream of uploads back-to-back passes (each re-reading whole
//! histories) took as much of the machine as the uploads themselves.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use tokio::time::Instant;

use store::{ImportOutcome, Placement, Store};

/// The histories an upload added to, waiting for a pass.
struct Pending {
    run_ids: Vec<i64>,
    metrics: Option<Vec<(i64, String)>>,
}

/// The uploads of this server waiting for a history pass.
pub struct Passes {
    queue: Mutex<Vec<Pending>>,
    /// A task is waiting to run the next pass.
    scheduled: AtomicBool,
    turn: Arc<tokio::sync::Mutex<()>>,
    /// When the next pass may start, after the last one's rest.
    next_at: Mutex<Option<Instant>>,
    /// (build label, branch) of builds this server placed or found placed: builds are never
    /// taken off a branch, nor removed, so the next upload of the build skips the lookup.
    placed: Mutex<HashSet<(String, String)>>,
    /// The store the passes read and write through, with connections of their own, opened on
    /// the passes' runtime when first needed ([`Store::with_own_connections`]).
    store: Store,
}

/// Entries of `placed` at most: a lab uploads to a few hundred builds at a time.
const PLACED_KEPT: usize = 4096;

/// A pass is followed by a rest of this many times its duration (so passes take at most an
/// eleventh of the time of one core while uploads keep coming; at 3, a quarter, the uploads'
/// rate was about a tenth lower, `bench/README.md`)...
const REST_PER_PASS: u32 = 10;
/// ...but never longer than this: an alert comes at most this long plus two passes after the
/// upload that showed it.
const MAX_REST: Duration = Duration::from_secs(2);

impl Passes {
    /// The passes of a server on `store`.
    pub fn new(store: &Store) -> Passes {
        Passes {
            queue: Mutex::default(),
            scheduled: AtomicBool::default(),
            turn: Arc::default(),
            next_at: Mutex::default(),
            placed: Mutex::default(),
            store: store.with_own_connections(),
        }
    }

    /// Places the runs of `outcome` (of the build labelled `build`) on their branch unless this
    /// server placed that build there before, then queues their histories for the next pass
    /// and returns without waiting for it. `Err` is a placement the request got wrong (an
    /// unknown parent, say); other failures are logged, as the runs are stored. After a pass
    /// that raised alerts, `webhook` (when given) is sent the groups waiting for it.
    pub async fn after_stored(
        self: &Arc<Self>,
        store: &Store,
        outcome: &ImportOutcome,
        build: &str,
        placement: &Placement,
        webhook: Option<String>,
    ) -> Result<(), String> {
        let key = (build.to_string(), placement.branch.clone());
        if !self.placed().contains(&key) {
            if let Err(e) = super::place(store, &outcome.run_ids, placement).await {
                let invalid = e
                    .downcast_ref::<store::Error>()
                    .is_some_and(|e| matches!(e, store::Error::Invalid(_)));
                if invalid {
                    return Err(format!("{e:#}"));
                }
                tracing::error!("placing uploaded runs {:?} failed: {e:#}", outcome.run_ids);
                return Ok(());
            }
            let mut placed = self.placed();
            if placed.len() >= PLACED_KEPT {
                placed.clear();
            }
            placed.insert(key);
        }
        self.queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Pending {
                run_ids: outcome.run_ids.clone(),
                metrics: outcome.history_metrics.clone(),
            });
        // One task waits for the turn at a time: uploads queued while it waits join its pass.
        if self.scheduled.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        // The pass uses the passes' own store (`self.store`), not the request's `store`.
        let passes = self.clone();
        runtime().spawn(async move {
            let rest_until = *passes.next_at.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(at) = rest_until {
                tokio::time::sleep_until(at).await;
            }
            let turn = passes.turn.clone().lock_owned().await;
            // One pass at a time on the whole database: servers sharing one would otherwise
            // read and re-analyse the same histories side by side, and each waits here while
            // more of its uploads join its next pass. The wait counts as this pass's time
            // when its rest is set: each server resting only after its own passes left the
            // database running one server's pass after another's, with detection taking its
            // share of the time per server rather than in all.
            let waited_from = Instant::now();
            let shared = passes.store.lock_named("history pass").await;
            // Cleared before the queue is taken: an upload queued after this starts the
            // next task.
            passes.scheduled.store(false, Ordering::Release);
            let group =
                std::mem::take(&mut *passes.queue.lock().unwrap_or_else(|e| e.into_inner()));
            if !group.is_empty() {
                pass(&passes.store, group, webhook).await;
                let rest = (waited_from.elapsed() * REST_PER_PASS).min(MAX_REST);
                *passes.next_at.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some(Instant::now() + rest);
            }
            if let Ok(lock) = shared {
                lock.release().await;
            }
            drop(turn);
        });
        Ok(())
    }

    fn placed(&self) -> std::sync::MutexGuard<'_, HashSet<(String, String)>> {
        self.placed.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn is_empty(&self) -> bool {
        self.queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
    }

    /// Waits until every queued upload's pass is done, or `limit` has passed; true when done.
    /// A server stopping waits here, and so do tests that read alerts after an upload.
    pub async fn settled(&self, limit: Duration) -> bool {
        let wait = async {
            loop {
                let turn = self.turn.lock().await;
                if self.is_empty() {
                    return;
                }
                drop(turn);
                // A pass task queued behind this one takes the turn first.
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        };
        tokio::time::timeout(limit, wait).await.is_ok()
    }
}

/// The passes' runtime, on a thread of its own started by the first pass of the process.
fn runtime() -> &'static tokio::runtime::Handle {
    static RUNTIME: OnceLock<tokio::runtime::Handle> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        const NAME: &str = "quiescent-history";
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .thread_name(NAME)
            .build()
            .expect("cannot build the history passes' runtime");
        store::runtime_thread(NAME, rt)
    })
}

/// One pass for a group of uploads, then the webhook.
async fn pass(store: &Store, group: Vec<Pending>, webhook: Option<String>) {
    let mut metrics: Vec<(i64, String)> = Vec::new();
    let mut unnamed: Vec<i64> = Vec::new();
    for p in group {
        match p.metrics {
            Some(m) => metrics.extend(m),
            None => unnamed.extend(p.run_ids),
        }
    }
    if let Err(e) = detect(store, &metrics, &unnamed).await {
        tracing::error!("change-point detection after upload failed: {e:#}");
    }
    if let Some(url) = webhook {
        let store = store.clone();
        tokio::spawn(async move {
            if let Err(e) =
                super::notify::send_pending(&store, &url, 5, Duration::from_millis(500)).await
            {
                tracing::warn!("webhook: {e:#}");
            }
        });
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
