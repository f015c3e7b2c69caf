//! Alerts: the change points found in stored histories, grouped by the build where they
//! appeared, with their triage state; and the detector's per-series p-values that q-values
//! across a benchmark are computed from.

use sqlx::Row as _;

use crate::with_pool;
use crate::{Error, HistoryKey, Store, now};

/// Triage states of an alert.
pub const ALERT_STATES: [&str; 4] = ["untriaged", "acknowledged", "invalid", "fixed"];

/// A change point to record as an alert.
#[derive(Debug, Clone, PartialEq)]
pub struct NewAlert {
    pub history_series_id: i64,
    pub branch_id: i64,
    pub build_before_id: i64,
    pub build_after_id: i64,
    pub before_median: f64,
    pub after_median: f64,
    pub change_pct: f64,
    pub low_pct: f64,
    pub high_pct: f64,
    pub p: f64,
    pub q: f64,
    pub kind: String,
}

/// An alert as shown.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Alert {
    pub id: i64,
    pub group_id: i64,
    pub branch: String,
    pub benchmark: String,
    pub params_key: String,
    pub metric: String,
    pub machine: String,
    pub build_before: String,
    pub build_after: String,
    pub before_median: f64,
    pub after_median: f64,
    pub change_pct: f64,
    pub low_pct: f64,
    pub high_pct: f64,
    pub p: f64,
    pub q: f64,
    pub kind: String,
    pub state: String,
    pub note: Option<String>,
    pub who: Option<String>,
    pub fixed_by: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
    /// Unit of the medians (canonical: s, bytes, count...).
    pub unit: String,
}

/// Which alerts to list; `None` matches every value.
#[derive(Debug, Clone, Default)]
pub struct AlertFilter {
    pub state: Option<String>,
    pub benchmark: Option<String>,
    pub machine: Option<String>,
    pub branch: Option<String>,
    pub group_id: Option<i64>,
    pub limit: Option<i64>,
}

/// A triage decision.
#[derive(Debug, Clone)]
pub struct Triage {
    pub state: String,
    pub note: Option<String>,
    pub who: String,
    /// Label of the build that fixed it (state `fixed`).
    pub fixed_by: Option<String>,
}

impl Store {
    /// Records the detector's tested p-values of a history series; returns its id.
    pub async fn save_history_series(
        &self,
        key: &HistoryKey,
        direction: &str,
        unit: &str,
        tested_p: &[f64],
    ) -> Result<i64, Error> {
        let ids = self
            .save_history_series_many(&[crate::SavedSeries {
                key,
                direction,
                unit,
                tested_p,
            }])
            .await?;
        Ok(ids[0])
    }

    /// The tested p-values of every series of `benchmark` on a branch, as (history series id,
    /// p-values): the family of the benchmark's q-values.
    pub async fn benchmark_tested_p(
        &self,
        branch_id: i64,
        benchmark: &str,
    ) -> Result<Vec<(i64, Vec<f64>)>, Error> {
        with_pool!(self, |pool| {
            let rows: Vec<(i64, String)> = sqlx::query_as(
                "SELECT id, tested_p FROM history_series WHERE branch_id = $1 AND benchmark = $2 ORDER BY id",
            )
            .bind(branch_id)
            .bind(benchmark)
            .fetch_all(pool)
            .await?;
            rows.into_iter()
                .map(|(id, json)| {
                    serde_json::from_str(&json)
                        .map(|p| (id, p))
                        .map_err(|e| Error::Corrupt(format!("history series {id} p-values: {e}")))
                })
                .collect()
        })
    }

    /// Records an alert unless the same change (series, first build of the new regime) is
    /// already one. Returns the group id of a new alert, `None` when it existed.
    pub async fn insert_alert(&self, a: &NewAlert) -> Result<Option<i64>, Error> {
        with_pool!(self, |pool| {
            let mut tx = self.begin_write_on(pool).await?;
            let exists: Option<i64> = sqlx::query_scalar(
                "SELECT id FROM alerts WHERE history_series_id = $1 AND build_after_id = $2",
            )
            .bind(a.history_series_id)
            .bind(a.build_after_id)
            .fetch_optional(&mut *tx)
            .await?;
            if exists.is_some() {
                tx.commit().await?;
                return Ok(None);
            }
            let t = now();
            sqlx::query(
                "INSERT INTO alert_groups (branch_id, build_id, created_at) VALUES ($1, $2, $3) \
                 ON CONFLICT (branch_id, build_id) DO NOTHING",
            )
            .bind(a.branch_id)
            .bind(a.build_after_id)
            .bind(t)
            .execute(&mut *tx)
            .await?;
            let group_id: i64 = sqlx::query_scalar(
                "SELECT id FROM alert_groups WHERE branch_id = $1 AND build_id = $2",
            )
            .bind(a.branch_id)
            .bind(a.build_after_id)
            .fetch_one(&mut *tx)
            .await?;
            sqlx::query(
                "INSERT INTO alerts (group_id, history_series_id, build_before_id, build_after_id, before_median, after_median, \
                 change_pct, low_pct, high_pct, p, q, kind, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $13)",
            )
            .bind(group_id)
            .bind(a.history_series_id)
            .bind(a.build_before_id)
            .bind(a.build_after_id)
            .bind(a.before_median)
            .bind(a.after_median)
            .bind(a.change_pct)
            .bind(a.low_pct)
            .bind(a.high_pct)
            .bind(a.p)
            .bind(a.q)
            .bind(&a.kind)
            .bind(t)
            .execute(&mut *tx)
            .await?;
            // A group already notified gets notified again with its new alert.
            sqlx::query("UPDATE alert_groups SET notified_at = NULL WHERE id = $1")
                .bind(group_id)
                .execute(&mut *tx)
                .await?;
            tx.commit().await?;
            Ok(Some(group_id))
        })
    }

    /// Alerts matching `filter`, newest group first.
    pub async fn alerts(&self, filter: &AlertFilter) -> Result<Vec<Alert>, Error> {
        with_pool!(self, |pool| {
            let rows = sqlx::query(
                "SELECT a.id, a.group_id, br.name, hs.benchmark, hs.params_key, hs.metric, m.name, \
                        bb.label, ba.label, a.before_median, a.after_median, a.change_pct, a.low_pct, \
                        a.high_pct, a.p, a.q, a.kind, a.state, a.note, a.who, bf.label, a.created_at, a.updated_at, hs.unit \
                 FROM alerts a JOIN history_series hs ON hs.id = a.history_series_id \
                 JOIN branches br ON br.id = hs.branch_id JOIN machines m ON m.id = hs.machine_id \
                 JOIN builds bb ON bb.id = a.build_before_id JOIN builds ba ON ba.id = a.build_after_id \
                 LEFT JOIN builds bf ON bf.id = a.fixed_by_build_id \
                 WHERE ($1 IS NULL OR a.state = $1) AND ($2 IS NULL OR hs.benchmark = $2) \
                   AND ($3 IS NULL OR m.name = $3) AND ($4 IS NULL OR br.name = $4) \
                   AND ($5 IS NULL OR a.group_id = $5) \
                 ORDER BY a.group_id DESC, ABS(a.change_pct) DESC, a.id LIMIT $6",
            )
            .bind(&filter.state)
            .bind(&filter.benchmark)
            .bind(&filter.machine)
            .bind(&filter.branch)
            .bind(filter.group_id)
            .bind(crate::engine::limit(filter.limit.unwrap_or(10_000)))
            .fetch_all(pool)
            .await?;
            rows.iter()
                .map(|r| {
                    Ok(Alert {
                        id: r.try_get(0)?,
                        group_id: r.try_get(1)?,
                        branch: r.try_get(2)?,
                        benchmark: r.try_get(3)?,
                        params_key: r.try_get(4)?,
                        metric: r.try_get(5)?,
                        machine: r.try_get(6)?,
                        build_before: r.try_get(7)?,
                        build_after: r.try_get(8)?,
                        before_median: r.try_get(9)?,
                        after_median: r.try_get(10)?,
                        change_pct: r.try_get(11)?,
                        low_pct: r.try_get(12)?,
                        high_pct: r.try_get(13)?,
                        p: r.try_get(14)?,
                        q: r.try_get(15)?,
                        kind: r.try_get(16)?,
                        state: r.try_get(17)?,
                        note: r.try_get(18)?,
                        who: r.try_get(19)?,
                        fixed_by: r.try_get(20)?,
                        created_at: r.try_get(21)?,
                        updated_at: r.try_get(22)?,
                        unit: r.try_get(23)?,
                    })
                })
                .collect()
        })
    }

    /// Sets an alert's triage state. Errors name an unknown alert, state or fixing build.
    pub async fn triage_alert(&self, id: i64, t: &Triage) -> Result<(), Error> {
        with_pool!(self, |pool| {
            if !ALERT_STATES.contains(&t.state.as_str()) {
                return Err(Error::Invalid(format!(
                    "unknown state {:?}; states are {}",
                    t.state,
                    ALERT_STATES.join(", ")
                )));
            }
            let fixed_by: Option<i64> = match (&t.fixed_by, t.state.as_str()) {
                (Some(label), _) => Some(
                    sqlx::query_scalar("SELECT id FROM builds WHERE label = $1")
                        .bind(label)
                        .fetch_optional(pool)
                        .await?
                        .ok_or_else(|| Error::Invalid(format!("no build labelled {label:?}")))?,
                ),
                (None, _) => None,
            };
            let done = sqlx::query(
                "UPDATE alerts SET state = $1, note = $2, who = $3, fixed_by_build_id = $4, updated_at = $5 WHERE id = $6",
            )
            .bind(&t.state)
            .bind(&t.note)
            .bind(&t.who)
            .bind(fixed_by)
            .bind(now())
            .bind(id)
            .execute(pool)
            .await?;
            if done.rows_affected() == 0 {
                return Err(Error::Invalid(format!("no alert {id}")));
            }
            Ok(())
        })
    }

    /// Groups with alerts not yet sent to the webhook, oldest first.
    pub async fn unnotified_groups(&self) -> Result<Vec<i64>, Error> {
        with_pool!(self, |pool| {
            Ok(sqlx::query_scalar(
                "SELECT id FROM alert_groups WHERE notified_at IS NULL ORDER BY id",
            )
            .fetch_all(pool)
            .await?)
        })
    }

    /// Marks a group as sent.
    pub async fn mark_group_notified(&self, group_id: i64) -> Result<(), Error> {
        with_pool!(self, |pool| {
            sqlx::query("UPDATE alert_groups SET notified_at = $1 WHERE id = $2")
                .bind(now())
                .bind(group_id)
                .execute(pool)
                .await?;
            Ok(())
        })
    }

    /// Recent groups with their build label and alert count, newest first; at most `limit`
    /// (all when negative).
    pub async fn alert_groups(&self, limit: i64) -> Result<Vec<AlertGroup>, Error> {
        with_pool!(self, |pool| {
            let rows = sqlx::query(
                "SELECT g.id, br.name, b.label, g.created_at, COUNT(a.id), \
                        SUM(CASE WHEN a.state = 'untriaged' THEN 1 ELSE 0 END) \
                 FROM alert_groups g JOIN branches br ON br.id = g.branch_id \
                 JOIN builds b ON b.id = g.build_id JOIN alerts a ON a.group_id = g.id \
                 GROUP BY g.id, br.name, b.label, g.created_at ORDER BY g.id DESC LIMIT $1",
            )
            .bind(crate::engine::limit(limit))
            .fetch_all(pool)
            .await?;
            rows.iter()
                .map(|r| {
                    Ok(AlertGroup {
                        id: r.try_get(0)?,
                        branch: r.try_get(1)?,
                        build: r.try_get(2)?,
                        created_at: r.try_get(3)?,
                        alerts: r.try_get(4)?,
                        untriaged: r.try_get(5)?,
                    })
                })
                .collect()
        })
    }
}

/// The alerts of one build, as listed.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AlertGroup {
    pub id: i64,
    pub branch: String,
    pub build: String,
    pub created_at: i64,
    pub alerts: i64,
    pub untriaged: i64,
}
