//! Histories: builds placed on branches in commit order, and the runs of one series over them.
//!
//! Sample values are not read here: callers get series ids and read them with
//! [`crate::series_values`], so the history follows however samples are stored.

use std::collections::HashMap;

use sqlx::Row as _;

use crate::history_batch::{has_scope, scope_entry};
use crate::with_pool;
use crate::{Error, Store};

/// Where a new build goes on a branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    pub branch: String,
    /// Commit id of the build's parent on the branch: the build goes right after it.
    pub parent: Option<String>,
    /// Commit time (unix seconds): the build goes before the first later one.
    pub commit_time: Option<i64>,
}

impl Placement {
    /// The default branch, upload order.
    pub fn main() -> Self {
        Placement {
            branch: "main".into(),
            parent: None,
            commit_time: None,
        }
    }
}

/// A build in its branch's order.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BranchBuild {
    pub build_id: i64,
    pub label: String,
    pub commit: Option<String>,
    pub position: i64,
    pub created_at: i64,
}

/// One series over a branch's builds: a benchmark's metric on one machine with one set of
/// parameters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct HistoryKey {
    pub branch_id: i64,
    pub branch: String,
    pub machine_id: i64,
    pub machine: String,
    pub benchmark: String,
    pub params_key: String,
    pub metric: String,
}

/// One run's series of a history key: its build, the build's position and the series id whose
/// samples [`crate::series_values`] reads.
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryPoint {
    pub build_id: i64,
    pub label: String,
    pub position: i64,
    pub run_id: i64,
    pub series_id: i64,
    pub unit: String,
    pub direction: String,
}

/// Which history keys to list; `None` matches every value.
#[derive(Debug, Clone, Default)]
pub struct KeyFilter {
    pub branch: Option<String>,
    pub benchmark: Option<String>,
    pub metric: Option<String>,
    pub machine: Option<String>,
    pub params_key: Option<String>,
}

/// Name ids per query of [`Store::names_by_id`] (SQLite limits the number of bound parameters).
const NAMES_PER_QUERY: usize = 500;

/// Runs per query of [`Store::history_keys_of_metrics`].
const RUNS_PER_QUERY: usize = 500;

/// The series a history follows: whole-run samples, not per-CPU parts or someone's summaries.
const HISTORY_SERIES: &str = "s.scope = 'all' AND s.label IS NULL AND s.statistic IS NULL";

impl Store {
    async fn branch_id(&self, name: &str) -> Result<i64, Error> {
        with_pool!(self, |pool| {
            if name.trim().is_empty() {
                return Err(Error::Invalid("a branch name must not be empty".into()));
            }
            // Read first: every upload names its branch, and the insert is a write.
            let known: Option<i64> = sqlx::query_scalar("SELECT id FROM branches WHERE name = $1")
                .bind(name)
                .fetch_optional(pool)
                .await?;
            if let Some(id) = known {
                return Ok(id);
            }
            let mut tx = self.begin_write_on(pool).await?;
            sqlx::query("INSERT INTO branches (name) VALUES ($1) ON CONFLICT (name) DO NOTHING")
                .bind(name)
                .execute(&mut *tx)
                .await?;
            let id = sqlx::query_scalar("SELECT id FROM branches WHERE name = $1")
                .bind(name)
                .fetch_one(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok(id)
        })
    }

    /// Places `build_id` on a branch (once: a build already there keeps its place). Returns
    /// the branch id.
    pub async fn place_build(&self, build_id: i64, placement: &Placement) -> Result<i64, Error> {
        with_pool!(self, |pool| {
            let branch_id = self.branch_id(&placement.branch).await?;
            // A build keeps its first place: most runs are of a build placed before, which a
            // read outside the writer finds.
            let placed: Option<i64> = sqlx::query_scalar(
                "SELECT position FROM build_branches WHERE build_id = $1 AND branch_id = $2",
            )
            .bind(build_id)
            .bind(branch_id)
            .fetch_optional(pool)
            .await?;
            if placed.is_some() {
                return Ok(branch_id);
            }
            let mut tx = self.begin_write_on(pool).await?;
            let known: Option<i64> = sqlx::query_scalar(
                "SELECT position FROM build_branches WHERE build_id = $1 AND branch_id = $2",
            )
            .bind(build_id)
            .bind(branch_id)
            .fetch_optional(&mut *tx)
            .await?;
            if known.is_some() {
                tx.commit().await?;
                return Ok(branch_id);
            }
            let commit: Option<String> =
                sqlx::query_scalar("SELECT commit_sha FROM builds WHERE id = $1")
                    .bind(build_id)
                    .fetch_one(&mut *tx)
                    .await?;
            // The first build that must come after the new one, if any: the build after the
            // parent, else the first with a later commit time, else the first later in git order.
            let after: Option<i64> = if let Some(parent) = &placement.parent {
                sqlx::query_scalar(
                    "SELECT bb.position + 1 FROM build_branches bb JOIN builds b ON b.id = bb.build_id \
                     WHERE bb.branch_id = $1 AND (b.commit_sha = $2 OR b.label = $2) \
                     ORDER BY bb.position DESC LIMIT 1",
                )
                .bind(branch_id)
                .bind(parent)
                .fetch_optional(&mut *tx)
                .await?
            } else if let Some(t) = placement.commit_time {
                sqlx::query_scalar(
                    "SELECT MIN(position) FROM build_branches WHERE branch_id = $1 AND commit_time > $2",
                )
                .bind(branch_id)
                .bind(t)
                .fetch_one(&mut *tx)
                .await?
            } else if let Some(c) = &commit {
                sqlx::query_scalar(
                    "SELECT MIN(bb.position) FROM build_branches bb JOIN builds b ON b.id = bb.build_id \
                     JOIN branch_commits mine ON mine.branch_id = bb.branch_id AND mine.commit_sha = $2 \
                     JOIN branch_commits other ON other.branch_id = bb.branch_id AND other.commit_sha = b.commit_sha \
                     WHERE bb.branch_id = $1 AND other.seq > mine.seq",
                )
                .bind(branch_id)
                .bind(c)
                .fetch_one(&mut *tx)
                .await?
            } else {
                None
            };
            let end: i64 = sqlx::query_scalar(
                "SELECT COALESCE(MAX(position), -1) + 1 FROM build_branches WHERE branch_id = $1",
            )
            .bind(branch_id)
            .fetch_one(&mut *tx)
            .await?;
            let position = after.map_or(end, |a| a.min(end));
            if position < end {
                sqlx::query(
                    "UPDATE build_branches SET position = position + 1 \
                     WHERE branch_id = $1 AND position >= $2",
                )
                .bind(branch_id)
                .bind(position)
                .execute(&mut *tx)
                .await?;
            }
            sqlx::query(
                "INSERT INTO build_branches (build_id, branch_id, position, parent, commit_time) \
                 VALUES ($1, $2, $3, $4, $5)",
            )
            .bind(build_id)
            .bind(branch_id)
            .bind(position)
            .bind(&placement.parent)
            .bind(placement.commit_time)
            .execute(&mut *tx)
            .await?;
            tx.commit().await?;
            Ok(branch_id)
        })
    }

    /// Records a branch's first-parent commit order (`commits`, oldest first) and re-orders the
    /// builds already on it: builds of known commits in git order, the others after them in
    /// their previous order. Returns how many builds on the branch have a known commit.
    pub async fn import_commit_order(
        &self,
        branch: &str,
        commits: &[String],
    ) -> Result<usize, Error> {
        with_pool!(self, |pool| {
            let branch_id = self.branch_id(branch).await?;
            let mut tx = self.begin_write_on(pool).await?;
            sqlx::query("DELETE FROM branch_commits WHERE branch_id = $1")
                .bind(branch_id)
                .execute(&mut *tx)
                .await?;
            for (seq, sha) in commits.iter().enumerate() {
                sqlx::query(
                    "INSERT INTO branch_commits (branch_id, commit_sha, seq) VALUES ($1, $2, $3) \
                     ON CONFLICT (branch_id, commit_sha) DO NOTHING",
                )
                .bind(branch_id)
                .bind(sha)
                .bind(seq as i64)
                .execute(&mut *tx)
                .await?;
            }
            // Builds on the branch plus builds of known commits not placed yet.
            sqlx::query(
                "INSERT INTO build_branches (build_id, branch_id, position) \
                 SELECT b.id, $1, -1 FROM builds b JOIN branch_commits c \
                   ON c.branch_id = $1 AND c.commit_sha = b.commit_sha \
                 WHERE NOT EXISTS (SELECT 1 FROM build_branches x WHERE x.build_id = b.id AND x.branch_id = $1)",
            )
            .bind(branch_id)
            .execute(&mut *tx)
            .await?;
            let rows = sqlx::query(
                "SELECT bb.build_id, c.seq FROM build_branches bb JOIN builds b ON b.id = bb.build_id \
                 LEFT JOIN branch_commits c ON c.branch_id = bb.branch_id AND c.commit_sha = b.commit_sha \
                 WHERE bb.branch_id = $1 \
                 ORDER BY c.seq IS NULL, c.seq, bb.position, b.id",
            )
            .bind(branch_id)
            .fetch_all(&mut *tx)
            .await?;
            let mut known = 0;
            for (i, row) in rows.iter().enumerate() {
                let seq: Option<i64> = row.try_get(1)?;
                known += usize::from(seq.is_some());
                sqlx::query(
                    "UPDATE build_branches SET position = $1 WHERE build_id = $2 AND branch_id = $3",
                )
                .bind(i as i64)
                .bind(row.try_get::<i64, _>(0)?)
                .bind(branch_id)
                .execute(&mut *tx)
                .await?;
            }
            tx.commit().await?;
            Ok(known)
        })
    }

    /// The builds of the runs `run_ids` that are not on `branch` yet, in id order: one read,
    /// as most uploads are of a build placed before.
    pub async fn builds_to_place(&self, run_ids: &[i64], branch: &str) -> Result<Vec<i64>, Error> {
        if run_ids.is_empty() {
            return Ok(Vec::new());
        }
        let sql = format!(
            "SELECT DISTINCT r.build_id FROM runs r WHERE r.id IN ({}) AND NOT EXISTS \
             (SELECT 1 FROM build_branches bb JOIN branches br ON br.id = bb.branch_id \
              WHERE bb.build_id = r.build_id AND br.name = $1) ORDER BY r.build_id",
            crate::engine::placeholders(2, run_ids.len())
        );
        with_pool!(self, |pool| {
            let mut q = sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).bind(branch);
            for id in run_ids {
                q = q.bind(*id);
            }
            Ok(q.fetch_all(pool).await?)
        })
    }

    /// How many builds stand on the branch `branch_id` (builds are never taken off a branch,
    /// so a count that grew says one was placed).
    pub async fn branch_build_count(&self, branch_id: i64) -> Result<usize, Error> {
        let n: i64 = with_pool!(self, |pool| {
            sqlx::query_scalar("SELECT COUNT(*) FROM build_branches WHERE branch_id = $1")
                .bind(branch_id)
                .fetch_one(pool)
                .await?
        });
        usize::try_from(n).map_err(|_| Error::Corrupt(format!("a build count of {n}")))
    }

    /// Where each build of the branch `branch_id` stands on it: (build id, position).
    pub async fn branch_positions(&self, branch_id: i64) -> Result<Vec<(i64, i64)>, Error> {
        with_pool!(self, |pool| {
            Ok(
                sqlx::query_as(
                    "SELECT build_id, position FROM build_branches WHERE branch_id = $1",
                )
                .bind(branch_id)
                .fetch_all(pool)
                .await?,
            )
        })
    }

    /// A branch's builds in order, newest first, at most `limit` (all when negative).
    pub async fn branch_builds(&self, branch: &str, limit: i64) -> Result<Vec<BranchBuild>, Error> {
        with_pool!(self, |pool| {
            let rows = sqlx::query(
                "SELECT b.id, b.label, b.commit_sha, bb.position, b.created_at \
                 FROM build_branches bb JOIN branches br ON br.id = bb.branch_id \
                 JOIN builds b ON b.id = bb.build_id \
                 WHERE br.name = $1 ORDER BY bb.position DESC LIMIT $2",
            )
            .bind(branch)
            .bind(crate::engine::limit(limit))
            .fetch_all(pool)
            .await?;
            rows.iter()
                .map(|r| {
                    Ok(BranchBuild {
                        build_id: r.try_get(0)?,
                        label: r.try_get(1)?,
                        commit: r.try_get(2)?,
                        position: r.try_get(3)?,
                        created_at: r.try_get(4)?,
                    })
                })
                .collect()
        })
    }

    /// The history keys the runs `run_ids` add a point to: one per branch of their build and
    /// metric of their whole-run series.
    pub async fn history_keys_of_runs(&self, run_ids: &[i64]) -> Result<Vec<HistoryKey>, Error> {
        // From the blocks holding the scope `all` ([`KEY_BLOCKS`]), not the `series` view: a
        // per-CPU profile's run has millions of series.
        let Some(all) = self.name_id("all").await? else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for part in run_ids.chunks(RUNS_PER_QUERY) {
            let sql = format!(
                "SELECT DISTINCT {KEY_COLUMNS} {KEY_BLOCKS} AND {} AND r.id IN ({})",
                has_scope(self.is_postgres(), "$1"),
                crate::engine::placeholders(2, part.len())
            );
            let rows = with_pool!(self, |pool| {
                let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(scope_entry(all));
                for id in part {
                    q = q.bind(*id);
                }
                q.fetch_all(pool)
                    .await?
                    .iter()
                    .map(key_of)
                    .collect::<Result<Vec<_>, _>>()?
            });
            out.extend(rows);
        }
        out.sort();
        out.dedup();
        Ok(out)
    }

    /// [`Store::history_keys_of_runs`] from what the import saw: (run id, metric) of each
    /// whole-run `all` series ([`crate::ImportOutcome::history_metrics`]), grouped by run. Only
    /// the runs' branches, machines, benchmarks and parameters are read, not their blocks, in
    /// one query per [`RUNS_PER_QUERY`] runs: a pass covers every upload stored since the one
    /// before, and a query per run cost PostgreSQL a round trip each.
    pub async fn history_keys_of_metrics(
        &self,
        metrics: &[(i64, String)],
    ) -> Result<Vec<HistoryKey>, Error> {
        type Of = (i64, String, i64, String, String, String);
        let mut runs: Vec<i64> = metrics.iter().map(|(run, _)| *run).collect();
        runs.sort_unstable();
        runs.dedup();
        let mut of_run: HashMap<i64, Vec<Of>> = Default::default();
        for part in runs.chunks(RUNS_PER_QUERY) {
            let sql = format!(
                "SELECT r.id, bb.branch_id, br.name, r.machine_id, m.name, r.benchmark, r.params_key \
                 FROM runs r JOIN build_branches bb ON bb.build_id = r.build_id \
                 JOIN branches br ON br.id = bb.branch_id JOIN machines m ON m.id = r.machine_id \
                 WHERE r.id IN ({})",
                crate::engine::placeholders(1, part.len())
            );
            let rows: Vec<(i64, i64, String, i64, String, String, String)> =
                with_pool!(self, |pool| {
                    let mut q = sqlx::query_as(sqlx::AssertSqlSafe(sql));
                    for id in part {
                        q = q.bind(*id);
                    }
                    q.fetch_all(pool).await?
                });
            for (run, branch_id, branch, machine_id, machine, benchmark, params_key) in rows {
                of_run.entry(run).or_default().push((
                    branch_id, branch, machine_id, machine, benchmark, params_key,
                ));
            }
        }
        // A pass's uploads mostly add to the same histories (a rig uploading one benchmark
        // again): each key is made once, not once per run (a pass of 100 uploads of 800
        // metrics made 80,000 keys of five strings each, to keep 800).
        let mut distinct: std::collections::HashSet<(&Of, &str)> = Default::default();
        for run in metrics.chunk_by(|a, b| a.0 == b.0) {
            let histories = of_run.get(&run[0].0).map_or(&[][..], Vec::as_slice);
            for of in histories {
                distinct.extend(run.iter().map(|(_, metric)| (of, metric.as_str())));
            }
        }
        let mut out: Vec<HistoryKey> = distinct
            .into_iter()
            .map(
                |((branch_id, branch, machine_id, machine, benchmark, params_key), metric)| {
                    HistoryKey {
                        branch_id: *branch_id,
                        branch: branch.clone(),
                        machine_id: *machine_id,
                        machine: machine.clone(),
                        benchmark: benchmark.clone(),
                        params_key: params_key.clone(),
                        metric: metric.to_string(),
                    }
                },
            )
            .collect();
        out.sort();
        Ok(out)
    }

    /// The id of a stored name.
    pub(crate) async fn name_id(&self, name: &str) -> Result<Option<i64>, Error> {
        with_pool!(self, |pool| {
            Ok(sqlx::query_scalar("SELECT id FROM names WHERE name = $1")
                .bind(name)
                .fetch_optional(pool)
                .await?)
        })
    }

    /// The stored names of `ids` (each read once; unknown ids are left out).
    pub(crate) async fn names_by_id(
        &self,
        mut ids: Vec<i64>,
    ) -> Result<HashMap<i64, String>, Error> {
        ids.sort_unstable();
        ids.dedup();
        let mut out = HashMap::with_capacity(ids.len());
        for chunk in ids.chunks(NAMES_PER_QUERY) {
            let sql = format!(
                "SELECT id, name FROM names WHERE id IN ({})",
                crate::engine::placeholders(1, chunk.len())
            );
            let rows: Vec<(i64, String)> = with_pool!(self, |pool| {
                let mut q = sqlx::query_as(sqlx::AssertSqlSafe(sql));
                for id in chunk {
                    q = q.bind(id);
                }
                q.fetch_all(pool).await?
            });
            out.extend(rows);
        }
        Ok(out)
    }

    /// Every history key matching `filter`, sorted. From the blocks holding the scope `all`
    /// ([`KEY_BLOCKS`]), not the `series` view: a row per series, a benchmark page of four
    /// stored profiles took 8 s.
    pub async fn history_keys(&self, filter: &KeyFilter) -> Result<Vec<HistoryKey>, Error> {
        let Some(all) = self.name_id("all").await? else {
            return Ok(Vec::new());
        };
        with_pool!(self, |pool| {
            let sql = format!(
                "SELECT DISTINCT {KEY_COLUMNS} {KEY_BLOCKS} AND {} \
                   AND ($2 IS NULL OR br.name = $2) AND ($3 IS NULL OR r.benchmark = $3) \
                   AND ($4 IS NULL OR mn.name = $4) AND ($5 IS NULL OR m.name = $5) \
                   AND ($6 IS NULL OR r.params_key = $6)",
                has_scope(self.is_postgres(), "$1")
            );
            let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(scope_entry(all))
                .bind(&filter.branch)
                .bind(&filter.benchmark)
                .bind(&filter.metric)
                .bind(&filter.machine)
                .bind(&filter.params_key)
                .fetch_all(pool)
                .await?;
            let mut out = rows.iter().map(key_of).collect::<Result<Vec<_>, _>>()?;
            out.sort();
            Ok(out)
        })
    }

    /// The runs of one history key in branch order (then run id).
    pub async fn history_points(&self, key: &HistoryKey) -> Result<Vec<HistoryPoint>, Error> {
        // One reading of histories for one key or many (see `history_batch`).
        let mut points = self.history_points_many(std::slice::from_ref(key)).await?;
        Ok(points.pop().unwrap_or_default())
    }
}

/// The history key columns of a block, as [`key_of`] reads them.
const KEY_COLUMNS: &str =
    "bb.branch_id, br.name, r.machine_id, m.name, r.benchmark, r.params_key, mn.name";

/// The blocks of whole-run series with their runs' branches and machines: conditions follow
/// with `AND`, [`has_scope`] for the scope `all` among them. Its search is exact (a scope's
/// entry text, [`scope_entry`], is found only where an entry starts), so the keys are
/// distinct in SQL and no block's series list is read.
const KEY_BLOCKS: &str = "FROM runs r JOIN build_branches bb ON bb.build_id = r.build_id \
     JOIN branches br ON br.id = bb.branch_id JOIN machines m ON m.id = r.machine_id \
     JOIN series_block sb ON sb.run_id = r.id JOIN names mn ON mn.id = sb.metric_id \
     WHERE sb.label_id IS NULL AND sb.statistic_id IS NULL";

fn key_of<R: sqlx::Row>(r: &R) -> Result<HistoryKey, Error>
where
    usize: sqlx::ColumnIndex<R>,
    i64: for<'a> sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
    String: for<'a> sqlx::Decode<'a, R::Database> + sqlx::Type<R::Database>,
{
    Ok(HistoryKey {
        branch_id: r.try_get(0)?,
        branch: r.try_get(1)?,
        machine_id: r.try_get(2)?,
        machine: r.try_get(3)?,
        benchmark: r.try_get(4)?,
        params_key: r.try_get(5)?,
        metric: r.try_get(6)?,
    })
}

/// A whole-run series of one run: id, metric, unit and direction (samples through
/// [`crate::series_values`]).
#[derive(Debug, Clone, PartialEq)]
pub struct WholeRunSeries {
    pub series_id: i64,
    pub run_id: i64,
    pub benchmark: String,
    pub metric: String,
    pub unit: String,
    pub direction: String,
    pub n: i64,
}

impl Store {
    /// Every whole-run series with at least `min_n` samples, by run id then metric.
    pub async fn whole_run_series(&self, min_n: i64) -> Result<Vec<WholeRunSeries>, Error> {
        with_pool!(self, |pool| {
            let sql = format!(
                "SELECT s.id, r.id, r.benchmark, s.metric, s.unit, s.direction, s.n \
                 FROM runs r JOIN series s ON s.run_id = r.id \
                 WHERE {HISTORY_SERIES} AND s.n >= $1 ORDER BY r.id, s.metric"
            );
            let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(min_n)
                .fetch_all(pool)
                .await?;
            rows.iter()
                .map(|r| {
                    Ok(WholeRunSeries {
                        series_id: r.try_get(0)?,
                        run_id: r.try_get(1)?,
                        benchmark: r.try_get(2)?,
                        metric: r.try_get(3)?,
                        unit: r.try_get(4)?,
                        direction: r.try_get(5)?,
                        n: r.try_get(6)?,
                    })
                })
                .collect()
        })
    }
}
