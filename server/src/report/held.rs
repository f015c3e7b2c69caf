//! What a side of a comparison holds, in words, for when the two sides share no series.

use store::Store;

/// One kind of series as a note names it: `bench: real (median) [load=idle] in block "with
/// the patch"`, from the fields series are matched by (the benchmark only for stored runs;
/// parameters as stored, `k=v&k=v`).
pub(super) fn words(
    benchmark: Option<&str>,
    metric: &str,
    statistic: Option<&str>,
    params_key: &str,
    label: Option<&str>,
) -> String {
    let mut s = match benchmark {
        Some(b) => format!("{b}: {metric}"),
        None => metric.to_string(),
    };
    if let Some(st) = statistic {
        s.push_str(&format!(" ({st})"));
    }
    if !params_key.is_empty() {
        s.push_str(&format!(" [{}]", params_key.replace('&', ", ")));
    }
    if let Some(l) = label {
        s.push_str(&format!(" in block {l:?}"));
    }
    s
}

/// Runs read at most for [`series_of_runs`]: enough to show what a build holds.
const RUNS_READ: usize = 20;

/// The kinds of series the first runs of `ids` hold, in [`words`]: how many, and the first
/// `max`. Read a block at a time, as a comparison reads them.
pub async fn series_of_runs(
    store: &Store,
    ids: &[i64],
    max: usize,
) -> Result<(usize, Vec<String>), store::Error> {
    let mut names: Vec<String> = Vec::new();
    let ids = &ids[..ids.len().min(RUNS_READ)];
    store
        .visit_series_of_runs(
            ids,
            |_| true,
            |b| {
                let name = words(
                    Some(b.benchmark),
                    b.metric,
                    b.statistic,
                    b.params_key,
                    b.label,
                );
                if !names.contains(&name) {
                    names.push(name);
                }
            },
        )
        .await?;
    let n = names.len();
    names.truncate(max);
    Ok((n, names))
}
