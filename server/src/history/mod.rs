//! Histories and alerts: after an import, the series it touched are re-analysed by the
//! change-point detector and each new change point becomes an alert. Pages and commands only
//! read what this stored; nothing is detected on page load.

pub mod aggregate;
pub mod kept;
mod lru;
pub mod notify;
pub mod passes;

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use compare::Direction;
use compare::changepoint::{self, DetectSettings, History, SeriesAnalysis};
use lru::Lru;
use store::{HistoryKey, HistoryPoint, ImportOutcome, NewAlert, Placement, Store};

/// One history read from the store: its runs and every run's samples, in branch order.
#[derive(Debug, Clone)]
pub struct Loaded {
    pub key: HistoryKey,
    points: Vec<HistoryPoint>,
    /// Where the samples of `points[i]` end in the flat arrays (they start where the run
    /// before ends).
    ends: Vec<usize>,
    /// Position and value of every sample, in order ([`Loaded::flat`]): the one copy of the
    /// samples, grown with the runs, as every pass analyses a kept history whole and walking
    /// one small vector per run cost it a cache miss per run (most of a pass's own time at
    /// tens of thousands of runs).
    flat_pos: Vec<i64>,
    flat_vals: Vec<f64>,
}

impl Loaded {
    /// The history `key` of `runs` (each run's point with its samples, in branch order).
    pub fn new(
        key: HistoryKey,
        runs: impl IntoIterator<Item = (HistoryPoint, Vec<f64>)>,
    ) -> Loaded {
        let mut loaded = Loaded {
            key,
            points: Vec::new(),
            ends: Vec::new(),
            flat_pos: Vec::new(),
            flat_vals: Vec::new(),
        };
        loaded.extend(runs);
        loaded
    }

    /// The runs, in branch order.
    pub fn points(&self) -> &[HistoryPoint] {
        &self.points
    }

    /// The samples of each run of [`Loaded::points`], in the same order.
    pub fn values(&self) -> impl Iterator<Item = &[f64]> + '_ {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(&self.ends)
            .map(|(start, &end)| &self.flat_vals[start..end])
    }

    /// Adds runs after the ones held (callers keep branch order).
    pub fn extend(&mut self, runs: impl IntoIterator<Item = (HistoryPoint, Vec<f64>)>) {
        for (p, v) in runs {
            self.flat_pos
                .extend(std::iter::repeat_n(p.position, v.len()));
            self.flat_vals.extend_from_slice(&v);
            self.ends.push(self.flat_vals.len());
            self.points.push(p);
        }
    }

    /// Takes every run out, in order, leaving the history empty.
    pub fn take_runs(&mut self) -> Vec<(HistoryPoint, Vec<f64>)> {
        let values: Vec<Vec<f64>> = self.values().map(<[f64]>::to_vec).collect();
        self.ends.clear();
        self.flat_pos.clear();
        self.flat_vals.clear();
        std::mem::take(&mut self.points)
            .into_iter()
            .zip(values)
            .collect()
    }

    /// (position, value) of every sample, as the detector takes them.
    pub fn flat(&self) -> (&[i64], &[f64]) {
        (&self.flat_pos, &self.flat_vals)
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
        .map(|(key, read)| Loaded::new(key.clone(), read))
        .collect())
}

/// Detector state per history key kept between imports in this process, so a run appended at
/// the end of a history re-analyses only the windows it falls in; weighed in samples.
type Cache = Mutex<Lru<HistoryKey, History>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(Lru::new(MAX_STATE_SAMPLES)))
}

fn states() -> std::sync::MutexGuard<'static, Lru<HistoryKey, History>> {
    cache().lock().unwrap_or_else(|e| e.into_inner())
}

/// Histories shorter than this many samples are analysed whole every time and keep no state:
/// their whole analysis costs less than the state would weigh (a profile's import re-analyses
/// tens of thousands of histories of a few points each).
const KEEP_STATE_FROM: usize = 64;

/// Samples of kept detector states at most, all histories together (a state holds each
/// sample's position and value and its builds' sums, about 40 bytes a sample): beyond it, the
/// states used least recently are dropped, and their histories analysed whole when next
/// needed. A lab's profiles make tens of thousands of long histories.
const MAX_STATE_SAMPLES: usize = 2_000_000;

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
    // Taken out while it is worked on, so that the cache's lock is held only to take and put.
    let kept = states().take(key);
    let extended = kept.and_then(|mut h| {
        let (done_pos, done_vals) = h.samples();
        let prefix = done_vals.len();
        let extends = prefix <= values.len()
            && done_pos == &positions[..prefix]
            && done_vals == &values[..prefix];
        if !extends {
            return None;
        }
        for (p, v) in positions[prefix..].iter().zip(&values[prefix..]) {
            if h.push(*p, *v).is_err() {
                return None;
            }
        }
        Some(h)
    });
    let h = match extended {
        Some(h) => h,
        None => History::new(positions, values, settings)?,
    };
    let out = h.analysis().clone();
    // Bound to a name so that what the put drops is freed after the lock (a temporary of
    // the statement) is let go.
    let dropped = states().put(key.clone(), h, values.len());
    drop(dropped);
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
                let analysis = analyse(&loaded.key, pos, vals)?;
                Ok((loaded, analysis))
            })
            .collect::<anyhow::Result<Vec<_>>>()
    })
    .await??;
    let directions: Vec<String> = analysed
        .iter()
        .map(|(loaded, _)| {
            loaded
                .points()
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
                .points()
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
    states().clear();
    kept::forget();
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A key of its own per test: the detector states are the process's.
    fn key(metric: &str) -> HistoryKey {
        HistoryKey {
            branch_id: 1,
            branch: "main".into(),
            machine_id: 1,
            machine: "m".into(),
            benchmark: "analyse-test".into(),
            params_key: String::new(),
            metric: metric.into(),
        }
    }

    /// A series with a step after build 60, a little noise on each run.
    fn series(builds: i64) -> (Vec<i64>, Vec<f64>) {
        let (mut pos, mut vals) = (Vec::new(), Vec::new());
        for b in 0..builds {
            for r in 0..2 {
                pos.push(b);
                let level = if b < 60 { 10.0 } else { 11.0 };
                vals.push(level + ((b * 7 + r * 3) % 5) as f64 * 0.01);
            }
        }
        (pos, vals)
    }

    #[test]
    fn kept_states_give_what_a_whole_analysis_gives() {
        let settings = DetectSettings::default();
        let k = key("extended");
        let (pos, vals) = series(50);
        let first = analyse(&k, &pos, &vals).unwrap();
        assert_eq!(first, changepoint::analyse(&pos, &vals, &settings).unwrap());
        // Extended by runs past the step: pushed into the kept state.
        let (pos, vals) = series(80);
        let extended = analyse(&k, &pos, &vals).unwrap();
        let whole = changepoint::analyse(&pos, &vals, &settings).unwrap();
        assert_eq!(extended, whole);
        assert!(!whole.change_points.is_empty(), "{whole:?}");
        // A changed prefix is analysed whole again, not pushed onto the kept state.
        let (pos, mut vals) = series(80);
        vals[3] += 5.0;
        let changed = analyse(&k, &pos, &vals).unwrap();
        assert_eq!(
            changed,
            changepoint::analyse(&pos, &vals, &settings).unwrap()
        );
        assert_ne!(changed, extended);
    }
}
