//! Series written directly (not parsed from files): generated data sets and test databases.

use crate::blocks::Blocks;
use crate::write::{Names, Row};
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
        let mut tx = self.begin_write().await?;
        let mut names = Names::load(&mut tx).await?;
        let first =
            crate::engine::next_id(&mut tx, None, crate::engine::next_id_sql!("series_block"))
                .await?;
        // One block per series, in order: series i is the only one of block first + i.
        let mut blocks = Blocks::default();
        for (i, s) in series.iter().enumerate() {
            let row = Row {
                run_id: s.run_id,
                metric: names.id(s.metric),
                unit: names.id(s.unit),
                direction: names.id(s.direction),
                scope: names.id(s.scope),
                label: names.opt(s.label),
                statistic: names.opt(s.statistic),
                vals: s.values.to_vec(),
            };
            blocks.add_alone(i, &row);
        }
        names.flush(&mut tx).await?;
        blocks.encode().write(&mut tx, None).await?;
        tx.commit().await?;
        Ok((0..series.len() as i64)
            .map(|i| (first + i) << 16)
            .collect())
    }
}
