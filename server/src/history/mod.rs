//! Histories and alerts: after an import, the series it touched are re-analysed by the
//! change-point detector and each new change point becomes an alert. Pages and commands only
//! read what this stored; nothing is detected on page load.

pub mod aggregate;
pub mod kept;
pub mod notify;
pub mod passes;

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use compare::Direction;
use compare::changepoint::{self, DetectSettings, History, SeriesAnalysis};
use store::{HistoryKey, HistoryPoint, ImportOutcome, NewAlert, Placement, Store};

/// One history read from the store: its runs and every run's samples, in branch order.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub key: HistoryKey,
    pub points: Vec<HistoryPoint>,
    /// Samples of `points[i]`.
    pub values: Vec<Vec<f64>>,
}

impl Loaded {
    /// (position, value) of every sample, as the detector takes them.
    pub fn flat(&self) -> (Vec<i64>, Vec<f64>) {
        let mut pos = Vec::new();
        let mut vals = Vec::new();
        for (p, v) in self.points.iter().zip(&self.values) {
            for x in v {
                pos.push(p.position);
                vals.push(*x);
            }
        }
        (pos, vals)
    }

    pub fn unit(&self) -> &str {
        self.points.first().map_or("", |p| p.unit.as_str())
    }

    pub fn direction(&self) -> Direction {
        self.points
            .first()
            .and_then(|p| Direction::parse(&p.direction))
            .unwrap_or(Direction::LowerIsBetter)
    }
}

/// Reads a history key's runs and their samples (through the store's sample reads).
pub async fn load(store: &Store, key: &HistoryKey) -> anyhow::Result<Loaded> {
    let mut all = load_many(store, std::slice::from_ref(key)).await?;
    Ok(all.pop().expect("one key, one history"))
}

/// [`load`] of many keys: one query per history, each block read once for its runs and
/// samples.
pub async fn load_many(store: &Store, keys: &[HistoryKey]) -> anyhow::Result<Vec<Loaded>> {
    let read = store.history_samples_many(keys).await?;
    Ok(keys
        .iter()
        .zip(read)
        .map(|(key, read)| {
            let (points, values) = read.into_iter().unzip();
            Loaded {
                key: key.clone(),
                points,
                values,
            }
        })
        .collect())
}

/// Detector state per history key kept between imports in this process, so a run appended at
/// the end of a history re-analyses only the windows it falls in.
type Cache = Mutex<HashMap<HistoryKey, History>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(Cache::default)
}

/// Histories shorter than this many samples are analysed whole every time and keep no state:
/// their whole analysis costs less than the state would weigh (a profile's import re-analyses
/// tens of thousands of histories of a few points each).
const KEEP_STATE_FROM: usize = 64;

/// The analysis of one history, incremental when this process analysed its prefix before:
/// the samples beyond it are pushed into the kept state, otherwise the series is analysed
/// whole (and kept for the next run when it is long enough to be worth it).
pub fn analyse(
    key: &HistoryKey,
    positions: &[i64],
    values: &[f64],
) -> anyhow::Result<SeriesAnalysis> {
    let settings = DetectSettings::default();
    if values.len() < KEEP_STATE_FROM {
        return Ok(changepoint::analyse(positions, values, &settings)?);
    }
    let mut cache = cache()
        .lock()
        .map_err(|_| anyhow::anyhow!("detector cache poisoned"))?;
    if let Some(h) = cache.get_mut(key) {
        let (done_pos, done_vals) = h.samples();
        let prefix = done_vals.len();
        if prefix <= values.len()
            && done_pos == &positions[..prefix]
            && done_vals == &values[..prefix]
        {
            for (p, v) in positions[prefix..].iter().zip(&values[prefix..]) {
                h.push(*p, *v)?;
            }
            return Ok(h.analysis().clone());
        }
    }
    let h = History::new(positions, values, settings)?;
    let out = h.analysis().clone();
    cache.insert(key.clone(), h);
    Ok(out)
}

/// Places the builds of `run_ids` on the branch and re-analyses every history those runs
/// add to. Returns the ids of the alert groups that received a new alert.
pub async fn after_import(
    store: &Store,
    run_ids: &[i64],
    placement: &Placement,
) -> anyhow::Result<Vec<i64>> {
    place(store, run_ids, placement).await?;
    let keys = store.history_keys_of_runs(run_ids).await?;
    detect_keys(store, &keys).await
}

/// [`after_import`] of the runs an import just stored, whose histories the import named: they
/// are not read back from the runs' blocks (a profile's run is tens of thousands of blocks).
pub async fn after_stored(
    store: &Store,
    outcome: &ImportOutcome,
    placement: &Placement,
) -> anyhow::Result<Vec<i64>> {
    let Some(metrics) = &outcome.history_metrics else {
        return after_import(store, &outcome.run_ids, placement).await;
    };
    place(store, &outcome.run_ids, placement).await?;
    let keys = store.history_keys_of_metrics(metrics).await?;
    detect_keys(store, &keys).await
}

/// Places the builds of `run_ids` on the branch.
async fn place(store: &Store, run_ids: &[i64], placement: &Placement) -> anyhow::Result<()> {
    for build in store.builds_to_place(run_ids, &placement.branch).await? {
        store.place_build(build, placement).await?;
    }
    Ok(())
}

/// A re-analysed series: its history series id, what was read and the analysis.
type Analysed = (i64, std::sync::Arc<Loaded>, SeriesAnalysis);

/// Re-analyses `keys` and records new alerts, with q-values across every series of each
/// benchmark on the branch.
pub async fn detect_keys(store: &Store, keys: &[HistoryKey]) -> anyhow::Result<Vec<i64>> {
    let loaded = kept::load_many(store, keys).await?;
    let settings = DetectSettings::default();
    let mut groups = Vec::new();
    // Per (branch, benchmark): the analyses of the keys re-analysed.
    let mut by_bench: HashMap<(i64, String), Vec<Analysed>> = HashMap::new();
    // Every analysis on one blocking thread: a profile re-analyses tens of thousands of
    // series, most of them a few points long, and a hand-off each cost more than the work.
    let analysed = tokio::task::spawn_blocking(move || {
        loaded
            .into_iter()
            .map(|loaded| {
                let (pos, vals) = loaded.flat();
                let analysis = analyse(&loaded.key, &pos, &vals)?;
                Ok((loaded, analysis))
            })
            .collect::<anyhow::Result<Vec<_>>>()
    })
    .await??;
    let directions: Vec<String> = analysed
        .iter()
        .map(|(loaded, _)| {
            loaded
                .points
                .first()
                .map_or("lower_is_better", |p| p.direction.as_str())
                .to_string()
        })
        .collect();
    // Series with a change point first: only they can raise an alert, so only their ids are
    // sent back and only their benchmarks' families are read below. Every series' p-values
    // are saved all the same, as they are its benchmark's family for the q-values (most of a
    // profile's series have no change point).
    let (changed, unchanged): (Vec<_>, Vec<_>) = analysed
        .into_iter()
        .zip(directions)
        .partition(|((_, analysis), _)| !analysis.change_points.is_empty());
    let saved: Vec<store::SavedSeries<'_>> = changed
        .iter()
        .chain(&unchanged)
        .map(|((loaded, analysis), direction)| store::SavedSeries {
            key: &loaded.key,
            direction,
            unit: loaded.unit(),
            tested_p: &analysis.tested_p,
        })
        .collect();
    let ids = store
        .save_history_series_ids_first(&saved, changed.len())
        .await?;
    drop(saved);
    drop(unchanged);
    let changed = changed.into_iter().map(|(a, _)| a);
    for (hs, (loaded, analysis)) in ids.into_iter().zip(changed) {
        by_bench
            .entry((loaded.key.branch_id, loaded.key.benchmark.clone()))
            .or_default()
            .push((hs, loaded, analysis));
    }
    for ((branch_id, benchmark), done) in by_bench {
        // The family: every series of the benchmark, the re-analysed ones with their new
        // p-values (save_history_series stored them too).
        let family = store.benchmark_tested_p(branch_id, &benchmark).await?;
        let mut analyses: Vec<SeriesAnalysis> = Vec::with_capacity(family.len());
        let mut index: HashMap<i64, usize> = HashMap::new();
        for (id, tested_p) in family {
            index.insert(id, analyses.len());
            analyses.push(SeriesAnalysis {
                change_points: Vec::new(),
                tested_p,
            });
        }
        for (hs, _, a) in &done {
            if let Some(&i) = index.get(hs) {
                analyses[i].change_points = a.change_points.clone();
            }
        }
        changepoint::adjust(&mut analyses, &settings);
        for (hs, loaded, _) in &done {
            let Some(&i) = index.get(hs) else { continue };
            let build_at: HashMap<i64, i64> = loaded
                .points
                .iter()
                .map(|p| (p.position, p.build_id))
                .collect();
            for cp in &analyses[i].change_points {
                let (Some(&before), Some(&after)) =
                    (build_at.get(&cp.build_before), build_at.get(&cp.position))
                else {
                    continue;
                };
                let alert = NewAlert {
                    history_series_id: *hs,
                    branch_id,
                    build_before_id: before,
                    build_after_id: after,
                    before_median: cp.before.median,
                    after_median: cp.after.median,
                    change_pct: cp.change_pct,
                    low_pct: cp.interval.low_pct,
                    high_pct: cp.interval.high_pct,
                    p: cp.p,
                    q: cp.q,
                    kind: cp.kind(loaded.direction()).to_string(),
                };
                if let Some(g) = store.insert_alert(&alert).await? {
                    groups.push(g);
                }
            }
        }
    }
    groups.sort_unstable();
    groups.dedup();
    Ok(groups)
}

/// [`after_import`] for the server: the runs are placed before the answer, and their
/// histories re-analysed in the background, in a pass shared with the uploads stored meanwhile
/// (see `passes`); detection failures are logged, and new groups go to the webhook.
pub async fn after_upload(
    state: &crate::AppState,
    outcome: &ImportOutcome,
    build: &str,
    placement: &Placement,
) -> Result<(), crate::AppError> {
    state
        .history_passes
        .after_stored(
            &state.store,
            outcome,
            build,
            placement,
            state.config.webhook.clone(),
        )
        .await
        .map_err(crate::AppError::BadRequest)
}

/// Drops the detector state and the histories kept between imports (the next analysis of
/// each series reads and analyses it whole).
pub fn forget_state() {
    if let Ok(mut c) = cache().lock() {
        c.clear();
    }
    kept::forget();
}
