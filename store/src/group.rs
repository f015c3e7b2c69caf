//! Group commit: imports that become ready to write while another holds this process's write
//! turn are written together in the next transaction, in one set of statements or else each
//! inside a savepoint, so that many small uploads cost one commit rather than one each, and an
//! import that fails is undone alone.
//!
//! Every import queues its job and then waits for the turn or its answer, whichever comes
//! first. Whoever gets the turn writes every job queued by then (its own may already have been
//! written by an earlier holder) and answers each one after the commit: an answer means the
//! data is stored. A job's task waits for the turn until its job is answered, so no job is
//! left queued without a writer to come.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use tokio::sync::{OwnedMutexGuard, oneshot};

use crate::group_batch;
use crate::import::{Finished, Prepared, Written, finish_in, stored_outcome};
use crate::import_rows::Known;
use crate::{Error, Store, Tx, with_tx};

/// One import waiting to be written, and where its answer goes.
struct Pending {
    job: Prepared,
    reply: oneshot::Sender<Result<Finished, Error>>,
}

/// The imports of this process waiting for the write turn.
#[derive(Default)]
pub(crate) struct Queue {
    waiting: Mutex<Vec<Pending>>,
    /// Groups written together so far ([`group_batch`]), for tests.
    together: AtomicU64,
    /// Group transactions begun so far, for tests.
    groups: AtomicU64,
}

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Queue")
    }
}

impl Queue {
    fn push(&self, p: Pending) {
        self.waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(p);
    }

    fn take(&self) -> Vec<Pending> {
        std::mem::take(&mut *self.waiting.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn len(&self) -> usize {
        self.waiting.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

/// The savepoint each import of a group is written in.
const SAVEPOINT: &str = "SAVEPOINT quiescent_import";
const RELEASE: &str = "RELEASE SAVEPOINT quiescent_import";
const UNDO: &str = "ROLLBACK TO SAVEPOINT quiescent_import";

impl Store {
    /// Writes `job` in the next group transaction and returns once that is committed.
    pub(crate) async fn commit_grouped(&self, job: Prepared) -> Result<Finished, Error> {
        let store = self.clone();
        // A task of its own: a caller that goes away (a client disconnecting) must neither
        // cancel a group holding other imports nor leave its job queued with no writer to come.
        let task = async move { store.submit(job).await };
        let handle = if self.is_postgres() {
            // Its sockets are driven by the server's runtime: a hop to another thread only
            // added a wake-up per statement there (4x1 uploads about 8% fewer per second).
            tokio::spawn(task)
        } else {
            writer_runtime().spawn(task)
        };
        handle
            .await
            .map_err(|e| Error::Write(format!("the write task ended: {e}")))?
    }

    async fn submit(&self, job: Prepared) -> Result<Finished, Error> {
        let (reply, mut answer) = oneshot::channel();
        self.queue.push(Pending { job, reply });
        // The answer may come before the turn: a holder of the turn wrote this job with its
        // group. Waiting for the turn all the same would answer each upload only after every
        // waiter before it had taken and passed on the turn, one task switch each.
        let turn = tokio::select! {
            biased;
            answered = &mut answer => return answered.map_err(|_| no_answer())?,
            turn = self.writer.clone().lock_owned() => turn,
        };
        if self.queue.len() == 0 {
            // An earlier holder of the turn wrote this job.
            drop(turn);
        } else {
            self.write_group(turn).await;
        }
        answer.await.map_err(|_| no_answer())?
    }

    /// Writes every queued job. The group is taken once the transaction has begun: with
    /// several servers on one database, beginning waits for the others' writers, and the
    /// uploads that arrive meanwhile join this group rather than wait for the next. Only the
    /// turn's holder takes from the queue, so what was seen queued is still there.
    async fn write_group(&self, turn: OwnedMutexGuard<()>) {
        let begun = self.begin_write_holding(turn).await;
        let group = self.queue.take();
        let mut tx = match begun {
            Ok(tx) => tx,
            Err(e) => return fail_all(group, &e),
        };
        let group = match refuse_revoked(&mut tx, group).await {
            Ok(group) => group,
            Err((group, e)) => return fail_all(group, &e),
        };
        self.queue.groups.fetch_add(1, Ordering::Relaxed);
        match write_together(&mut tx, &group).await {
            Together::Written(runs) => {
                self.queue.together.fetch_add(1, Ordering::Relaxed);
                let done = group
                    .into_iter()
                    .zip(runs)
                    .map(|(p, ids)| (p, Ok(Written::Runs(ids))));
                return self.answer_after_commit(tx, done.collect()).await;
            }
            Together::NotTried => {}
            // What the attempt wrote goes with the transaction; the group is written import
            // by import in a new one.
            Together::Undo => match self.begin_again(tx).await {
                Ok(again) => tx = again,
                Err(e) => return fail_all(group, &e),
            },
        }
        let mut known = Known::default();
        let mut done: Vec<(Pending, Result<Written, Error>)> = Vec::with_capacity(group.len());
        let mut rest = group.into_iter();
        while let Some(mut p) = rest.next() {
            let written = match run(&mut tx, SAVEPOINT).await {
                Ok(()) => finish_in(&mut tx, &mut p.job, &mut known).await,
                Err(e) => Err(e),
            };
            let end = match &written {
                Ok(Written::Runs(_)) => run(&mut tx, RELEASE).await,
                // Undone alone: the others' writes stay (an `Existing` import wrote its bytes).
                // The rows it wrote are gone, and with them what `known` learnt from it.
                _ => {
                    known = Known::default();
                    match run(&mut tx, UNDO).await {
                        Ok(()) => run(&mut tx, RELEASE).await,
                        Err(e) => Err(e),
                    }
                }
            };
            if let Err(e) = end {
                // The transaction itself is broken: nothing of the group is stored.
                let all = done.into_iter().map(|(p, _)| p);
                return fail_all(all.chain([p]).chain(rest), &e);
            }
            done.push((p, written));
        }
        self.answer_after_commit(tx, done).await;
    }

    /// Commits `tx` and answers each import with what was written for it, or all of them with
    /// the failure of the commit. Then, still holding the write turn, keeps SQLite's log short
    /// (see `wal`): the imports are answered first, as they are stored either way.
    async fn answer_after_commit(&self, tx: Tx, done: Vec<(Pending, Result<Written, Error>)>) {
        let turn = match tx.commit_holding().await {
            Ok(turn) => turn,
            Err(e) => return fail_all(done.into_iter().map(|(p, _)| p), &e),
        };
        for (Pending { job, reply }, written) in done {
            let answer = written.map(|w| match w {
                Written::Runs(ids) => Finished::Stored(stored_outcome(job, &ids)),
                Written::Existing(ids) => Finished::Existing(ids),
            });
            // A caller that went away needs no answer; its import is stored all the same.
            let _ = reply.send(answer);
        }
        if let crate::engine::Backend::Sqlite(pool) = &self.backend
            && let Err(e) = self.log.restart_if_long(pool).await
        {
            tracing::warn!("restarting the write-ahead log failed: {e}");
        }
        drop(turn);
    }
}

/// Answers the imports whose upload token is revoked by now with [`Error::Revoked`], storing
/// nothing of them, and returns the others. The server lets a token it has looked up lately
/// through without asking the database again (`quiescent::tokens`); this check, one statement
/// per group in the transaction that would store the runs, is what keeps an upload of a token
/// revoked before that transaction from being stored.
async fn refuse_revoked(
    tx: &mut Tx,
    group: Vec<Pending>,
) -> Result<Vec<Pending>, (Vec<Pending>, Error)> {
    let mut ids: Vec<i64> = group.iter().filter_map(|p| p.job.meta.token_id).collect();
    ids.sort_unstable();
    ids.dedup();
    let revoked = match crate::tokens::revoked_among(tx, &ids).await {
        Ok(revoked) => revoked,
        Err(e) => return Err((group, e)),
    };
    if revoked.is_empty() {
        return Ok(group);
    }
    let mut kept = Vec::with_capacity(group.len());
    for p in group {
        let name = p
            .job
            .meta
            .token_id
            .and_then(|id| revoked.iter().find(|(r, _)| *r == id));
        match name {
            Some((_, name)) => {
                let _ = p.reply.send(Err(Error::Revoked {
                    token: name.clone(),
                }));
            }
            None => kept.push(p),
        }
    }
    Ok(kept)
}

/// What [`write_together`] did.
enum Together {
    /// The run ids of each import.
    Written(Vec<Vec<i64>>),
    /// Nothing: the group is to be written import by import.
    NotTried,
    /// It gave up midway (see [`group_batch`]): the transaction holds part of the group and
    /// is to be rolled back before the group is written import by import.
    Undo,
}

/// Writes the whole group in one set of statements when it can ([`group_batch`]). It is the
/// transaction's first write, so giving up undoes the transaction rather than a savepoint: a
/// savepoint and its release were two statements more in every group (two hand-offs to the
/// connection's thread and back) for the rare group that gives up. 4x1 uploads' median ratio
/// to `/healthz` 1/18.7, 1/19.5 and 1/19.7 against 1/19.6, 1/20.0 and 1/23.7 with them, in
/// three alternating pairs of 3 s runs.
async fn write_together(tx: &mut Tx, group: &[Pending]) -> Together {
    let jobs: Vec<&Prepared> = group.iter().map(|p| &p.job).collect();
    if !group_batch::batchable(&jobs) {
        return Together::NotTried;
    }
    match group_batch::write_batch(tx, &jobs).await {
        Ok(Some(runs)) => Together::Written(runs),
        Ok(None) | Err(_) => Together::Undo,
    }
}

impl Store {
    /// Rolls `tx` back and begins another write transaction, keeping the write turn.
    async fn begin_again(&self, tx: Tx) -> Result<Tx, Error> {
        match tx.rollback_holding().await? {
            Some(turn) => self.begin_write_holding(turn).await,
            None => self.begin_write().await,
        }
    }
}

async fn run(tx: &mut Tx, sql: &'static str) -> Result<(), Error> {
    with_tx!(tx, |t| {
        sqlx::query(sql).execute(&mut **t).await?;
    });
    Ok(())
}

fn no_answer() -> Error {
    Error::Write("the group write ended without an answer".into())
}

/// Answers every job of a group whose transaction failed with that failure.
fn fail_all(group: impl IntoIterator<Item = Pending>, e: &Error) {
    for p in group {
        let _ = p.reply.send(Err(Error::Write(format!(
            "writing a group of imports failed: {e}"
        ))));
    }
}

#[cfg(feature = "test-support")]
impl Store {
    /// Holds this process's write turn until the guard is dropped: imports then queue behind
    /// it (tests of the group commit).
    pub async fn hold_write_turn(&self) -> OwnedMutexGuard<()> {
        self.writer.clone().lock_owned().await
    }

    /// Whether a writer of this process holds the write turn.
    pub fn write_turn_taken(&self) -> bool {
        self.writer.try_lock().is_err()
    }

    /// Imports queued for the write turn.
    pub fn queued_imports(&self) -> usize {
        self.queue.len()
    }

    /// Group transactions this process has begun so far (one per group, whatever its size).
    pub fn groups_written(&self) -> u64 {
        self.queue.groups.load(Ordering::Relaxed)
    }

    /// Begins a write transaction on the database without this process's turn, as another
    /// server's writer would: this process's writers wait for the database until it is
    /// dropped (rolled back).
    pub async fn hold_database_write_lock(&self) -> Result<DatabaseWriteLock, Error> {
        Ok(DatabaseWriteLock {
            _tx: self.begin_other_database_write().await?,
        })
    }

    /// Groups of imports written together in one set of statements so far.
    pub fn groups_written_together(&self) -> u64 {
        self.queue.together.load(Ordering::Relaxed)
    }
}

/// Another writer's transaction on the database, held until dropped
/// ([`Store::hold_database_write_lock`]).
#[cfg(feature = "test-support")]
pub struct DatabaseWriteLock {
    _tx: crate::engine::TxInner,
}

/// The runtime SQLite's groups are written on: one thread of its own. A group's dozen
/// statements are each a hand-off to the connection's thread and back; on the server's
/// runtime, each wake-up of the writer waited behind the requests being read and parsed
/// there, and the writer (the one thing every upload passes through) was busy 96% of the time
/// mostly waiting. On its own thread the scheduler runs it as soon as a statement is done:
/// uploads of 3,200 samples 87 -> 121 per second with 16 clients.
///
/// It has timers but no I/O driver: what runs on it talks to SQLite's connection threads
/// through channels only. An idle runtime without one sleeps on a futex, which a statement's
/// answer wakes directly, where one with it sleeps in `epoll` and is woken through an
/// eventfd. 4x1 uploads with it: 1,454/s against 1,381/s, 1,064 us of CPU each against 1,100
/// (medians of 10 alternating runs; faster in 8, less CPU in 7).
///
/// Its thread is kept on one CPU ([`crate::runtime::writer_cpu`]), and the store's write
/// connection is opened from it ([`open_on_writer`]), so that the connection's thread, which
/// inherits the CPU, runs where the writer does.
fn writer_runtime() -> &'static tokio::runtime::Handle {
    static WRITER: OnceLock<tokio::runtime::Handle> = OnceLock::new();
    WRITER.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("cannot build the writer's runtime");
        crate::runtime::runtime_thread_on("quiescent-writer", rt, crate::runtime::writer_cpu())
    })
}

/// Opens `writes`' one connection from the writer's thread (see [`writer_runtime`]): SQLite's
/// connection thread is started by whoever opens the connection, and takes that thread's CPU.
pub(crate) async fn open_on_writer(writes: &sqlx::SqlitePool) -> Result<(), Error> {
    let pool = writes.clone();
    writer_runtime()
        .spawn(async move { pool.acquire().await.map(drop) })
        .await
        .map_err(|e| Error::Write(format!("opening the write connection ended: {e}")))??;
    Ok(())
}
