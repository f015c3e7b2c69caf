//! What a side of a comparison holds, in words, for when the two sides share no series.

use store::Store;

/// Kinds of series the first runs of `ids` hold, as [`super::Parsed::metric_names`] words them (with
/// the benchmark first): how many, and the first few. Said when two builds share no series.
pub async fn series_of_runs(store: &Store, ids: &[i64]) -> (usize, Vec<String>) {
    let mut names: Vec<String> = Vec::new();
    for &id in ids.iter().take(20) {
        let Ok(d) = crate::web::runs::run_detail(store, id).await else {
            continue;
        };
        let params: Vec<String> = d.params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        for s in d.series {
            let mut name = format!("{}: {}", d.benchmark, s.metric);
            if let Some(st) = &s.statistic {
                name.push_str(&format!(" ({st})"));
            }
            if !params.is_empty() {
                name.push_str(&format!(" [{}]", params.join(", ")));
            }
            if let Some(l) = &s.label {
                name.push_str(&format!(" in block {l:?}"));
            }
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    let n = names.len();
    names.truncate(4);
    (n, names)
}
