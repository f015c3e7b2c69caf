//! Detector state kept between passes, so that a pass reads and analyses only what is new.
//!
//! A history analysed before keeps its detector state, the builds its points belong to and the
//! [`HistoryMark`] of the points it saw. The next pass asks the store for each such history's
//! mark and for the points of runs newer than those seen. When these all follow the last point
//! seen and the kept mark plus them equals the stored mark, nothing before was added, removed
//! or moved (another server or a command may have written), and they are pushed into the
//! state: only the windows they fall in are re-analysed, and the rest of the history is never
//! read again. Otherwise the history is read and analysed whole, as one never seen.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use compare::Direction;
use compare::changepoint::{self, DetectSettings, History, SeriesAnalysis};
use store::{HistoryKey, HistoryMark, HistoryPoint, Store};

/// Histories shorter than this many samples are analysed whole every time and keep no state:
/// their whole analysis costs less than the state would weigh (a profile's import re-analyses
/// tens of thousands of histories of a few points each).
const KEEP_STATE_FROM: usize = 64;

/// What alerts need of a history's points: its unit and direction (of its first point) and the
/// build at each position.
#[derive(Debug, Clone, Default)]
pub struct Placed {
    pub unit: String,
    pub direction: String,
    /// (position, build id), one per build, by position.
    builds: Vec<(i64, i64)>,
}

impl Placed {
    fn add(&mut self, p: &HistoryPoint) {
        if self.builds.is_empty() {
            self.unit.clone_from(&p.unit);
            self.direction.clone_from(&p.direction);
        }
        if self.builds.last().map(|b| b.0) != Some(p.position) {
            self.builds.push((p.position, p.build_id));
        }
    }

    fn of<'a>(points: impl IntoIterator<Item = &'a HistoryPoint>) -> Placed {
        let mut placed = Placed::default();
        for p in points {
            placed.add(p);
        }
        placed
    }

    /// The build at `position`, if a point is there.
    pub fn build_at(&self, position: i64) -> Option<i64> {
        let i = self.builds.binary_search_by_key(&position, |b| b.0).ok()?;
        Some(self.builds[i].1)
    }

    /// The direction as stored; a history without points is lower-is-better.
    pub fn direction_name(&self) -> &str {
        if self.builds.is_empty() {
            "lower_is_better"
        } else {
            &self.direction
        }
    }

    pub fn direction(&self) -> Direction {
        Direction::parse(&self.direction).unwrap_or(Direction::LowerIsBetter)
    }
}

/// A history brought up to date by a pass.
pub struct Updated {
    pub key: HistoryKey,
    pub placed: Placed,
    pub analysis: SeriesAnalysis,
}

/// One history's kept state.
struct Kept {
    history: History,
    placed: Placed,
    mark: HistoryMark,
    /// (position, run id) of the last point seen.
    last: (i64, i64),
    /// The newest run id seen.
    newest: i64,
}

/// How a store's histories were brought up to date so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Reads {
    /// From a kept state, reading only the points after it.
    pub extended: u64,
    /// Read and analysed whole.
    pub whole: u64,
}

/// Kept states by store ([`Store::instance`]) and history key, and each store's [`Reads`].
#[derive(Default)]
struct Cache {
    kept: HashMap<(u64, HistoryKey), Kept>,
    reads: HashMap<u64, Reads>,
}

fn locked() -> anyhow::Result<std::sync::MutexGuard<'static, Cache>> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE
        .get_or_init(Mutex::default)
        .lock()
        .map_err(|_| anyhow::anyhow!("detector cache poisoned"))
}

/// Drops every kept state (the next analysis of each history is whole).
pub fn forget() {
    if let Ok(mut c) = locked() {
        c.kept.clear();
    }
}

/// How `store`'s histories were brought up to date so far in this process.
pub fn reads(store: &Store) -> Reads {
    locked()
        .map(|c| c.reads.get(&store.instance()).copied().unwrap_or_default())
        .unwrap_or_default()
}

/// Reads what is new in each of `keys` and analyses it, in the order of `keys`.
pub async fn update_many(store: &Store, keys: &[HistoryKey]) -> anyhow::Result<Vec<Updated>> {
    let instance = store.instance();
    // The kept histories among the keys, with what they saw.
    let seen: Vec<(usize, HistoryMark, (i64, i64), i64)> = {
        let c = locked()?;
        keys.iter()
            .enumerate()
            .filter_map(|(i, k)| {
                c.kept
                    .get(&(instance, k.clone()))
                    .map(|kept| (i, kept.mark, kept.last, kept.newest))
            })
            .collect()
    };
    let mut out: Vec<Option<Updated>> = (0..keys.len()).map(|_| None).collect();
    if !seen.is_empty() {
        let seen_keys: Vec<HistoryKey> = seen.iter().map(|s| keys[s.0].clone()).collect();
        let newest: Vec<i64> = seen.iter().map(|s| s.3).collect();
        // The marks first: a point stored between the two reads is then in the tail but not
        // in the mark, and the history is read whole, rather than the other way round.
        let stored = store.history_marks(&seen_keys).await?;
        let tails = store.history_samples_newer(&seen_keys, &newest).await?;
        let extended = tokio::task::spawn_blocking(move || -> anyhow::Result<_> {
            let mut c = locked()?;
            let mut done = Vec::new();
            for ((key, (i, mark, last, newest)), (stored, tail)) in seen_keys
                .into_iter()
                .zip(seen)
                .zip(stored.into_iter().zip(tails))
            {
                let entry = (instance, key);
                let Some(kept) = c.kept.get_mut(&entry) else {
                    continue;
                };
                // The tail may hold points stored after the mark was read: the kept points
                // and a prefix of the tail must make the stored mark. The rest is left to the
                // next pass (their uploads' passes come after this one).
                let mut expected = mark;
                let mut upto = (expected == stored).then_some(0);
                for (n, (p, _)) in tail.iter().enumerate() {
                    if upto.is_some() {
                        break;
                    }
                    expected.add(p.position, p.run_id);
                    if expected == stored {
                        upto = Some(n + 1);
                    }
                }
                // New runs must follow the last point seen, to be pushed in branch order.
                let appended = tail.iter().all(|(p, _)| (p.position, p.run_id) > last);
                let Some(upto) = upto.filter(|_| {
                    appended && kept.mark == mark && kept.last == last && kept.newest == newest
                }) else {
                    // Changed before the last point seen: analysed whole below.
                    c.kept.remove(&entry);
                    continue;
                };
                let tail = &tail[..upto];
                let pushed = tail.iter().try_for_each(|(p, values)| {
                    for &v in values {
                        kept.history.push(p.position, v)?;
                    }
                    kept.placed.add(p);
                    kept.last = (p.position, p.run_id);
                    kept.newest = kept.newest.max(p.run_id);
                    Ok::<(), changepoint::DetectError>(())
                });
                if let Err(e) = pushed {
                    // Part of the tail is in the state: it is no longer what its mark says.
                    c.kept.remove(&entry);
                    return Err(e.into());
                }
                kept.mark = expected;
                done.push((
                    i,
                    Updated {
                        key: entry.1.clone(),
                        placed: kept.placed.clone(),
                        analysis: kept.history.analysis().clone(),
                    },
                ));
            }
            c.reads.entry(instance).or_default().extended += done.len() as u64;
            Ok(done)
        })
        .await??;
        for (i, u) in extended {
            out[i] = Some(u);
        }
    }

    // The others: read and analysed whole, kept when long enough.
    let whole: Vec<HistoryKey> = keys
        .iter()
        .zip(&out)
        .filter(|(_, u)| u.is_none())
        .map(|(k, _)| k.clone())
        .collect();
    if !whole.is_empty() {
        let read = store.history_samples_many(&whole).await?;
        // Every analysis on one blocking thread: a profile re-analyses tens of thousands of
        // series, most of them a few points long, and a hand-off each cost more than the work.
        let analysed = tokio::task::spawn_blocking(move || -> anyhow::Result<_> {
            let settings = DetectSettings::default();
            let mut done = Vec::with_capacity(whole.len());
            locked()?.reads.entry(instance).or_default().whole += whole.len() as u64;
            for (key, points) in whole.into_iter().zip(read) {
                let (mut positions, mut values) = (Vec::new(), Vec::new());
                let mut mark = HistoryMark::default();
                for (p, vals) in &points {
                    positions.extend(std::iter::repeat_n(p.position, vals.len()));
                    values.extend_from_slice(vals);
                    mark.add(p.position, p.run_id);
                }
                let placed = Placed::of(points.iter().map(|(p, _)| p));
                let entry = (instance, key);
                let analysis = match points.last() {
                    Some((p, _)) if values.len() >= KEEP_STATE_FROM => {
                        let history = History::new(&positions, &values, settings)?;
                        let analysis = history.analysis().clone();
                        let last = (p.position, p.run_id);
                        let newest = points.iter().map(|(p, _)| p.run_id).max().unwrap_or(0);
                        locked()?.kept.insert(
                            entry.clone(),
                            Kept {
                                history,
                                placed: placed.clone(),
                                mark,
                                last,
                                newest,
                            },
                        );
                        analysis
                    }
                    _ => {
                        locked()?.kept.remove(&entry);
                        changepoint::analyse(&positions, &values, &settings)?
                    }
                };
                done.push(Updated {
                    key: entry.1,
                    placed,
                    analysis,
                });
            }
            Ok(done)
        })
        .await??;
        let mut analysed = analysed.into_iter();
        for slot in out.iter_mut().filter(|u| u.is_none()) {
            *slot = analysed.next();
        }
    }
    Ok(out.into_iter().flatten().collect())
}
