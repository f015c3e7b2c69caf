//! Histories kept between passes in this process, so that a pass reads only the runs stored
//! since the one before rather than every run of every history it re-analyses: under a
//! stream of uploads to one benchmark, whole re-reads made a pass grow with the history.
//!
//! What is kept is checked before it is used: no build may have been placed on its branch
//! since (see [`load_many`]), and every kept point's build, and every new point's, must stand
//! at the same position on its branch when the branch is read after the points (a build placed
//! between two others shifts the ones after it); otherwise the history is read whole again.
//! Runs are never changed once stored, and run ids grow in the order runs become visible, so
//! the runs after the last one read are exactly the new ones: on SQLite there is one writer,
//! and on PostgreSQL every write transaction of every server holds the database's write lock
//! from its start to its commit (`store`'s `WRITE_LOCK`), so a run gets its id only after
//! every run with a lower id is committed or rolled back.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use store::{HistoryKey, Store};

use super::Loaded;
use super::lru::Lru;

/// A history as last read, the highest run id read, and how many builds its branch had
/// before the read.
struct Kept {
    /// Shared with the pass that read it, which is over before the next pass takes it: the
    /// next pass adds to it in place rather than copying every point of it.
    loaded: Arc<Loaded>,
    last_run: i64,
    builds: usize,
}

/// Kept histories by store ([`Store::instance`]: tests open many databases in one process)
/// and key, weighed in points.
type Cache = Mutex<Lru<(u64, HistoryKey), Kept>>;

fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(Lru::new(MAX_POINTS)))
}

/// Histories shorter than this many points are read whole and not kept (as with the
/// detector's state, [`super::KEEP_STATE_FROM`]: a profile touches tens of thousands of short
/// histories, and keeping them would cost more memory than reading them costs time).
const KEEP_FROM: usize = 64;

/// Points kept at most, all histories together (a point is about 130 bytes, and 16 more a
/// sample for its position and value): beyond
/// it, the histories used least recently are dropped ([`Lru`]) and read whole when next
/// needed. A lab's profiles make tens of thousands of long histories, which must not grow
/// the server's memory without end.
const MAX_POINTS: usize = 1_000_000;

/// [`super::load_many`], reading for each kept history only the runs after the last one read.
pub async fn load_many(store: &Store, keys: &[HistoryKey]) -> anyhow::Result<Vec<Arc<Loaded>>> {
    let mut kept = take(store, keys);
    // A run joins its history when its build is placed, which comes after the run is stored:
    // a build placed since a history was kept may bring runs with lower ids than the last one
    // read. Builds are never taken off a branch, so a count that grew says one was placed,
    // and the history is read whole. Counted before the points are read, so that a build
    // placed meanwhile is counted at the next pass.
    let builds = branch_builds(store, keys).await?;
    kept.retain(|key, k| builds.get(&key.branch_id) == Some(&k.builds));
    let after: Vec<i64> = keys
        .iter()
        .map(|k| kept.get(k).map_or(0, |k| k.last_run))
        .collect();
    let mut read = store.history_samples_after(keys, &after).await?;
    // A history whose builds moved is read again whole, in one statement (see `moved`).
    let moved = moved(store, keys, &kept, &read).await?;
    if !moved.is_empty() {
        let again: Vec<HistoryKey> = moved.iter().map(|&i| keys[i].clone()).collect();
        let whole = store.history_samples_many(&again).await?;
        for (&i, points) in moved.iter().zip(whole) {
            kept.remove(&keys[i]);
            read[i] = points;
        }
    }
    let mut out = Vec::with_capacity(keys.len());
    let mut keep = Vec::new();
    for (key, new) in keys.iter().zip(read) {
        let (mut loaded, last_before) = match kept.remove(key) {
            Some(k) => (Arc::unwrap_or_clone(k.loaded), k.last_run),
            None => (Loaded::new(key.clone(), []), 0),
        };
        // Only the new points can raise it: the kept ones are at most `last_before`.
        let last_run = new
            .iter()
            .map(|(p, _)| p.run_id)
            .fold(last_before, i64::max);
        merge(&mut loaded, new);
        let loaded = Arc::new(loaded);
        if loaded.points().len() >= KEEP_FROM {
            keep.push((
                (store.instance(), key.clone()),
                Kept {
                    loaded: Arc::clone(&loaded),
                    last_run,
                    builds: builds.get(&key.branch_id).copied().unwrap_or(0),
                },
            ));
        }
        out.push(loaded);
    }
    let mut dropped = Vec::new();
    let mut c = lock();
    for (key, k) in keep {
        let weight = k.loaded.points().len();
        dropped.extend(c.put(key, k, weight));
    }
    drop(c);
    drop(dropped);
    Ok(out)
}

fn lock() -> std::sync::MutexGuard<'static, Lru<(u64, HistoryKey), Kept>> {
    cache().lock().unwrap_or_else(|e| e.into_inner())
}

/// Takes the kept histories of `keys` out of the cache.
fn take(store: &Store, keys: &[HistoryKey]) -> HashMap<HistoryKey, Kept> {
    let mut c = lock();
    let mut taken = HashMap::new();
    for k in keys {
        if let Some(v) = c.take(&(store.instance(), k.clone())) {
            taken.insert(k.clone(), v);
        }
    }
    taken
}

/// How many builds each branch of `keys` has.
async fn branch_builds(store: &Store, keys: &[HistoryKey]) -> anyhow::Result<HashMap<i64, usize>> {
    let mut branches: Vec<i64> = keys.iter().map(|k| k.branch_id).collect();
    branches.sort_unstable();
    branches.dedup();
    let mut out = HashMap::new();
    for b in branches {
        out.insert(b, store.branch_build_count(b).await?);
    }
    Ok(out)
}

/// Indexes of the keys whose kept points, or the points just read after them, do not stand
/// where their builds stand now. The places are read after the points: a build placed in the
/// middle before the points were read moved the kept points, and one placed since moved the
/// new ones, so either way a kept history and its new points are only used together when
/// both agree with one reading of the branch (another server may place builds at any time).
async fn moved(
    store: &Store,
    keys: &[HistoryKey],
    kept: &HashMap<HistoryKey, Kept>,
    read: &[Vec<(store::HistoryPoint, Vec<f64>)>],
) -> anyhow::Result<Vec<usize>> {
    if kept.is_empty() {
        return Ok(Vec::new());
    }
    let mut branches: Vec<i64> = kept.keys().map(|k| k.branch_id).collect();
    branches.sort_unstable();
    branches.dedup();
    let mut position: HashMap<(i64, i64), i64> = HashMap::new();
    for b in branches {
        for (build, pos) in store.branch_positions(b).await? {
            position.insert((b, build), pos);
        }
    }
    Ok(keys
        .iter()
        .zip(read)
        .enumerate()
        .filter(|(_, (key, new))| {
            kept.get(*key).is_some_and(|k| {
                !all_stand(&position, key.branch_id, k.loaded.points().iter())
                    || !all_stand(&position, key.branch_id, new.iter().map(|(p, _)| p))
            })
        })
        .map(|(i, _)| i)
        .collect())
}

/// Whether each of `points` stands where `position` (by branch and build) puts its build.
/// Points come in branch order, a build's together: each build is looked up once, not once
/// per run (a build uploaded thousands of times made every pass look them all up).
fn all_stand<'a>(
    position: &HashMap<(i64, i64), i64>,
    branch_id: i64,
    mut points: impl Iterator<Item = &'a store::HistoryPoint>,
) -> bool {
    let mut last = None;
    points.all(|p| {
        let at = (p.build_id, p.position);
        let stands = last == Some(at) || position.get(&(branch_id, at.0)) == Some(&at.1);
        last = Some(at);
        stands
    })
}

/// Adds `new` points (with their samples, in branch order as the store reads them) to
/// `loaded`, keeping branch order: by position, then run id. New runs usually come after every
/// kept one; a run added to an older build goes where a whole read would put it.
fn merge(loaded: &mut Loaded, new: Vec<(store::HistoryPoint, Vec<f64>)>) {
    let order = |p: &store::HistoryPoint| (p.position, p.run_id);
    let at_end = match (loaded.points().last(), new.first()) {
        (Some(last), Some((first, _))) => order(last) < order(first),
        _ => true,
    };
    if at_end {
        loaded.extend(new);
        return;
    }
    let mut both = loaded.take_runs();
    both.extend(new);
    both.sort_by_key(|(p, _)| order(p));
    loaded.extend(both);
}

/// Drops every kept history (the next pass reads each whole).
pub fn forget() {
    lock().clear();
}

/// Whether the history `key` of `store` is kept for the next pass.
pub fn is_kept(store: &Store, key: &HistoryKey) -> bool {
    lock().contains(&(store.instance(), key.clone()))
}
