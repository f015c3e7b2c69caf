//! The record of bisection steps (`bisect_steps`): one row per `bisect-step`, listed by
//! `bisect-log`.

use serde::Serialize;

use crate::with_pool;
use crate::{Error, Store};

/// A step to record. The runs it measured are imported beforehand ([`Store::import_run`]).
#[derive(Debug, Clone)]
pub struct NewStep<'a> {
    pub commit: &'a str,
    pub build_label: &'a str,
    pub machine: &'a str,
    pub benchmark: &'a str,
    pub series: &'a str,
    pub good_ref: &'a str,
    pub bad_ref: &'a str,
    pub runs: i64,
    pub samples: i64,
    pub median: Option<f64>,
    pub good_median: Option<f64>,
    pub bad_median: Option<f64>,
    pub p_good: Option<f64>,
    pub p_bad: Option<f64>,
    pub level: Option<f64>,
    pub verdict: &'a str,
    pub run_id: Option<i64>,
}

/// A stored step, as `bisect-log` lists it.
#[derive(Debug, Clone, Serialize, sqlx::FromRow)]
pub struct StepRow {
    pub id: i64,
    pub created_at: i64,
    pub commit: String,
    pub build_label: String,
    pub machine: String,
    pub benchmark: String,
    pub series: String,
    pub good_ref: String,
    pub bad_ref: String,
    pub runs: i64,
    pub median: Option<f64>,
    pub good_median: Option<f64>,
    pub bad_median: Option<f64>,
    pub p_good: Option<f64>,
    pub p_bad: Option<f64>,
    pub verdict: String,
    pub run_id: Option<i64>,
}

impl Store {
    /// Records a step; returns its id. A value that is not a number is stored as none: SQLite
    /// stores NaN as NULL, and PostgreSQL, which would keep it, is given NULL too.
    pub async fn insert_bisect_step(&self, s: &NewStep<'_>) -> Result<i64, Error> {
        let num = |v: Option<f64>| v.filter(|v| !v.is_nan());
        with_pool!(self, |pool| {
            Ok(sqlx::query_scalar(
                "INSERT INTO bisect_steps (created_at, commit_sha, build_label, machine, benchmark, series, \
                 good_ref, bad_ref, runs, samples, median, good_median, bad_median, p_good, p_bad, level, \
                 verdict, run_id) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18) RETURNING id",
            )
            .bind(crate::now())
            .bind(s.commit)
            .bind(s.build_label)
            .bind(s.machine)
            .bind(s.benchmark)
            .bind(s.series)
            .bind(s.good_ref)
            .bind(s.bad_ref)
            .bind(s.runs)
            .bind(s.samples)
            .bind(num(s.median))
            .bind(num(s.good_median))
            .bind(num(s.bad_median))
            .bind(num(s.p_good))
            .bind(num(s.p_bad))
            .bind(num(s.level))
            .bind(s.verdict)
            .bind(s.run_id)
            .fetch_one(pool)
            .await?)
        })
    }

    /// Stored steps, oldest first; only those at commits starting with `commit` when given
    /// (case-insensitive).
    pub async fn bisect_steps(&self, commit: Option<&str>) -> Result<Vec<StepRow>, Error> {
        with_pool!(self, |pool| {
            Ok(sqlx::query_as::<_, StepRow>(sqlx::AssertSqlSafe(format!(
                "SELECT id, created_at, commit_sha AS \"commit\", build_label, machine, benchmark, series, \
                 good_ref, bad_ref, runs, median, good_median, bad_median, p_good, p_bad, verdict, run_id FROM bisect_steps \
                 WHERE $1 IS NULL OR {} ORDER BY id",
                crate::engine::starts_with(self.is_postgres(), "commit_sha", 1)
            )))
            .bind(commit.map(str::to_ascii_lowercase))
            .fetch_all(pool)
            .await?)
        })
    }

    /// The steps of the bisection that step `id` belongs to (same references, benchmark, series
    /// and machine), oldest first; empty when there is no such step.
    pub async fn bisection_of(&self, id: i64) -> Result<Vec<StepRow>, Error> {
        with_pool!(self, |pool| {
            Ok(sqlx::query_as::<_, StepRow>(
                "SELECT s.id, s.created_at, s.commit_sha AS \"commit\", s.build_label, s.machine, \
                 s.benchmark, s.series, s.good_ref, s.bad_ref, s.runs, s.median, s.good_median, \
                 s.bad_median, s.p_good, s.p_bad, s.verdict, s.run_id \
                 FROM bisect_steps s JOIN bisect_steps o ON o.id = $1 \
                 WHERE s.good_ref = o.good_ref AND s.bad_ref = o.bad_ref AND s.benchmark = o.benchmark \
                   AND s.series = o.series AND s.machine = o.machine ORDER BY s.id",
            )
            .bind(id)
            .fetch_all(pool)
            .await?)
        })
    }
}
