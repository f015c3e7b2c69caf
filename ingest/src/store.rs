//! The import into SQLite: one run (or one run per parameter combination of a sweep) per call,
//! in one transaction, with the raw files kept byte for byte.
//!
//! Parsing runs on a blocking thread and streams batches of samples over a bounded channel to
//! the transaction, so memory stays flat whatever the size of the input.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use sha2::{Digest, Sha256};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{AssertSqlSafe, Row, Sqlite, SqlitePool, Transaction};
use tokio::sync::mpsc;

use crate::error::Error;
use crate::model::{FastMap, SeriesId, SeriesKey, SeriesSpec, Sink, Warning};

/// The embedded migrations.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations");

/// Bytes per stored artifact chunk.
const CHUNK: usize = 1 << 20;
/// Samples per channel message and per multi-row INSERT.
const BATCH: usize = 4096;
/// Rows per INSERT statement (3 bound values each, well under SQLite's variable limit).
const ROWS_PER_STMT: usize = 500;
/// Warnings kept per file; the count beyond is still reported.
const MAX_WARNINGS_KEPT: usize = 1000;

/// Opens (creating if needed) the database at `path` with WAL, foreign keys and a busy timeout,
/// and applies the migrations. `path` may be a file path or a `sqlite:` URL.
pub async fn open(path: &str) -> Result<SqlitePool, Error> {
    let url = if path.starts_with("sqlite:") {
        path.to_string()
    } else {
        format!("sqlite://{path}")
    };
    let opts = SqliteConnectOptions::from_str(&url)?
        .create_if_missing(true)
        .journal_mode(SqliteJournalMode::Wal)
        .synchronous(SqliteSynchronous::Normal)
        .foreign_keys(true)
        .busy_timeout(Duration::from_secs(30));
    let pool = SqlitePoolOptions::new()
        .max_connections(8)
        .connect_with(opts)
        .await?;
    MIGRATOR.run(&pool).await?;
    Ok(pool)
}

/// Unix seconds now.
pub fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// The kernel under test, as given on import.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BuildMeta {
    pub label: String,
    pub commit: Option<String>,
    pub kernel_version: Option<String>,
    pub config: Option<String>,
    pub cmdline: Option<String>,
}

/// Everything about a run except its files.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunMeta {
    pub build: BuildMeta,
    pub machine: String,
    pub machine_facts: BTreeMap<String, String>,
    pub benchmark: String,
    pub params: BTreeMap<String, String>,
    /// The upload token that sent it, if any.
    pub token_id: Option<i64>,
    /// Keep only the series of this labelled block of the input (`original`, `apply patch`,
    /// `BEFORE`...), stored without the label: one file holding before and after results
    /// is imported as two runs of two builds. An empty string selects the unlabelled series.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<String>,
}

/// Where an input file's bytes come from.
#[derive(Debug, Clone)]
pub enum Source {
    Path(PathBuf),
    Bytes(Arc<[u8]>),
}

/// One input file of a run.
#[derive(Debug, Clone)]
pub struct InputFile {
    /// The name stored with the artifact (and that parsers see, e.g. `function3`).
    pub name: String,
    pub source: Source,
    /// A forced format; `None` sniffs the content.
    pub format: Option<String>,
}

impl InputFile {
    pub fn path(path: impl Into<PathBuf>, format: Option<String>) -> Self {
        let path = path.into();
        InputFile {
            name: path.display().to_string(),
            source: Source::Path(path),
            format,
        }
    }

    pub fn bytes(
        name: impl Into<String>,
        bytes: impl Into<Arc<[u8]>>,
        format: Option<String>,
    ) -> Self {
        InputFile {
            name: name.into(),
            source: Source::Bytes(bytes.into()),
            format,
        }
    }

    fn open(&self) -> Result<Box<dyn Read + Send>, Error> {
        match &self.source {
            Source::Path(p) => Ok(Box::new(std::fs::File::open(p).map_err(|source| {
                Error::Io {
                    path: p.clone(),
                    source,
                }
            })?)),
            Source::Bytes(b) => Ok(Box::new(std::io::Cursor::new(b.clone()))),
        }
    }

    fn display_path(&self) -> PathBuf {
        PathBuf::from(&self.name)
    }
}

/// What an import did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ImportOutcome {
    /// The runs created (or found, when `created` is false), one per parameter combination.
    pub run_ids: Vec<i64>,
    /// False when the same content with the same metadata was already stored.
    pub created: bool,
    pub series: u64,
    pub samples: u64,
    /// Warnings per file name.
    pub warnings: Vec<(String, Warning)>,
    pub warning_count: u64,
    /// The format of each file, in order.
    pub formats: Vec<(String, String)>,
}

enum Msg {
    Series(SeriesId, SeriesSpec),
    Samples(Vec<(SeriesId, f64)>),
    Meta(String, String),
    Warning(Warning),
    Extra(String, serde_json::Value),
}

/// Messages per channel send: a trace_stat profile declares a series per row, and one
/// thread hand-off per series would cost more than its INSERT.
const MSGS_PER_SEND: usize = 512;

/// A sink that forwards everything to the importing transaction in batches.
struct ChannelSink {
    tx: mpsc::Sender<Vec<Msg>>,
    index: FastMap<SeriesKey, SeriesId>,
    buf: Vec<(SeriesId, f64)>,
    out: Vec<Msg>,
    closed: bool,
}

impl ChannelSink {
    fn send(&mut self, msg: Msg) {
        self.out.push(msg);
        if self.out.len() >= MSGS_PER_SEND {
            self.ship();
        }
    }

    /// Hands the queued messages to the transaction.
    fn ship(&mut self) {
        if self.out.is_empty() {
            return;
        }
        let batch = std::mem::take(&mut self.out);
        if !self.closed && self.tx.blocking_send(batch).is_err() {
            // The receiver gave up (an error on the database side); parsing continues to its
            // end cheaply and the import reports the database error.
            self.closed = true;
        }
    }

    /// Queues the buffered samples; ships when a whole batch of samples is waiting.
    fn flush(&mut self) {
        if !self.buf.is_empty() {
            let full = self.buf.len() >= BATCH;
            let batch = std::mem::replace(&mut self.buf, Vec::with_capacity(BATCH));
            self.send(Msg::Samples(batch));
            if full {
                self.ship();
            }
        }
    }

    /// Everything, at the end of the input.
    fn finish(&mut self) {
        self.flush();
        self.ship();
    }
}

impl Sink for ChannelSink {
    fn series(&mut self, spec: &SeriesSpec) -> SeriesId {
        if let Some(&id) = self.index.get(&spec.key) {
            return id;
        }
        let id = self.index.len();
        self.index.insert(spec.key.clone(), id);
        self.flush();
        self.send(Msg::Series(id, spec.clone()));
        id
    }

    fn sample(&mut self, id: SeriesId, value: f64) {
        self.buf.push((id, value));
        if self.buf.len() >= BATCH {
            self.flush();
        }
    }

    fn meta(&mut self, key: &str, value: String) {
        self.flush();
        self.send(Msg::Meta(key.to_string(), value));
    }

    fn warning(&mut self, warning: Warning) {
        self.flush();
        self.send(Msg::Warning(warning));
    }

    fn extra(&mut self, key: &str, value: serde_json::Value) {
        self.flush();
        self.send(Msg::Extra(key.to_string(), value));
    }
}

/// Counts bytes read, for progress bars.
struct Counting<R> {
    inner: R,
    counter: Option<Arc<AtomicU64>>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(c) = &self.counter {
            c.fetch_add(n as u64, Ordering::Relaxed);
        }
        Ok(n)
    }
}

/// Canonical `k=v&k=v` form of parameters (sorted by key).
pub fn params_key(params: &BTreeMap<String, String>) -> String {
    params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// The series of one run being written: key -> slot in [`Slots`].
struct RunState {
    run_id: i64,
    series: FastMap<SeriesKey, usize>,
}

/// Every series being written, by slot: database id, owning run, next sample index. Samples
/// find their slot through a vector indexed by the parser's series id, so the per-sample
/// path does no hashing.
#[derive(Default)]
struct Slots {
    db_id: Vec<i64>,
    run_id: Vec<i64>,
    next_idx: Vec<i64>,
}

/// A series row waiting for its batched INSERT.
struct PendingSeries {
    id: i64,
    run_id: i64,
    spec: SeriesSpec,
}

/// Imports one run from `files` in one transaction. `progress`, when given, counts the input
/// bytes parsed so far.
pub async fn import_run(
    pool: &SqlitePool,
    meta: &RunMeta,
    files: &[InputFile],
    progress: Option<Arc<AtomicU64>>,
) -> Result<ImportOutcome, Error> {
    validate_meta(meta)?;
    if files.is_empty() {
        return Err(Error::Invalid("no input files".into()));
    }
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;

    // Pass 1: hash every file and store its bytes (content-addressed).
    let mut artifacts = Vec::with_capacity(files.len());
    for f in files {
        artifacts.push(store_artifact(&mut tx, f).await?);
    }
    let import_hash = import_hash(meta, files, &artifacts);
    let existing: Vec<i64> =
        sqlx::query_scalar("SELECT id FROM runs WHERE import_hash = ? ORDER BY id")
            .bind(&import_hash)
            .fetch_all(&mut *tx)
            .await?;
    if !existing.is_empty() {
        tx.rollback().await?;
        return existing_outcome(pool, existing).await;
    }

    let build_id = upsert_build(&mut tx, &meta.build).await?;
    let machine_id = upsert_machine(&mut tx, &meta.machine, &meta.machine_facts).await?;

    // Pass 2: parse each file and stream its series into the run(s).
    let created_at = now();
    let mut runs: BTreeMap<String, RunState> = BTreeMap::new();
    let mut slots = Slots::default();
    // Series ids are allocated here rather than by SQLite: the transaction holds the write
    // lock (BEGIN IMMEDIATE), so nobody else can take them, and series rows can then be
    // inserted in multi-row batches.
    let mut next_series_id: i64 =
        sqlx::query_scalar::<_, i64>("SELECT COALESCE(MAX(id), 0) + 1 FROM series")
            .fetch_one(&mut *tx)
            .await?;
    let mut pending_series: Vec<PendingSeries> = Vec::new();
    let mut outcome = ImportOutcome {
        run_ids: Vec::new(),
        created: true,
        series: 0,
        samples: 0,
        warnings: Vec::new(),
        warning_count: 0,
        formats: Vec::new(),
    };
    for (seq, (file, artifact_id)) in files.iter().zip(&artifacts).enumerate() {
        let (tx_msgs, mut rx) = mpsc::channel::<Vec<Msg>>(4);
        let reader = file.open()?;
        let name = file.display_path();
        let format = file.format.clone();
        let counter = progress.clone();
        let parse = tokio::task::spawn_blocking(move || {
            let mut sink = ChannelSink {
                tx: tx_msgs,
                index: FastMap::default(),
                buf: Vec::with_capacity(BATCH),
                out: Vec::new(),
                closed: false,
            };
            let reader = Counting {
                inner: reader,
                counter,
            };
            let r = crate::parse_reader(&name, reader, format.as_deref(), &mut sink);
            sink.finish();
            r
        });

        // Parser series id -> slot; None for series of other blocks.
        let mut local: Vec<Option<usize>> = Vec::new();
        let mut file_meta = BTreeMap::new();
        let mut file_warnings = Vec::new();
        let mut warning_count = 0u64;
        let mut extra = serde_json::Map::new();
        let mut pending: Vec<(i64, i64, f64)> = Vec::with_capacity(BATCH);
        let mut db_err: Option<Error> = None;
        let mut inbox = Vec::new().into_iter();
        loop {
            let msg = match inbox.next() {
                Some(m) => m,
                None => match rx.recv().await {
                    Some(batch) => {
                        inbox = batch.into_iter();
                        continue;
                    }
                    None => break,
                },
            };
            if db_err.is_some() {
                continue;
            }
            let r: Result<(), Error> = async {
                match msg {
                    Msg::Series(id, mut spec) => {
                        if let Some(block) = &meta.block {
                            // An empty block name selects the series that carry no label
                            // (results printed before the first label line).
                            let want = Some(block.as_str()).filter(|b| !b.is_empty());
                            if spec.key.label.as_deref() != want {
                                return Ok(());
                            }
                            spec.key.label = None;
                        }
                        let mut params = meta.params.clone();
                        params.extend(spec.key.params.clone());
                        let pkey = params_key(&params);
                        if !runs.contains_key(&pkey) {
                            let run_id = insert_run(
                                &mut tx,
                                build_id,
                                machine_id,
                                meta,
                                &params,
                                &pkey,
                                &import_hash,
                                created_at,
                            )
                            .await?;
                            runs.insert(
                                pkey.clone(),
                                RunState {
                                    run_id,
                                    series: FastMap::default(),
                                },
                            );
                        }
                        let run = runs.get_mut(&pkey).expect("inserted above");
                        let slot = match run.series.get(&spec.key) {
                            Some(&slot) => slot,
                            None => {
                                let slot = slots.db_id.len();
                                slots.db_id.push(next_series_id);
                                slots.run_id.push(run.run_id);
                                slots.next_idx.push(0);
                                run.series.insert(spec.key.clone(), slot);
                                pending_series.push(PendingSeries {
                                    id: next_series_id,
                                    run_id: run.run_id,
                                    spec,
                                });
                                next_series_id += 1;
                                if pending_series.len() >= SERIES_PER_STMT {
                                    insert_series(&mut tx, &pending_series).await?;
                                    pending_series.clear();
                                }
                                slot
                            }
                        };
                        if local.len() <= id {
                            local.resize(id + 1, None);
                        }
                        local[id] = Some(slot);
                    }
                    Msg::Samples(batch) => {
                        for (id, v) in batch {
                            // Series of other blocks were not declared: skip their samples.
                            let Some(Some(slot)) = local.get(id).copied() else {
                                continue;
                            };
                            pending.push((slots.db_id[slot], slots.next_idx[slot], v));
                            slots.next_idx[slot] += 1;
                            if pending.len() >= BATCH {
                                // Samples reference their series: write pending series first.
                                insert_series(&mut tx, &pending_series).await?;
                                pending_series.clear();
                                insert_samples(&mut tx, &pending).await?;
                                outcome.samples += pending.len() as u64;
                                pending.clear();
                            }
                        }
                    }
                    Msg::Meta(k, v) => {
                        file_meta.insert(k, v);
                    }
                    Msg::Warning(w) => {
                        warning_count += 1;
                        if file_warnings.len() < MAX_WARNINGS_KEPT {
                            file_warnings.push(w);
                        }
                    }
                    Msg::Extra(k, v) => {
                        extra.insert(k, v);
                    }
                }
                Ok(())
            }
            .await;
            if let Err(e) = r {
                db_err = Some(e);
            }
        }
        let summary = parse
            .await
            .map_err(|e| Error::Invalid(format!("parser thread failed: {e}")))??;
        if let Some(e) = db_err {
            return Err(e);
        }
        insert_series(&mut tx, &pending_series).await?;
        pending_series.clear();
        if !pending.is_empty() {
            insert_samples(&mut tx, &pending).await?;
            outcome.samples += pending.len() as u64;
        }
        if local.iter().all(Option::is_none) {
            if let Some(block) = &meta.block {
                return Err(Error::Invalid(format!(
                    "{}: no block labelled {block:?} in this file",
                    file.name
                )));
            }
            return Err(Error::Parse {
                path: file.display_path(),
                format: summary.format,
                source: crate::ParseError::nothing("measurement"),
            });
        }
        // Attach the artifact to every run this file fed.
        let mut fed: Vec<i64> = local
            .iter()
            .flatten()
            .map(|&slot| slots.run_id[slot])
            .collect();
        fed.sort_unstable();
        fed.dedup();
        let meta_json = serde_json::to_string(&file_meta).unwrap_or_else(|_| "{}".into());
        let warnings_json = serde_json::to_string(&file_warnings).unwrap_or_else(|_| "[]".into());
        let extra_json = serde_json::to_string(&extra).unwrap_or_else(|_| "{}".into());
        for run_id in fed {
            sqlx::query(
                "INSERT INTO run_artifacts (run_id, artifact_id, seq, file_name, format, meta_json, warnings_json, warning_count, extra_json) \
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(run_id)
            .bind(artifact_id)
            .bind(seq as i64)
            .bind(&file.name)
            .bind(summary.format)
            .bind(&meta_json)
            .bind(&warnings_json)
            .bind(warning_count as i64)
            .bind(&extra_json)
            .execute(&mut *tx)
            .await?;
        }
        outcome.warning_count += warning_count;
        outcome
            .warnings
            .extend(file_warnings.into_iter().map(|w| (file.name.clone(), w)));
        outcome
            .formats
            .push((file.name.clone(), summary.format.to_string()));
    }

    let profiled = outcome.formats.iter().any(|(_, f)| f == "trace_stat");
    for run in runs.values() {
        if profiled {
            outcome.series += trace_stat_totals(&mut tx, run.run_id).await?;
        }
        // One statement per run rather than one per series (trace_stat has thousands).
        sqlx::query(
            "UPDATE series SET n = (SELECT COUNT(*) FROM samples WHERE series_id = series.id) WHERE run_id = ?",
        )
        .bind(run.run_id)
        .execute(&mut *tx)
        .await?;
        outcome.series += run.series.len() as u64;
        outcome.run_ids.push(run.run_id);
    }
    if profiled {
        // Totals added samples of their own: count what is stored.
        let mut total = 0i64;
        for run in runs.values() {
            total += sqlx::query_scalar::<_, i64>(
                "SELECT COALESCE(SUM(n), 0) FROM series WHERE run_id = ?",
            )
            .bind(run.run_id)
            .fetch_one(&mut *tx)
            .await?;
        }
        outcome.samples = total as u64;
    }
    outcome.run_ids.sort_unstable();
    tx.commit().await?;
    Ok(outcome)
}

fn validate_meta(meta: &RunMeta) -> Result<(), Error> {
    let check = |what: &str, v: &str| {
        if v.trim().is_empty() {
            Err(Error::Invalid(format!("{what} must not be empty")))
        } else if v.len() > 256 {
            Err(Error::Invalid(format!("{what} is longer than 256 bytes")))
        } else if v.chars().any(|c| c.is_control()) {
            Err(Error::Invalid(format!(
                "{what} must not contain control characters"
            )))
        } else {
            Ok(())
        }
    };
    check("build label", &meta.build.label)?;
    check("machine name", &meta.machine)?;
    check("benchmark name", &meta.benchmark)?;
    for (k, v) in meta.params.iter().chain(meta.machine_facts.iter()) {
        check("parameter name", k)?;
        if v.len() > 4096 {
            return Err(Error::Invalid(format!(
                "value of {k} is longer than 4096 bytes"
            )));
        }
    }
    Ok(())
}

fn import_hash(meta: &RunMeta, files: &[InputFile], artifacts: &[i64]) -> String {
    // Artifact ids are content-addressed (one id per sha256), so ids stand for content here.
    let mut h = Sha256::new();
    let meta_json = serde_json::to_string(&(
        &meta.build,
        &meta.machine,
        &meta.machine_facts,
        &meta.benchmark,
        &meta.params,
        &meta.block,
    ))
    .unwrap_or_default();
    h.update(meta_json.as_bytes());
    for (f, a) in files.iter().zip(artifacts) {
        h.update(b"\0");
        h.update(f.format.as_deref().unwrap_or("").as_bytes());
        h.update(b"\0");
        h.update(a.to_le_bytes());
    }
    hex::encode(h.finalize())
}

async fn existing_outcome(pool: &SqlitePool, run_ids: Vec<i64>) -> Result<ImportOutcome, Error> {
    let mut series = 0u64;
    let mut samples = 0u64;
    for id in &run_ids {
        let row = sqlx::query("SELECT COUNT(*), COALESCE(SUM(n), 0) FROM series WHERE run_id = ?")
            .bind(id)
            .fetch_one(pool)
            .await?;
        series += row.get::<i64, _>(0) as u64;
        samples += row.get::<i64, _>(1) as u64;
    }
    Ok(ImportOutcome {
        run_ids,
        created: false,
        series,
        samples,
        warnings: Vec::new(),
        warning_count: 0,
        formats: Vec::new(),
    })
}

/// Stores a file's bytes (if not already stored) and returns the artifact id.
async fn store_artifact(tx: &mut Transaction<'_, Sqlite>, file: &InputFile) -> Result<i64, Error> {
    // Hash first so that a file already stored is not written again.
    let mut hasher = Sha256::new();
    let mut size = 0u64;
    {
        let mut r = file.open()?;
        let mut buf = vec![0u8; CHUNK];
        loop {
            let n = read_full(&mut r, &mut buf).map_err(|source| Error::Io {
                path: file.display_path(),
                source,
            })?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
            size += n as u64;
        }
    }
    let sha = hex::encode(hasher.finalize());
    if let Some(id) = sqlx::query_scalar::<_, i64>("SELECT id FROM artifacts WHERE sha256 = ?")
        .bind(&sha)
        .fetch_optional(&mut **tx)
        .await?
    {
        return Ok(id);
    }
    let id: i64 =
        sqlx::query_scalar("INSERT INTO artifacts (sha256, size) VALUES (?, ?) RETURNING id")
            .bind(&sha)
            .bind(size as i64)
            .fetch_one(&mut **tx)
            .await?;
    let mut r = file.open()?;
    let mut buf = vec![0u8; CHUNK];
    let mut seq = 0i64;
    loop {
        let n = read_full(&mut r, &mut buf).map_err(|source| Error::Io {
            path: file.display_path(),
            source,
        })?;
        if n == 0 {
            break;
        }
        sqlx::query("INSERT INTO artifact_chunks (artifact_id, seq, data) VALUES (?, ?, ?)")
            .bind(id)
            .bind(seq)
            .bind(&buf[..n])
            .execute(&mut **tx)
            .await?;
        seq += 1;
    }
    Ok(id)
}

fn read_full(r: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match r.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

async fn upsert_build(tx: &mut Transaction<'_, Sqlite>, b: &BuildMeta) -> Result<i64, Error> {
    let row = sqlx::query(
        "SELECT id, commit_sha, kernel_version, config, cmdline FROM builds WHERE label = ?",
    )
    .bind(&b.label)
    .fetch_optional(&mut **tx)
    .await?;
    let Some(row) = row else {
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO builds (label, commit_sha, kernel_version, config, cmdline, created_at) \
             VALUES (?, ?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(&b.label)
        .bind(&b.commit)
        .bind(&b.kernel_version)
        .bind(&b.config)
        .bind(&b.cmdline)
        .bind(now())
        .fetch_one(&mut **tx)
        .await?;
        return Ok(id);
    };
    let id: i64 = row.get(0);
    let fields = [
        (
            "commit",
            "commit_sha",
            &b.commit,
            row.get::<Option<String>, _>(1),
        ),
        (
            "kernel version",
            "kernel_version",
            &b.kernel_version,
            row.get(2),
        ),
        ("config", "config", &b.config, row.get(3)),
        ("boot command line", "cmdline", &b.cmdline, row.get(4)),
    ];
    for (what, col, given, stored) in fields {
        match (given, stored) {
            (Some(g), Some(s)) if *g != s => {
                return Err(Error::Invalid(format!(
                    "build {:?} already has a different {what} ({}); use another label for a different build",
                    b.label,
                    if s.len() > 40 {
                        format!("{}...", &s[..s.floor_char_boundary(40)])
                    } else {
                        s
                    }
                )));
            }
            (Some(g), None) => {
                sqlx::query(AssertSqlSafe(format!(
                    "UPDATE builds SET {col} = ? WHERE id = ?"
                )))
                .bind(g)
                .bind(id)
                .execute(&mut **tx)
                .await?;
            }
            _ => {}
        }
    }
    Ok(id)
}

async fn upsert_machine(
    tx: &mut Transaction<'_, Sqlite>,
    name: &str,
    facts: &BTreeMap<String, String>,
) -> Result<i64, Error> {
    let id: i64 = match sqlx::query_scalar::<_, i64>("SELECT id FROM machines WHERE name = ?")
        .bind(name)
        .fetch_optional(&mut **tx)
        .await?
    {
        Some(id) => id,
        None => {
            sqlx::query_scalar("INSERT INTO machines (name, created_at) VALUES (?, ?) RETURNING id")
                .bind(name)
                .bind(now())
                .fetch_one(&mut **tx)
                .await?
        }
    };
    for (k, v) in facts {
        sqlx::query(
            "INSERT INTO machine_facts (machine_id, key, value) VALUES (?, ?, ?) \
             ON CONFLICT (machine_id, key) DO UPDATE SET value = excluded.value",
        )
        .bind(id)
        .bind(k)
        .bind(v)
        .execute(&mut **tx)
        .await?;
    }
    Ok(id)
}

#[allow(clippy::too_many_arguments)]
async fn insert_run(
    tx: &mut Transaction<'_, Sqlite>,
    build_id: i64,
    machine_id: i64,
    meta: &RunMeta,
    params: &BTreeMap<String, String>,
    pkey: &str,
    import_hash: &str,
    created_at: i64,
) -> Result<i64, Error> {
    let content_hash = hex::encode(Sha256::digest(format!("{import_hash}\0{pkey}").as_bytes()));
    let run_id: i64 = sqlx::query_scalar(
        "INSERT INTO runs (build_id, machine_id, benchmark, params_key, content_hash, import_hash, token_id, created_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
    )
    .bind(build_id)
    .bind(machine_id)
    .bind(&meta.benchmark)
    .bind(pkey)
    .bind(content_hash)
    .bind(import_hash)
    .bind(meta.token_id)
    .bind(created_at)
    .fetch_one(&mut **tx)
    .await?;
    for (k, v) in params {
        sqlx::query("INSERT INTO run_params (run_id, key, value) VALUES (?, ?, ?)")
            .bind(run_id)
            .bind(k)
            .bind(v)
            .execute(&mut **tx)
            .await?;
    }
    Ok(run_id)
}

/// Adds the `all` totals of per-CPU trace_stat series that no input file totalled itself (a
/// directory of `function0..N` files: each file holds one CPU): hits and time summed over the
/// CPUs, avg = time / hits. Returns the number of series added.
async fn trace_stat_totals(tx: &mut Transaction<'_, Sqlite>, run_id: i64) -> Result<u64, Error> {
    let before: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(id), 0) FROM series")
        .fetch_one(&mut **tx)
        .await?;
    // Sums: FUNC.hit and FUNC.time over cpuN scopes, when 2+ CPUs and no `all` series exists.
    sqlx::query(
        "INSERT INTO series (run_id, metric, unit, direction, scope, label, statistic)          SELECT run_id, metric, MIN(unit), MIN(direction), 'all', label, NULL FROM series c          WHERE c.run_id = ?1 AND c.statistic IS NULL AND c.scope GLOB 'cpu[0-9]*'            AND (c.metric LIKE '%.hit' OR c.metric LIKE '%.time')            AND NOT EXISTS (SELECT 1 FROM series a WHERE a.run_id = c.run_id AND a.metric = c.metric                            AND a.scope = 'all' AND a.label IS c.label AND a.statistic IS NULL)          GROUP BY metric, label HAVING COUNT(DISTINCT scope) >= 2",
    )
    .bind(run_id)
    .execute(&mut **tx)
    .await?;
    sqlx::query(
        "INSERT INTO samples (series_id, idx, value)          SELECT a.id, sm.idx, SUM(sm.value) FROM series a          JOIN series c ON c.run_id = a.run_id AND c.metric = a.metric AND c.label IS a.label               AND c.statistic IS NULL AND c.scope GLOB 'cpu[0-9]*'          JOIN samples sm ON sm.series_id = c.id          WHERE a.run_id = ?1 AND a.id > ?2 GROUP BY a.id, sm.idx",
    )
    .bind(run_id)
    .bind(before)
    .execute(&mut **tx)
    .await?;
    // avg = time / hits, per sample index, where both totals were just made.
    let mid: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(id), 0) FROM series")
        .fetch_one(&mut **tx)
        .await?;
    sqlx::query(
        "INSERT INTO series (run_id, metric, unit, direction, scope, label, statistic)          SELECT t.run_id, substr(t.metric, 1, length(t.metric) - 5) || '.avg', t.unit, t.direction, 'all', t.label, NULL          FROM series t JOIN series h ON h.run_id = t.run_id AND h.id > ?2 AND h.label IS t.label               AND h.metric = substr(t.metric, 1, length(t.metric) - 5) || '.hit'          WHERE t.run_id = ?1 AND t.id > ?2 AND t.metric LIKE '%.time'",
    )
    .bind(run_id)
    .bind(before)
    .execute(&mut **tx)
    .await?;
    sqlx::query(
        "INSERT INTO samples (series_id, idx, value)          SELECT v.id, ts.idx, ts.value / hs.value FROM series v          JOIN series t ON t.run_id = v.run_id AND t.id > ?2 AND t.label IS v.label               AND t.metric = substr(v.metric, 1, length(v.metric) - 4) || '.time'          JOIN series h ON h.run_id = v.run_id AND h.id > ?2 AND h.label IS v.label               AND h.metric = substr(v.metric, 1, length(v.metric) - 4) || '.hit'          JOIN samples ts ON ts.series_id = t.id          JOIN samples hs ON hs.series_id = h.id AND hs.idx = ts.idx          WHERE v.run_id = ?1 AND v.id > ?3 AND hs.value > 0",
    )
    .bind(run_id)
    .bind(before)
    .bind(mid)
    .execute(&mut **tx)
    .await?;
    let added: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM series WHERE run_id = ? AND id > ?")
        .bind(run_id)
        .bind(before)
        .fetch_one(&mut **tx)
        .await?;
    Ok(added as u64)
}

/// Series rows per INSERT statement (8 bound values each).
const SERIES_PER_STMT: usize = 250;

/// Inserts series rows with explicit ids in multi-row statements.
async fn insert_series(
    tx: &mut Transaction<'_, Sqlite>,
    rows: &[PendingSeries],
) -> Result<(), Error> {
    for chunk in rows.chunks(SERIES_PER_STMT) {
        let mut sql = String::from(
            "INSERT INTO series (id, run_id, metric, unit, direction, scope, label, statistic) VALUES ",
        );
        for i in 0..chunk.len() {
            sql.push_str(if i == 0 {
                "(?,?,?,?,?,?,?,?)"
            } else {
                ",(?,?,?,?,?,?,?,?)"
            });
        }
        let mut q = sqlx::query(AssertSqlSafe(sql));
        for r in chunk {
            q = q
                .bind(r.id)
                .bind(r.run_id)
                .bind(&r.spec.key.metric)
                .bind(r.spec.unit.as_str())
                .bind(r.spec.direction.as_str())
                .bind(&r.spec.key.scope)
                .bind(&r.spec.key.label)
                .bind(&r.spec.key.statistic);
        }
        q.execute(&mut **tx).await?;
    }
    Ok(())
}

/// Inserts (series_id, idx, value) rows with multi-row statements.
pub async fn insert_samples(
    tx: &mut Transaction<'_, Sqlite>,
    rows: &[(i64, i64, f64)],
) -> Result<(), Error> {
    for chunk in rows.chunks(ROWS_PER_STMT) {
        let sql = multi_insert_sql(chunk.len());
        let mut q = sqlx::query(AssertSqlSafe(sql));
        for (s, i, v) in chunk {
            q = q.bind(s).bind(i).bind(v);
        }
        q.execute(&mut **tx).await?;
    }
    Ok(())
}

fn multi_insert_sql(n: usize) -> String {
    let mut sql = String::with_capacity(48 + n * 8);
    sql.push_str("INSERT INTO samples (series_id, idx, value) VALUES ");
    for i in 0..n {
        if i > 0 {
            sql.push(',');
        }
        sql.push_str("(?,?,?)");
    }
    sql
}

/// Writes a stored artifact's bytes to `out`, byte for byte.
pub async fn read_artifact(
    pool: &SqlitePool,
    artifact_id: i64,
    out: &mut (dyn std::io::Write + Send),
) -> Result<u64, Error> {
    let mut seq = 0i64;
    let mut total = 0u64;
    loop {
        let chunk: Option<Vec<u8>> = sqlx::query_scalar(
            "SELECT data FROM artifact_chunks WHERE artifact_id = ? AND seq = ?",
        )
        .bind(artifact_id)
        .bind(seq)
        .fetch_optional(pool)
        .await?;
        let Some(chunk) = chunk else { break };
        out.write_all(&chunk)
            .map_err(|e| Error::Invalid(format!("writing artifact: {e}")))?;
        total += chunk.len() as u64;
        seq += 1;
    }
    Ok(total)
}

/// A file name safe to write under an output directory: the last path component, with
/// anything odd replaced.
pub fn safe_file_name(name: &str) -> String {
    let base = Path::new(name)
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let cleaned: String = base
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '+') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if cleaned.is_empty() || cleaned.chars().all(|c| c == '.') {
        "artifact".into()
    } else {
        cleaned
    }
}
