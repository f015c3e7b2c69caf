//! What a reader has seen of a history, and the check that it is still a prefix of what is
//! stored: a reader that keeps a history between imports reads only the points after its mark
//! ([`Store::history_samples_after`]) once the stored history's mark equals its own plus those.

use std::collections::HashMap;

use futures_util::TryStreamExt as _;
use sqlx::Row as _;

use crate::history_batch::{HistoryOf, METRICS_PER_QUERY, has_scope, scope_entry};
use crate::{Error, HistoryKey, Store, with_pool};

/// The modulus of [`HistoryMark::placed_sum`]'s terms: each term and their sum stay far inside
/// an `i64` in both engines' integer arithmetic, which would otherwise overflow.
const MODULUS: i64 = 2_147_483_647;

/// A history's points summed up: how many, and two sums over their runs that change when a
/// point is added, removed or moved to another position. Equal marks mean the same points with
/// the overwhelming likelihood a checksum gives (runs are never rewritten in place).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HistoryMark {
    /// Points (runs with a whole-run series of the metric).
    pub points: i64,
    /// Sum of their run ids.
    pub run_sum: i64,
    /// Sum of (position x run id) modulo [`MODULUS`], each term reduced too.
    pub placed_sum: i64,
}

impl HistoryMark {
    /// This mark with one more point.
    pub fn add(&mut self, position: i64, run_id: i64) {
        self.points += 1;
        self.run_sum = self.run_sum.wrapping_add(run_id);
        self.placed_sum = (self.placed_sum + placed_term(position, run_id)) % MODULUS;
    }
}

/// One point's term of `placed_sum`, as the SQL of [`Store::history_marks`] computes it.
fn placed_term(position: i64, run_id: i64) -> i64 {
    ((position % MODULUS) * (run_id % MODULUS)) % MODULUS
}

impl Store {
    /// The mark of each key's stored history, in the order of `keys`: one query per (branch,
    /// machine, benchmark, parameters), which counts in the database and sends back a row per
    /// metric.
    pub async fn history_marks(&self, keys: &[HistoryKey]) -> Result<Vec<HistoryMark>, Error> {
        let mut out = vec![HistoryMark::default(); keys.len()];
        let mut groups: HashMap<HistoryOf<'_>, HashMap<&str, Vec<usize>>> = HashMap::new();
        for (i, k) in keys.iter().enumerate() {
            groups
                .entry((k.branch_id, k.machine_id, &k.benchmark, &k.params_key))
                .or_default()
                .entry(&k.metric)
                .or_default()
                .push(i);
        }
        let Some(all) = self.name_id("all").await? else {
            return Ok(out);
        };
        for ((branch_id, machine_id, benchmark, params_key), metrics) in groups {
            // Many metrics (a profile's functions) are counted all and sorted out here, as
            // `history_read` reads them.
            let names: Vec<&str> = if metrics.len() <= METRICS_PER_QUERY {
                metrics.keys().copied().collect()
            } else {
                Vec::new()
            };
            let filter = if names.is_empty() {
                String::new()
            } else {
                format!(
                    "AND sb.metric_id IN (SELECT id FROM names WHERE name IN ({}))",
                    (6..6 + names.len())
                        .map(|i| format!("${i}"))
                        .collect::<Vec<_>>()
                        .join(",")
                )
            };
            // The same points as `history_read` files: whole-run blocks listing the `all`
            // scope, of the metrics asked for.
            let sql = format!(
                "SELECT m.name, COUNT(*), CAST(COALESCE(SUM(r.id), 0) AS BIGINT), \
                   CAST(COALESCE(SUM(((bb.position % {MODULUS}) * (r.id % {MODULUS})) % {MODULUS}), 0) AS BIGINT) \
                 FROM build_branches bb JOIN runs r ON r.build_id = bb.build_id \
                 JOIN series_block sb ON sb.run_id = r.id JOIN names m ON m.id = sb.metric_id \
                 WHERE bb.branch_id = $1 AND r.machine_id = $2 AND r.benchmark = $3 \
                   AND r.params_key = $4 AND sb.label_id IS NULL AND sb.statistic_id IS NULL \
                   AND {has_scope} {filter} \
                 GROUP BY m.name",
                has_scope = has_scope(self.is_postgres(), "$5"),
            );
            with_pool!(self, |pool| {
                let mut q = sqlx::query(sqlx::AssertSqlSafe(sql))
                    .bind(branch_id)
                    .bind(machine_id)
                    .bind(benchmark)
                    .bind(params_key)
                    .bind(scope_entry(all));
                for m in &names {
                    q = q.bind(*m);
                }
                let mut rows = q.fetch(pool);
                while let Some(r) = rows.try_next().await? {
                    let Some(idx) = metrics.get(r.try_get::<&str, _>(0)?) else {
                        continue;
                    };
                    let mark = HistoryMark {
                        points: r.try_get(1)?,
                        run_sum: r.try_get(2)?,
                        placed_sum: r.try_get::<i64, _>(3)? % MODULUS,
                    };
                    for &i in idx {
                        out[i] = mark;
                    }
                }
            });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_moved_point_changes_the_mark() {
        let mut a = HistoryMark::default();
        a.add(1, 10);
        a.add(2, 11);
        let mut b = HistoryMark::default();
        b.add(2, 10);
        b.add(1, 11);
        assert_eq!((a.points, a.run_sum), (b.points, b.run_sum));
        assert_ne!(a, b);
        // Large positions and ids stay in range.
        let mut c = HistoryMark::default();
        c.add(i64::from(u32::MAX) * 3, i64::from(u32::MAX) * 5);
        assert!((0..MODULUS).contains(&c.placed_sum));
    }
}
