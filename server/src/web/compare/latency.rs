//! The latency traces behind a comparison, side by side: header fields, entries, stacks.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use store::Store;

use crate::error::AppError;
use crate::report::Report;
use crate::web::runs::{ExtraBlock, extra_block};
use crate::web::view::human;

/// One latency trace (a file may hold several).
#[derive(Debug, Clone)]
pub struct Trace {
    pub side: &'static str,
    pub run_id: i64,
    pub seq: i64,
    pub file_name: String,
    pub trace_no: usize,
    pub latency: String,
    pub entries: Option<ExtraBlock>,
    pub stack: Option<ExtraBlock>,
}

/// The latency traces behind a comparison, side by side.
#[derive(Debug, Clone)]
pub struct Latency {
    /// (header field, its value in each trace).
    pub rows: Vec<(String, Vec<String>)>,
    pub traces: Vec<Trace>,
    pub more: bool,
}

/// Traces listed per side.
pub(super) const TRACES_SHOWN: i64 = 12;

/// The header fields shown first, in this order, when present.
pub(super) const TRACE_KEYS: [&str; 10] = [
    "tracer",
    "kernel_version",
    "started_at",
    "ended_at",
    "task",
    "pid",
    "cpu",
    "ncpus",
    "preemption_model",
    "entries_total",
];

pub(super) async fn latency(store: &Store, r: &Report) -> Result<Option<Latency>, AppError> {
    if !r.comparisons.iter().any(|row| row.metric == "latency") {
        return Ok(None);
    }
    let mut traces = Vec::new();
    let mut more = false;
    let mut keys: BTreeSet<String> = BTreeSet::new();
    let mut raw: Vec<BTreeMap<String, String>> = Vec::new();
    for (side, ids) in [("base", &r.base.run_ids), ("head", &r.head.run_ids)] {
        let rows = store.latency_artifacts(ids, TRACES_SHOWN + 1).await?;
        more |= rows.len() as i64 > TRACES_SHOWN;
        let shown = &rows[..rows.len().min(TRACES_SHOWN as usize)];
        let mut run_ids: Vec<i64> = shown.iter().map(|a| a.run_id).collect();
        run_ids.dedup();
        let latencies = store.latency_samples(&run_ids).await?;
        let mut seen_in_run: HashMap<i64, usize> = HashMap::new();
        for row in shown {
            let run_id = row.run_id;
            let meta: BTreeMap<String, serde_json::Value> =
                serde_json::from_str(&row.meta_json).unwrap_or_default();
            let extra: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(&row.extra_json).unwrap_or_default();
            // Trace 1's fields are unprefixed, trace N's are `traceN.field`.
            let mut per: BTreeMap<usize, BTreeMap<String, String>> = BTreeMap::new();
            for (k, v) in &meta {
                let (n, field) = match k.strip_prefix("trace").and_then(|s| s.split_once('.')) {
                    Some((n, f)) if n.parse::<usize>().is_ok() => {
                        (n.parse::<usize>().unwrap_or(1), f.to_string())
                    }
                    _ => (1, k.clone()),
                };
                if matches!(field.as_str(), "traces" | "console_lines") {
                    continue;
                }
                let text = match v {
                    serde_json::Value::String(s) => s.clone(),
                    o => o.to_string(),
                };
                per.entry(n).or_default().insert(field, text);
            }
            if per.is_empty() {
                per.insert(1, BTreeMap::new());
            }
            for (n, fields) in per {
                let prefix = if n <= 1 {
                    String::new()
                } else {
                    format!("trace{n}.")
                };
                let k = seen_in_run.entry(run_id).or_default();
                let lat = latencies.get(&run_id).and_then(|v| v.get(*k)).copied();
                *k += 1;
                keys.extend(fields.keys().cloned());
                raw.push(fields);
                traces.push(Trace {
                    side,
                    run_id,
                    seq: row.seq,
                    file_name: row.file_name.clone(),
                    trace_no: n,
                    latency: human(lat, "s"),
                    entries: extra
                        .get(&format!("{prefix}entries"))
                        .map(|v| extra_block("entries", v)),
                    stack: extra
                        .get(&format!("{prefix}stack"))
                        .map(|v| extra_block("stack", v)),
                });
            }
        }
    }
    if traces.is_empty() {
        return Ok(None);
    }
    let mut ordered: Vec<String> = TRACE_KEYS
        .iter()
        .filter(|k| keys.contains(**k))
        .map(|k| k.to_string())
        .collect();
    ordered.extend(
        keys.into_iter()
            .filter(|k| !TRACE_KEYS.contains(&k.as_str())),
    );
    let rows = ordered
        .into_iter()
        .map(|k| {
            let vals = raw
                .iter()
                .map(|f| f.get(&k).cloned().unwrap_or_default())
                .collect();
            (k, vals)
        })
        .collect();
    Ok(Some(Latency { rows, traces, more }))
}
