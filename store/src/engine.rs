//! The engines behind a [`Store`]: SQLite (the embedded default) and PostgreSQL (the shared
//! store), one pool or transaction type each.
//!
//! SQL is written once where both engines accept it (`$1` placeholders, `ON CONFLICT`,
//! `RETURNING`, BIGINT ids), and the statement is compiled once per engine by [`with_pool!`] and
//! [`with_tx!`], which expand their body in a `match` arm per engine: every type a query binds or
//! decodes is then a concrete sqlx type, never a generic bound. Where the engines' SQL differs
//! the caller asks [`Store::is_postgres`]. Multi-row inserts are one such place: SQLite finds a
//! numbered placeholder's name by a walk of a list, and sqlx asks each one's name when binding,
//! so a statement of n `$N` placeholders costs n² there; SQLite gets anonymous `?` instead.

use sqlx::{PgPool, Postgres, Sqlite, SqlitePool, Transaction};

use crate::{Error, Store};

/// The engine behind a [`Store`]; one variant per supported database.
#[derive(Clone, Debug)]
pub(crate) enum Backend {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

/// A transaction of either engine: a write transaction begun by [`Store::begin_write`] holds
/// this process's turn to write until it ends.
pub(crate) struct Tx {
    pub(crate) inner: TxInner,
    turn: Option<tokio::sync::OwnedMutexGuard<()>>,
}

/// The engine's transaction inside a [`Tx`].
pub(crate) enum TxInner {
    Sqlite(Transaction<'static, Sqlite>),
    Postgres(Transaction<'static, Postgres>),
}

impl From<TxInner> for Tx {
    /// A transaction that holds no turn (a read snapshot).
    fn from(inner: TxInner) -> Tx {
        Tx { inner, turn: None }
    }
}

/// The key of the PostgreSQL advisory lock every write transaction takes (`"quiesce"` in
/// ASCII): writers queue on it as SQLite's `BEGIN IMMEDIATE` makes them queue, so the import's
/// id allocation and duplicate checks stay correct with any number of servers on one database.
pub(crate) const WRITE_LOCK: i64 = 0x0071_7569_6573_6365;

/// Runs `$body` with `$pool` bound to the store's pool, compiled once per engine.
macro_rules! with_pool {
    ($store:expr, |$pool:ident| $body:expr) => {
        match &$store.backend {
            $crate::engine::Backend::Sqlite($pool) => $body,
            $crate::engine::Backend::Postgres($pool) => $body,
        }
    };
}

/// Runs `$body` with `$tx` bound to the transaction (`&mut Transaction<'static, _>`; statements
/// execute on `&mut **$tx`), compiled once per engine.
macro_rules! with_tx {
    ($t:expr, |$tx:ident| $body:expr) => {
        match &mut $t.inner {
            $crate::engine::TxInner::Sqlite($tx) => $body,
            $crate::engine::TxInner::Postgres($tx) => $body,
        }
    };
}

/// `SELECT` of the id after the largest in `$table`: what SQLite gives a new row of a table
/// whose `INTEGER PRIMARY KEY` is not `AUTOINCREMENT`, taken by a writer that gives the ids
/// itself. Inside a write transaction no other writer can take it.
macro_rules! next_id_sql {
    ($table:literal) => {
        concat!("SELECT COALESCE(MAX(id), 0) + 1 FROM ", $table)
    };
}

pub(crate) use {next_id_sql, with_pool, with_tx};

/// The next id: `given` when the caller read it already, else the id after the largest, from
/// `sql` ([`next_id_sql!`]).
pub(crate) async fn next_id(
    tx: &mut Tx,
    given: Option<i64>,
    sql: &'static str,
) -> Result<i64, Error> {
    if let Some(next) = given {
        return Ok(next);
    }
    Ok(with_tx!(&mut *tx, |t| {
        sqlx::query_scalar(sql).fetch_one(&mut **t).await?
    }))
}

/// `$first, $first+1, ...`: `n` numbered placeholders, which both engines accept.
pub(crate) fn placeholders(first: usize, n: usize) -> String {
    let marks: Vec<String> = (first..first + n).map(|i| format!("${i}")).collect();
    marks.join(", ")
}

/// A write transaction of one engine that holds this process's write turn until it ends
/// ([`Store::begin_write_on`]). Statements run on `&mut *tx`, as on a sqlx transaction.
pub(crate) struct PoolWrite<DB: sqlx::Database> {
    tx: Transaction<'static, DB>,
    _turn: tokio::sync::OwnedMutexGuard<()>,
}

impl<DB: sqlx::Database> std::ops::Deref for PoolWrite<DB> {
    type Target = DB::Connection;
    fn deref(&self) -> &DB::Connection {
        &self.tx
    }
}

impl<DB: sqlx::Database> std::ops::DerefMut for PoolWrite<DB> {
    fn deref_mut(&mut self) -> &mut DB::Connection {
        &mut self.tx
    }
}

impl<DB: sqlx::Database> PoolWrite<DB> {
    pub(crate) async fn commit(self) -> Result<(), Error> {
        Ok(self.tx.commit().await?)
    }
}

/// A pool that begins write transactions holding the database's write lock until they end:
/// SQLite's `BEGIN IMMEDIATE`, or PostgreSQL's transaction-scoped advisory lock
/// [`WRITE_LOCK`].
///
/// On SQLite a store's write transactions all run on one connection of their own
/// ([`WritePool::for_writes`]). In WAL mode a connection drops its whole page cache when
/// another connection wrote since it last read; the store's writes taking whichever connection
/// of the pool was free (the readers' too) began each with a cold cache and read the
/// indexes' pages again from the file. On one connection each write starts where the last
/// one left off. In 10 alternating pairs of runs (`bench_upload`, 3 s phases) the 4x1 uploads
/// were faster in 9, by a median of 22%; the 4x200 uploads did not change beyond the spread.
pub(crate) trait WritePool {
    type Db: sqlx::Database;
    fn begin_write(
        &self,
    ) -> impl Future<Output = Result<Transaction<'static, Self::Db>, Error>> + Send;

    /// The pool `store`'s write transactions run on, for this engine pool of `store`.
    fn for_writes<'a>(&'a self, store: &'a Store) -> &'a Self;
}

impl WritePool for SqlitePool {
    type Db = Sqlite;
    async fn begin_write(&self) -> Result<Transaction<'static, Sqlite>, Error> {
        Ok(self.begin_with("BEGIN IMMEDIATE").await?)
    }

    fn for_writes<'a>(&'a self, store: &'a Store) -> &'a Self {
        store.sqlite_writes.as_ref().unwrap_or(self)
    }
}

impl WritePool for PgPool {
    type Db = Postgres;
    async fn begin_write(&self) -> Result<Transaction<'static, Postgres>, Error> {
        let mut tx = self.begin().await?;
        sqlx::query("SELECT pg_advisory_xact_lock($1)")
            .bind(WRITE_LOCK)
            .execute(&mut *tx)
            .await?;
        Ok(tx)
    }

    fn for_writes<'a>(&'a self, _: &'a Store) -> &'a Self {
        self
    }
}

impl Store {
    /// Begins a write transaction (see [`WritePool`]) once this process's earlier writers are
    /// done: they queue here in arrival order, holding no connection, rather than in SQLite's
    /// busy handler or on PostgreSQL's lock with a connection each. Work done before (an
    /// import's parsing) runs alongside.
    pub(crate) async fn begin_write(&self) -> Result<Tx, Error> {
        let turn = self.writer.clone().lock_owned().await;
        self.begin_write_holding(turn).await
    }

    /// [`Store::begin_write`] as the engine's own transaction on `pool`, for writes whose
    /// statements are written against one engine's types: it holds the same turn, so that they
    /// queue here rather than in SQLite's busy handler, which polls.
    pub(crate) async fn begin_write_on<P: WritePool>(
        &self,
        pool: &P,
    ) -> Result<PoolWrite<P::Db>, Error> {
        let turn = self.writer.clone().lock_owned().await;
        Ok(PoolWrite {
            tx: pool.for_writes(self).begin_write().await?,
            _turn: turn,
        })
    }

    /// [`Store::begin_write`] for a caller that already holds the turn.
    pub(crate) async fn begin_write_holding(
        &self,
        turn: tokio::sync::OwnedMutexGuard<()>,
    ) -> Result<Tx, Error> {
        Ok(Tx {
            inner: self.begin_database_write().await?,
            turn: Some(turn),
        })
    }

    /// The engine's write transaction ([`WritePool`]) without this process's turn: what the
    /// turn's holder begins, or (in tests) what another server's writer would hold.
    pub(crate) async fn begin_database_write(&self) -> Result<TxInner, Error> {
        self.begin_database_write_on_own(true).await
    }

    /// A write transaction on the engine's pool rather than this store's writing connection:
    /// what another server's writer holds (tests).
    #[cfg(feature = "test-support")]
    pub(crate) async fn begin_other_database_write(&self) -> Result<TxInner, Error> {
        self.begin_database_write_on_own(false).await
    }

    /// [`Store::begin_database_write`], on the writes' own connection ([`WritePool::for_writes`])
    /// or, with `own` false, on the engine's pool.
    async fn begin_database_write_on_own(&self, own: bool) -> Result<TxInner, Error> {
        Ok(match &self.backend {
            Backend::Sqlite(p) => {
                let p = if own { p.for_writes(self) } else { p };
                TxInner::Sqlite(p.begin_write().await?)
            }
            Backend::Postgres(p) => TxInner::Postgres(p.begin_write().await?),
        })
    }

    /// True on PostgreSQL, for the few statements whose SQL differs between the engines.
    pub fn is_postgres(&self) -> bool {
        matches!(self.backend, Backend::Postgres(_))
    }

    /// The engine's name, as `serve` logs it and `/healthz` may report it.
    pub fn engine(&self) -> &'static str {
        match self.backend {
            Backend::Sqlite(_) => "sqlite",
            Backend::Postgres(_) => "postgres",
        }
    }
}

impl Tx {
    /// True on PostgreSQL (see [`Store::is_postgres`]).
    pub(crate) fn is_postgres(&self) -> bool {
        matches!(self.inner, TxInner::Postgres(_))
    }

    pub(crate) async fn commit(self) -> Result<(), Error> {
        self.commit_holding().await.map(drop)
    }

    /// Commits, and hands back this process's write turn when the transaction held it, for
    /// work that must still exclude the process's other writers (see `wal`).
    pub(crate) async fn commit_holding(
        self,
    ) -> Result<Option<tokio::sync::OwnedMutexGuard<()>>, Error> {
        match self.inner {
            TxInner::Sqlite(tx) => tx.commit().await?,
            TxInner::Postgres(tx) => tx.commit().await?,
        }
        Ok(self.turn)
    }

    pub(crate) async fn rollback(self) -> Result<(), Error> {
        self.rollback_holding().await.map(drop)
    }

    /// Rolls back, and hands back this process's write turn when the transaction held it.
    pub(crate) async fn rollback_holding(
        self,
    ) -> Result<Option<tokio::sync::OwnedMutexGuard<()>>, Error> {
        match self.inner {
            TxInner::Sqlite(tx) => tx.rollback().await?,
            TxInner::Postgres(tx) => tx.rollback().await?,
        }
        Ok(self.turn)
    }
}

/// A `LIMIT` to bind for `n`: SQLite takes a negative limit as none, PostgreSQL refuses it, so
/// a negative `n` binds the largest limit on both.
pub(crate) fn limit(n: i64) -> i64 {
    if n < 0 { i64::MAX } else { n }
}

/// `col` starts with parameter `$n`, ASCII case ignored: SQLite's `LIKE` ignores it,
/// PostgreSQL's needs `ILIKE` (without an escape character, as SQLite's `LIKE` has none).
pub(crate) fn starts_with(postgres: bool, col: &str, n: usize) -> String {
    if postgres {
        format!("{col} ILIKE ${n} || '%' ESCAPE ''")
    } else {
        format!("{col} LIKE ${n} || '%'")
    }
}

/// The ids of a JSON array bound as parameter `$n`, as a subquery for `IN`: `json_each` on
/// SQLite, `jsonb_array_elements_text` on PostgreSQL (one parameter whatever the count).
pub(crate) fn json_ids(postgres: bool, n: usize) -> String {
    if postgres {
        format!("(SELECT value::BIGINT FROM jsonb_array_elements_text(${n}::jsonb))")
    } else {
        format!("(SELECT value FROM json_each(${n}))")
    }
}

#[cfg(feature = "test-support")]
impl Store {
    /// Marks the connection a write transaction runs on, by both ways of beginning one
    /// ([`Store::begin_write`] and [`Store::begin_write_on`]), with a temporary table (which
    /// only its own connection sees): whether each found the mark already there (tests of the
    /// writes' own connection). SQLite only.
    pub async fn mark_write_connections(&self) -> Result<(bool, bool), Error> {
        const MARKED: &str = "SELECT COUNT(*) FROM temp.sqlite_master WHERE name = 'write_mark'";
        const MARK: &str = "CREATE TEMP TABLE IF NOT EXISTS write_mark (x)";
        let Backend::Sqlite(pool) = &self.backend else {
            return Err(Error::Invalid("a SQLite store only".into()));
        };
        let mut tx = self.begin_write().await?;
        let first: i64 = with_tx!(tx, |t| {
            let n = sqlx::query_scalar(MARKED).fetch_one(&mut **t).await?;
            sqlx::query(MARK).execute(&mut **t).await?;
            n
        });
        tx.commit().await?;
        let mut tx = self.begin_write_on(pool).await?;
        let second: i64 = sqlx::query_scalar(MARKED).fetch_one(&mut *tx).await?;
        sqlx::query(MARK).execute(&mut *tx).await?;
        tx.commit().await?;
        Ok((first > 0, second > 0))
    }
}
