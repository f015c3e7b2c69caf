//! The bulk writes of an import: series rows and samples in multi-row statements, and the
//! per-run totals of per-CPU profiles.

use sqlx::{AssertSqlSafe, Sqlite, Transaction};

use crate::Error;
use ingest::model::SeriesSpec;

/// Rows per INSERT statement (3 bound values each, well under SQLite's variable limit).
const ROWS_PER_STMT: usize = 500;

/// A series row waiting for its batched INSERT.
pub(crate) struct PendingSeries {
    pub(crate) id: i64,
    pub(crate) run_id: i64,
    pub(crate) spec: SeriesSpec,
}

/// Adds the `all` totals of per-CPU trace_stat series that no input file totalled itself (a
/// directory of `function0..N` files: each file holds one CPU): hits and time summed over the
/// CPUs, avg = time / hits. Returns the number of series added.
pub(crate) async fn trace_stat_totals(
    tx: &mut Transaction<'_, Sqlite>,
    run_id: i64,
) -> Result<u64, Error> {
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
pub(crate) const SERIES_PER_STMT: usize = 250;

/// Inserts series rows with explicit ids in multi-row statements.
pub(crate) async fn insert_series(
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
pub(crate) async fn insert_samples(
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
