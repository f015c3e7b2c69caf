//! Series written directly (not parsed from files): generated data sets and test databases.

use crate::write::{Names, Row, insert_rows};
use crate::{Error, Store};

/// One series to store for a run.
#[derive(Debug, Clone)]
pub struct NewSeries<'a> {
    pub run_id: i64,
    pub metric: &'a str,
    pub unit: &'a str,
    /// `lower_is_better`, `higher_is_better` or `neutral`.
    pub direction: &'a str,
    pub scope: &'a str,
    pub label: Option<&'a str>,
    pub statistic: Option<&'a str>,
    pub values: &'a [f64],
}

impl Store {
    /// Adds series to existing runs in one transaction; returns their ids.
    pub async fn add_series(&self, series: &[NewSeries<'_>]) -> Result<Vec<i64>, Error> {
        for s in series {
            if !matches!(
                s.direction,
                "lower_is_better" | "higher_is_better" | "neutral"
            ) {
                return Err(Error::Invalid(format!(
                    "series {}: direction {:?} is not lower_is_better, higher_is_better or neutral",
                    s.metric, s.direction
                )));
            }
        }
        let mut tx = self.pool().begin_with("BEGIN IMMEDIATE").await?;
        let mut names = Names::load(&mut tx).await?;
        let first: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(id), 0) + 1 FROM series_data")
            .fetch_one(&mut *tx)
            .await?;
        let rows: Vec<Row> = series
            .iter()
            .enumerate()
            .map(|(i, s)| Row {
                id: first + i as i64,
                run_id: s.run_id,
                metric: names.id(s.metric),
                unit: names.id(s.unit),
                direction: names.id(s.direction),
                scope: names.id(s.scope),
                label: names.opt(s.label),
                statistic: names.opt(s.statistic),
                vals: s.values.to_vec(),
            })
            .collect();
        names.flush(&mut tx).await?;
        insert_rows(&mut tx, &rows).await?;
        tx.commit().await?;
        Ok(rows.iter().map(|r| r.id).collect())
    }
}
