//! The import into the database: one run (or one run per parameter combination of a sweep) per
//! call, in one transaction, with the raw files kept byte for byte.
//!
//! Parsing runs on a blocking thread and streams batches of samples over a bounded channel to
//! the import. Samples are gathered into blocks (one per key without its scope, see `blocks`),
//! 16 bytes a sample, and written at the end of the import: a per-CPU profile's block takes one
//! scope from each file, so memory grows with the run's samples and blocks, never with a copy
//! of each key's strings.
//!
//! Everything is parsed before the write transaction begins, so a large upload holds the
//! database's single writer only while its bytes and blocks are written, not while it is read
//! and parsed: small uploads arriving meanwhile commit in between, those ready together in one
//! transaction (`group`). Runs and new names get their final ids inside the transaction
//! (another import may have added names meanwhile). A large
//! import stages its blocks first, in bounded batches (`pending_blocks`), and its last
//! transaction moves them under its runs.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

use sqlx::AssertSqlSafe;

use ingest::model::FastMap;

use crate::artifacts::{artifact_by_sha, hash_file, store_hashed_many};
use crate::blocks::{Blocks, Encoded, insert_sql};
use crate::idempotency::IdempotencyKey;
use crate::import_rows::{Known, NewRun, insert_runs};
use crate::meta::{import_hash, legacy_import_hash, refuse_nul, validate_meta};
use crate::sink::{ImportNames, Interner, Msg, NONE, Parsing, spawn_parse};
use crate::write::{Names, TotalRole, Totals, total_role};
use crate::{
    Error, ImportOutcome, InputFile, RunMeta, Store, Tx, now, params_key, with_pool, with_tx,
};

/// Warnings kept per file; the count beyond is still reported.
const MAX_WARNINGS_KEPT: usize = 1000;

/// The series of one run being read (its index in `states` is the run's number in this
/// import): interned key (metric, label, statistic; 0 for none) -> (scope, slot) of each of
/// its series. Two levels, because a per-CPU profile has millions of series but only as many
/// keys as functions x metrics, each with a few scopes.
#[derive(Default)]
struct RunState {
    series: FastMap<[u32; 3], Vec<(u32, u32)>>,
    count: u64,
}

/// A file's `run_artifacts` rows, written once the runs it fed have ids.
struct Attachment {
    seq: usize,
    /// Numbers (in this import) of the runs the file fed.
    fed: BTreeSet<i64>,
    format: String,
    meta_json: String,
    warnings_json: String,
    warning_count: u64,
    extra_json: String,
}

/// What the file being read knows of a slot.
#[derive(Clone, Copy)]
struct SlotInfo {
    run_id: i64,
    key: [u32; 4],
    unit: u32,
    direction: u32,
    role: TotalRole,
}

impl Store {
    /// Imports one run from `files` in one transaction. `progress`, when given, counts the
    /// input bytes parsed so far.
    pub async fn import_run(
        &self,
        meta: &RunMeta,
        files: &[InputFile],
        progress: Option<Arc<AtomicU64>>,
    ) -> Result<ImportOutcome, Error> {
        import_run(self, meta, files, progress, None).await
    }

    /// [`Store::import_run`] of an upload: its `Idempotency-Key`, when it has one, is
    /// remembered in the transaction that stores its runs. Uploads ready together are committed
    /// in one transaction (see `group`).
    pub async fn import_upload(
        &self,
        meta: &RunMeta,
        files: &[InputFile],
        key: Option<&IdempotencyKey>,
    ) -> Result<ImportOutcome, Error> {
        import_run(self, meta, files, None, key).await
    }
}

async fn import_run(
    store: &Store,
    meta: &RunMeta,
    files: &[InputFile],
    progress: Option<Arc<AtomicU64>>,
    remember: Option<&IdempotencyKey>,
) -> Result<ImportOutcome, Error> {
    validate_meta(meta)?;
    if store.is_postgres() {
        refuse_nul(meta, files)?;
    }
    if files.is_empty() {
        return Err(Error::Invalid("no input files".into()));
    }
    // Pass 1: hash every file. An import whose files and metadata are all stored already is
    // answered at once, without parsing (the transaction checks again, for races).
    let mut hashes = Vec::with_capacity(files.len());
    for f in files {
        hashes.push(hash_file(f)?);
    }
    // Small imports skip this: parsing them costs less than the lookups.
    let mut known = Vec::with_capacity(files.len());
    let size: u64 = hashes.iter().map(|(_, n)| n).sum();
    if size >= PRECHECK_MIN_BYTES {
        for (sha, _) in &hashes {
            match artifact_by_sha(store, sha).await? {
                Some(id) => known.push(id),
                None => break,
            }
        }
    }
    if known.len() == files.len() {
        let existing = runs_of_import(store, &import_hash(meta, files, &known)).await?;
        if !existing.is_empty() {
            return existing_outcome(store, existing).await;
        }
    }

    // Pass 2: parse each file and stream its series into the run(s), outside the writer.
    let created_at = now();
    // Runs by parameters key (their number in this import, which indexes `states`), and by
    // the id of the parameter set their series carry (NONE: the import's own).
    let mut runs: BTreeMap<String, usize> = BTreeMap::new();
    let mut states: Vec<RunState> = Vec::new();
    let mut run_of: FastMap<u32, usize> = FastMap::default();
    // Parameters and key of each run, by its number in this import.
    let mut new_runs: Vec<(BTreeMap<String, String>, String)> = Vec::new();
    let mut attachments: Vec<Attachment> = Vec::with_capacity(files.len());
    let base_pkey = params_key(&meta.params);
    let mut names = Names::cached(store);
    // Every series of the import, gathered into blocks written at the end (a block takes the
    // samples of one key from every file: one per CPU for a per-CPU profile).
    let mut blocks = Blocks::default();
    let mut slot_count: u32 = 0;
    // Per-run sums for the totals of per-CPU profiles; metric names by id for their names.
    let mut totals = Totals::default();
    let mut metric_names: FastMap<u32, String> = FastMap::default();
    let mut outcome = ImportOutcome {
        run_ids: Vec::new(),
        created: true,
        series: 0,
        samples: 0,
        warnings: Vec::new(),
        warning_count: 0,
        formats: Vec::new(),
        history_metrics: None,
    };
    // The names of the import's series, interned while parsing and sent once each. The next
    // file is parsed while the samples of one are filed.
    let mut import_names = ImportNames::default();
    let mut next = Some(spawn_parse(
        &files[0],
        Interner::default(),
        progress.clone(),
    )?);
    for (seq, file) in files.iter().enumerate() {
        let Parsing {
            mut rx,
            task: parse,
        } = next.take().expect("started before");

        // Parser series id -> slot; None for series of other blocks.
        let mut local: Vec<Option<u32>> = Vec::new();
        // Slots from `file_start` on were made by this file; earlier ones get appended to.
        let file_start = slot_count;
        let mut info: FastMap<u32, SlotInfo> = FastMap::default();
        let mut new_info: Vec<SlotInfo> = Vec::new();
        let mut values: Vec<(u32, f64)> = Vec::new();
        let mut fed: BTreeSet<i64> = BTreeSet::new();
        let mut last_fed = None;
        let mut file_meta = BTreeMap::new();
        let mut file_warnings = Vec::new();
        let mut warning_count = 0u64;
        let mut extra = serde_json::Map::new();
        while let Some(batch) = rx.recv().await {
            for msg in batch {
                match msg {
                    Msg::Name(id, name) => import_names.add(id, name),
                    Msg::Params(id, params) => import_names.add_params(id, params),
                    Msg::Series(id, mut decl) => {
                        if let Some(block) = &meta.block {
                            // An empty block name selects the series that carry no label
                            // (results printed before the first label line).
                            let want = Some(block.as_str()).filter(|b| !b.is_empty());
                            if import_names.get(decl.label) != want {
                                continue;
                            }
                            decl.label = NONE;
                        }
                        // The run of the series' parameters, found once per parameter set.
                        let run_id = match run_of.get(&decl.params) {
                            Some(&r) => r,
                            None => {
                                let params = import_names.params(decl.params).map(|p| {
                                    let mut params = meta.params.clone();
                                    params.extend(p.iter().map(|(k, v)| (k.clone(), v.clone())));
                                    params
                                });
                                let pkey = params.as_ref().map(params_key);
                                let pkey = pkey.unwrap_or_else(|| base_pkey.clone());
                                let r = *runs.entry(pkey.clone()).or_insert_with(|| {
                                    let run_id = new_runs.len();
                                    new_runs.push((
                                        params.unwrap_or_else(|| meta.params.clone()),
                                        pkey,
                                    ));
                                    states.push(RunState::default());
                                    run_id
                                });
                                run_of.insert(decl.params, r);
                                r
                            }
                        };
                        let run = &mut states[run_id];
                        let run_id = run_id as i64;
                        let metric = import_names.stored(decl.metric, &mut names);
                        let key = [
                            metric,
                            import_names.stored(decl.scope, &mut names),
                            import_names.stored(decl.label, &mut names),
                            import_names.stored(decl.statistic, &mut names),
                        ];
                        let unit = import_names.stored(decl.unit, &mut names);
                        let direction = import_names.stored(decl.direction, &mut names);
                        let role = total_role(
                            import_names.get(decl.metric).unwrap_or_default(),
                            import_names.get(decl.scope).unwrap_or_default(),
                            import_names.get(decl.statistic),
                        );
                        if matches!(role, TotalRole::PerCpu { .. })
                            && import_names.first_note(decl.metric)
                        {
                            metric_names.entry(metric).or_insert_with(|| {
                                import_names
                                    .get(decl.metric)
                                    .unwrap_or_default()
                                    .to_string()
                            });
                        }
                        let si = SlotInfo {
                            run_id,
                            key,
                            unit,
                            direction,
                            role,
                        };
                        let group = run.series.entry([key[0], key[2], key[3]]).or_default();
                        let slot = match group.iter().find(|&&(scope, _)| scope == key[1]) {
                            Some(&(_, slot)) => slot,
                            None => {
                                let slot = slot_count;
                                slot_count += 1;
                                group.push((key[1], slot));
                                run.count += 1;
                                slot
                            }
                        };
                        if slot >= file_start {
                            let i = (slot - file_start) as usize;
                            if new_info.len() <= i {
                                new_info.push(si);
                            }
                        } else {
                            info.insert(slot, si);
                        }
                        if last_fed != Some(run_id) {
                            fed.insert(run_id);
                            last_fed = Some(run_id);
                        }
                        if local.len() <= id {
                            local.resize(id + 1, None);
                        }
                        local[id] = Some(slot);
                    }
                    Msg::Samples(batch) => {
                        values.reserve(batch.len());
                        for (id, v) in batch {
                            // Series of other blocks were not declared: skip their samples.
                            if let Some(Some(slot)) = local.get(id).copied() {
                                values.push((slot, v));
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
            }
        }
        let (summary, names_now) = parse
            .join()
            .await
            .map_err(|e| Error::Invalid(format!("parser thread failed: {e}")))?;
        let summary = summary?;
        if local.iter().all(Option::is_none) {
            if let Some(block) = &meta.block {
                return Err(Error::Invalid(format!(
                    "{}: no block labelled {block:?} in this file",
                    file.name
                )));
            }
            return Err(Error::Parse(ingest::Error::Parse {
                path: file.display_path(),
                format: summary.format,
                source: ingest::ParseError::nothing("measurement"),
            }));
        }
        if let Some(f) = files.get(seq + 1) {
            next = Some(spawn_parse(f, names_now, progress.clone())?);
        }
        // The file's samples, grouped by slot in arrival order (the sort is stable).
        values.sort_by_key(|&(slot, _)| slot);
        outcome.samples += values.len() as u64;
        let mut groups = values.chunk_by(|a, b| a.0 == b.0).peekable();
        // One buffer for every series' values: a profile has millions of one-value series.
        let mut vals: Vec<f64> = Vec::new();
        // Appends to series of earlier files first (they come first in slot order).
        while let Some(g) = groups.next_if(|g| g[0].0 < file_start) {
            let slot = g[0].0;
            vals.clear();
            vals.extend(g.iter().map(|&(_, v)| v));
            let n = blocks.len(slot as usize);
            let si = info[&slot];
            totals.add(
                si.role,
                si.run_id,
                si.key[0],
                si.key[2],
                si.key[1],
                si.unit,
                si.direction,
                n,
                &vals,
            );
            blocks.append(slot as usize, &vals);
        }
        for (i, si) in new_info.iter().enumerate() {
            let slot = file_start + i as u32;
            vals.clear();
            if let Some(g) = groups.next_if(|g| g[0].0 == slot) {
                vals.extend(g.iter().map(|&(_, v)| v));
            }
            totals.add(
                si.role,
                si.run_id,
                si.key[0],
                si.key[2],
                si.key[1],
                si.unit,
                si.direction,
                0,
                &vals,
            );
            let [metric, scope, label, statistic] = si.key;
            let key = [metric, si.unit, si.direction, label, statistic];
            blocks.add_series(slot as usize, si.run_id, key, scope, &vals);
        }
        drop(groups);
        drop(values);

        // The artifact goes to every run this file fed, once they have ids.
        attachments.push(Attachment {
            seq,
            fed,
            format: summary.format.to_string(),
            meta_json: serde_json::to_string(&file_meta).unwrap_or_else(|_| "{}".into()),
            warnings_json: serde_json::to_string(&file_warnings).unwrap_or_else(|_| "[]".into()),
            warning_count,
            extra_json: serde_json::to_string(&extra).unwrap_or_else(|_| "{}".into()),
        });
        outcome.warning_count += warning_count;
        outcome
            .warnings
            .extend(file_warnings.into_iter().map(|w| (file.name.clone(), w)));
        outcome
            .formats
            .push((file.name.clone(), summary.format.to_string()));
    }

    let profiled = outcome.formats.iter().any(|(_, f)| f == "trace_stat");
    for &r in runs.values() {
        let (run, run_id) = (&states[r], r as i64);
        if profiled {
            let mut rows = totals.rows(run_id, &mut names, &metric_names);
            for r in &mut rows {
                outcome.samples += r.vals.len() as u64;
                blocks.add_last(blocks.slots(), r);
            }
            outcome.series += rows.len() as u64;
        }
        outcome.series += run.count;
        outcome.run_ids.push(run_id);
    }

    outcome.history_metrics = Some(names.names_of(blocks.whole_run_with_scope(names.get("all"))));
    // Encoded (packed) now, so that the writer only inserts.
    let mut blocks = blocks.encode();
    // Names the cache did not know are looked up now, outside the writer.
    if let Some(renamed) = names.refresh(store).await? {
        blocks.rename(&renamed);
    }
    // A large import writes its blocks ahead in bounded batches that other uploads commit
    // between; its last transaction then only moves them under their runs.
    let staged = if store.stage_large && blocks.len() >= STAGE_MIN_BLOCKS {
        Some(stage(store, &mut names, &mut blocks, &hashes).await?)
    } else {
        None
    };
    let job = Prepared {
        meta: meta.clone(),
        files: files.to_vec(),
        hashes,
        new_runs,
        attachments,
        names,
        blocks,
        staged: staged.clone(),
        created_at,
        outcome,
        remember: remember.cloned(),
    };
    match store.commit_grouped(job).await {
        Err(e) => {
            if let Some(key) = &staged {
                discard_staged(store, key).await;
            }
            Err(e)
        }
        Ok(Finished::Stored(outcome)) => Ok(outcome),
        Ok(Finished::Existing(existing)) => {
            if let Some(key) = &staged {
                discard_staged(store, key).await;
            }
            existing_outcome(store, existing).await
        }
    }
}

/// Bytes an import has at least for its files to be looked up before parsing (an import
/// stored before is then answered without being parsed); smaller ones are found out in their
/// transaction.
const PRECHECK_MIN_BYTES: u64 = 1 << 20;

/// Blocks an import has at least for them to be staged ([`stage`]) rather than written in its
/// last transaction.
const STAGE_MIN_BLOCKS: usize = 20_000;
/// Blocks per staging transaction.
const STAGE_BATCH: usize = 5_000;

/// What the last transaction of an import did.
pub(crate) enum Finished {
    Stored(ImportOutcome),
    /// The same import was stored meanwhile: its runs.
    Existing(Vec<i64>),
}

/// Stages a large import's blocks in `pending_blocks`, [`STAGE_BATCH`] per write transaction,
/// after storing its new names (so that the staged blocks carry their final name ids); the
/// key they are staged under.
async fn stage(
    store: &Store,
    names: &mut Names,
    blocks: &mut Encoded,
    hashes: &[(String, u64)],
) -> Result<String, Error> {
    let mut tx = store.begin_write().await?;
    let renamed = names.reconcile(&mut tx).await?;
    names.flush(&mut tx).await?;
    tx.commit().await?;
    if let Some(renamed) = &renamed {
        blocks.rename(renamed);
    }
    // Unique among imports in flight on every server of the database.
    static STAGED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let key = format!(
        "{}-{}-{nanos}-{}",
        hashes.first().map_or("", |h| h.0.as_str()),
        std::process::id(),
        STAGED.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    );
    let created_at = now();
    let mut from = 0;
    while from < blocks.len() {
        let to = (from + STAGE_BATCH).min(blocks.len());
        let written = async {
            let mut tx = store.begin_write().await?;
            blocks.stage(&mut tx, &key, from..to, created_at).await?;
            tx.commit().await
        }
        .await;
        if let Err(e) = written {
            discard_staged(store, &key).await;
            return Err(e);
        }
        from = to;
    }
    Ok(key)
}

/// Removes what an import that failed staged (best effort: rows left are removed when a day
/// old, see `open`).
async fn discard_staged(store: &Store, key: &str) {
    with_pool!(store, |pool| {
        let _ = sqlx::query("DELETE FROM pending_blocks WHERE import_key = $1")
            .bind(key)
            .execute(pool)
            .await;
    });
}

/// An import parsed and packed, waiting for its turn to write (see `group`).
pub(crate) struct Prepared {
    pub(crate) meta: RunMeta,
    pub(crate) files: Vec<InputFile>,
    pub(crate) hashes: Vec<(String, u64)>,
    pub(crate) new_runs: Vec<(BTreeMap<String, String>, String)>,
    attachments: Vec<Attachment>,
    pub(crate) names: Names,
    pub(crate) blocks: Encoded,
    /// The key its blocks were staged under, when they were.
    pub(crate) staged: Option<String>,
    created_at: i64,
    outcome: ImportOutcome,
    /// The upload's idempotency key, remembered with its runs.
    remember: Option<IdempotencyKey>,
}

/// What [`finish_in`] wrote: the run ids, in the order of `Prepared::new_runs`.
pub(crate) enum Written {
    Runs(Vec<i64>),
    Existing(Vec<i64>),
}

/// The import's part of a write transaction: its bytes, runs, new names, blocks (or the move of
/// its staged ones) and files. On `Existing` the caller undoes what was written (the bytes).
pub(crate) async fn finish_in(
    tx: &mut Tx,
    job: &mut Prepared,
    known: &mut Known,
) -> Result<Written, Error> {
    let (meta, files) = (&job.meta, &job.files);
    let hashed: Vec<_> = files.iter().zip(&job.hashes).collect();
    let artifacts = store_hashed_many(tx, &hashed, None).await?;
    let import_hash = import_hash(meta, files, &artifacts);
    let existing: Vec<i64> = with_tx!(tx, |t| {
        sqlx::query_scalar(RUNS_OF_IMPORT)
            .bind(&import_hash)
            .bind(legacy_import_hash(&import_hash))
            .fetch_all(&mut **t)
            .await?
    });
    if !existing.is_empty() {
        // The same import, stored while this one was parsed.
        return Ok(Written::Existing(existing));
    }
    let (build_id, machine_id) = known.build_and_machine(tx, meta).await?;
    let runs: Vec<NewRun<'_>> = job.run_rows(build_id, machine_id, &import_hash).collect();
    let run_ids = insert_runs(tx, &runs, None).await?;
    match &job.staged {
        Some(key) => {
            Encoded::move_staged(tx, key, &run_ids).await?;
            known.next_block = None;
        }
        None => {
            let renamed = job.names.reconcile(tx).await?;
            job.names.flush(tx).await?;
            job.blocks.renumber(&run_ids, renamed.as_ref());
            known.next_block = Some(job.blocks.write(tx, known.next_block).await?);
        }
    }
    link_files(tx, &[(&*job, &artifacts, &run_ids)]).await?;
    job.remember_key(tx, &run_ids).await?;
    Ok(Written::Runs(run_ids))
}

impl Prepared {
    /// The rows of the import's runs, of build `build_id` on machine `machine_id`.
    pub(crate) fn run_rows<'a>(
        &'a self,
        build_id: i64,
        machine_id: i64,
        import_hash: &'a str,
    ) -> impl Iterator<Item = NewRun<'a>> + 'a {
        self.new_runs
            .iter()
            .map(move |(params, params_key)| NewRun {
                build_id,
                machine_id,
                meta: &self.meta,
                params,
                params_key,
                import_hash,
                created_at: self.created_at,
            })
    }

    /// Remembers the upload's idempotency key, if it has one, with the first of its runs
    /// `run_ids`.
    pub(crate) async fn remember_key(&self, tx: &mut Tx, run_ids: &[i64]) -> Result<(), Error> {
        if let (Some(key), Some(&first)) = (&self.remember, run_ids.first()) {
            crate::idempotency::remember_in(tx, key, first).await?;
        }
        Ok(())
    }
}

/// Links each file of each import to every run it fed: (import, the stored ids of its files,
/// of its runs) for each; a few multi-row inserts for them all.
pub(crate) async fn link_files(
    tx: &mut Tx,
    imports: &[(&Prepared, &[i64], &[i64])],
) -> Result<(), Error> {
    let links: Vec<(&Prepared, &Attachment, i64, i64)> = imports
        .iter()
        .flat_map(|&(job, artifacts, runs)| {
            job.attachments.iter().flat_map(move |a| {
                a.fed
                    .iter()
                    .map(move |&run| (job, a, runs[run as usize], artifacts[a.seq]))
            })
        })
        .collect();
    for part in links.chunks(LINKS_PER_STATEMENT) {
        let sql = insert_sql(
            "INSERT INTO run_artifacts (run_id, artifact_id, seq, file_name, format, meta_json, warnings_json, warning_count, extra_json) VALUES ",
            part.len(),
            9,
            tx.is_postgres(),
        );
        with_tx!(tx, |t| {
            let mut q = sqlx::query(AssertSqlSafe(sql));
            for &(job, a, run_id, artifact_id) in part {
                q = q
                    .bind(run_id)
                    .bind(artifact_id)
                    .bind(a.seq as i64)
                    .bind(&job.files[a.seq].name)
                    .bind(&a.format)
                    .bind(&a.meta_json)
                    .bind(&a.warnings_json)
                    .bind(a.warning_count as i64)
                    .bind(&a.extra_json);
            }
            q.execute(&mut **t).await?;
        });
    }
    Ok(())
}

/// The outcome of a committed import, its run numbers replaced by the stored ids.
pub(crate) fn stored_outcome(job: Prepared, run_ids: &[i64]) -> ImportOutcome {
    let mut outcome = job.outcome;
    for id in &mut outcome.run_ids {
        *id = run_ids[*id as usize];
    }
    for (id, _) in outcome.history_metrics.iter_mut().flatten() {
        *id = run_ids[*id as usize];
    }
    outcome.run_ids.sort_unstable();
    outcome
}

/// Rows per insert of run_artifacts (nine values each).
const LINKS_PER_STATEMENT: usize = 200;

/// The runs an import with a given hash stored: `$1` its key, `$2` the same without the prefix,
/// as runs stored before the prefix have it (`meta::import_hash`).
const RUNS_OF_IMPORT: &str = "SELECT id FROM runs WHERE import_hash IN ($1, $2) ORDER BY id";

/// The runs an import with this hash stored, if any.
async fn runs_of_import(store: &Store, import_hash: &str) -> Result<Vec<i64>, Error> {
    with_pool!(store, |pool| {
        Ok(sqlx::query_scalar(RUNS_OF_IMPORT)
            .bind(import_hash)
            .bind(legacy_import_hash(import_hash))
            .fetch_all(pool)
            .await?)
    })
}

pub(crate) async fn existing_outcome(
    store: &Store,
    run_ids: Vec<i64>,
) -> Result<ImportOutcome, Error> {
    let mut series = 0u64;
    let mut samples = 0u64;
    for id in &run_ids {
        let (n, total): (i64, i64) = with_pool!(store, |pool| {
            sqlx::query_as(
                "SELECT COUNT(*), CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM series WHERE run_id = $1",
            )
            .bind(id)
            .fetch_one(pool)
            .await?
        });
        series += n as u64;
        samples += total as u64;
    }
    Ok(ImportOutcome {
        run_ids,
        created: false,
        series,
        samples,
        warnings: Vec::new(),
        warning_count: 0,
        formats: Vec::new(),
        history_metrics: None,
    })
}
