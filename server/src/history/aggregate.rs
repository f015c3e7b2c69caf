//! Per-build summaries of a history (samples, median, quartiles), computed with one lazy
//! polars group-by over every sample of every run.

use polars::prelude::*;

/// One build's samples summarised.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct BuildSummary {
    pub position: i64,
    pub n: u32,
    pub median: f64,
    pub q1: f64,
    pub q3: f64,
}

/// Summaries per position, in position order.
pub fn per_build(positions: &[i64], values: &[f64]) -> PolarsResult<Vec<BuildSummary>> {
    summarise(frame(positions, values)?)
}

/// The samples as polars holds them: its own copy of both columns.
fn frame(positions: &[i64], values: &[f64]) -> PolarsResult<DataFrame> {
    df!("position" => positions, "value" => values)
}

fn summarise(frame: DataFrame) -> PolarsResult<Vec<BuildSummary>> {
    if frame.height() == 0 {
        return Ok(Vec::new());
    }
    let out = frame
        .lazy()
        .group_by([col("position")])
        .agg([
            col("value").count().alias("n"),
            col("value").median().alias("median"),
            col("value")
                .quantile(lit(0.25), QuantileMethod::Linear)
                .alias("q1"),
            col("value")
                .quantile(lit(0.75), QuantileMethod::Linear)
                .alias("q3"),
        ])
        .sort(["position"], SortMultipleOptions::default())
        .collect()?;
    let pos = out.column("position")?.i64()?.clone();
    let n = out.column("n")?.cast(&DataType::UInt32)?;
    let n = n.u32()?.clone();
    let med = out.column("median")?.f64()?.clone();
    let q1 = out.column("q1")?.f64()?.clone();
    let q3 = out.column("q3")?.f64()?.clone();
    let mut rows = Vec::with_capacity(out.height());
    for i in 0..out.height() {
        let (Some(position), Some(n), Some(median), Some(q1), Some(q3)) =
            (pos.get(i), n.get(i), med.get(i), q1.get(i), q3.get(i))
        else {
            continue;
        };
        rows.push(BuildSummary {
            position,
            n,
            median,
            q1,
            q3,
        });
    }
    Ok(rows)
}

/// [`per_build`] with the group-by on a blocking thread (polars must not run on the async
/// runtime's threads). The columns are copied here, the one copy polars makes anyway, so the
/// caller's samples need not be copied to be moved there.
pub async fn per_build_blocking(
    positions: &[i64],
    values: &[f64],
) -> anyhow::Result<Vec<BuildSummary>> {
    let frame = frame(positions, values)?;
    Ok(tokio::task::spawn_blocking(move || summarise(frame)).await??)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quartiles_follow_numpy_linear() {
        // numpy.percentile([1, 2, 3, 4], [25, 50, 75]) = 1.75, 2.5, 3.25
        let rows = per_build(&[3, 3, 3, 3, 1], &[4.0, 1.0, 3.0, 2.0, 9.0]).unwrap();
        assert_eq!(rows.len(), 2);
        assert_eq!((rows[0].position, rows[0].n, rows[0].median), (1, 1, 9.0));
        assert_eq!(rows[1].position, 3);
        assert_eq!((rows[1].q1, rows[1].median, rows[1].q3), (1.75, 2.5, 3.25));
    }
}
