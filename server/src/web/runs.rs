//! Runs: lists, one run's page `/runs/{id}` (metadata, series, the parsed view of each file)
//! and the raw file download `/runs/{id}/artifacts/{seq}`.

use std::collections::BTreeMap;

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures_util::StreamExt;
use serde::{Deserialize, Serialize};
use store::Store;

use super::builds::Build;
use super::view::{Missing, PageError, PageResult, fmt_time, human, parse_id};
use crate::error::AppError;
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/runs/{id}", get(page))
        .route("/runs/{id}/artifacts/{seq}", get(download))
}

/// One line of a run list.
#[derive(Debug, Clone, Serialize)]
pub struct RunSummary {
    pub id: i64,
    pub build: String,
    pub machine: String,
    pub benchmark: String,
    /// `k=v&k=v`, sorted by key.
    pub params_key: String,
    pub created_at: i64,
    pub series: i64,
    pub samples: i64,
}

impl RunSummary {
    pub fn created(&self) -> String {
        fmt_time(self.created_at)
    }
    pub fn params(&self) -> String {
        if self.params_key.is_empty() {
            "-".into()
        } else {
            self.params_key.replace('&', ", ")
        }
    }
}

/// Which runs to list, newest first.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct RunFilter {
    pub build: Option<String>,
    pub machine: Option<String>,
    pub benchmark: Option<String>,
    #[serde(default)]
    pub limit: i64,
    /// Only runs older than this one (a smaller id): the next page.
    pub before: Option<i64>,
}

impl From<store::RunSummary> for RunSummary {
    fn from(r: store::RunSummary) -> Self {
        RunSummary {
            id: r.id,
            build: r.build,
            machine: r.machine,
            benchmark: r.benchmark,
            params_key: r.params_key,
            created_at: r.created_at,
            series: r.series,
            samples: r.samples,
        }
    }
}

/// An optional query parameter that must be a positive whole number: `None` when absent or
/// empty, else a 400 saying `NAME must be MEANING` and what was found.
pub fn positive_param(
    name: &str,
    meaning: &str,
    given: Option<&str>,
) -> Result<Option<i64>, AppError> {
    let Some(v) = given.map(str::trim).filter(|s| !s.is_empty()) else {
        return Ok(None);
    };
    match v.parse::<i64>() {
        Ok(n) if n > 0 => Ok(Some(n)),
        _ => Err(AppError::BadRequest(format!(
            "{name} must be {meaning}, found {v:?}"
        ))),
    }
}

/// The `before` of a run listing's next page: a run id, when given.
pub fn before_run(given: Option<&str>) -> Result<Option<i64>, AppError> {
    positive_param("before", "a run id (a positive whole number)", given)
}

impl RunFilter {
    /// The store's query of this filter's build, machine and benchmark, nothing else set.
    fn query(&self) -> store::RunQuery<'_> {
        store::RunQuery {
            build: self.build.as_deref(),
            machine: self.machine.as_deref(),
            benchmark: self.benchmark.as_deref(),
            ..Default::default()
        }
    }
}

pub async fn list_runs(store: &Store, f: &RunFilter) -> Result<Vec<RunSummary>, AppError> {
    let limit = if f.limit <= 0 {
        1000
    } else {
        f.limit.min(100_000)
    };
    let runs = store
        .runs(&store::RunQuery {
            limit: Some(limit),
            newest_first: true,
            before: f.before,
            ..f.query()
        })
        .await?;
    Ok(runs.into_iter().map(RunSummary::from).collect())
}

/// How many runs `f`'s build, machine and benchmark match (its limit and page ignored),
/// counted up to `cap`: more is `cap + 1`.
pub async fn count_runs(store: &Store, f: &RunFilter, cap: i64) -> Result<i64, AppError> {
    Ok(store.count_runs(&f.query(), cap).await?)
}

/// A stored series with its basic numbers.
#[derive(Debug, Clone, Serialize)]
pub struct SeriesSummary {
    pub metric: String,
    pub scope: String,
    pub label: Option<String>,
    pub statistic: Option<String>,
    pub unit: String,
    pub direction: String,
    pub n: usize,
    pub min: Option<f64>,
    pub median: Option<f64>,
    pub max: Option<f64>,
}

impl SeriesSummary {
    /// `lower is better`.
    pub fn direction_text(&self) -> String {
        self.direction.replace('_', " ")
    }
    pub fn min_h(&self) -> String {
        human(self.min, &self.unit)
    }
    pub fn median_h(&self) -> String {
        human(self.median, &self.unit)
    }
    pub fn max_h(&self) -> String {
        human(self.max, &self.unit)
    }
}

/// A parser warning.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct WarningView {
    #[serde(default)]
    pub line: u64,
    #[serde(default)]
    pub message: String,
}

/// One piece of a parser's structured detail (`extra_json`), shaped for display.
#[derive(Debug, Clone, Default)]
pub struct ExtraBlock {
    pub key: String,
    /// `table` (array of objects or arrays), `list` (array of scalars), `pairs` (object),
    /// `text` (anything else).
    pub kind: &'static str,
    pub columns: Vec<String>,
    pub rows: Vec<Vec<String>>,
    pub items: Vec<String>,
    pub text: String,
    /// Rows or items left out for length.
    pub more: usize,
}

/// Columns of trace entries in the order trace files print them.
const ENTRY_COLUMNS: [&str; 9] = [
    "comm",
    "pid",
    "cpu",
    "flags",
    "time_us",
    "duration_us",
    "mark",
    "func",
    "parent",
];

/// Rows of an entries table shown on a page; the JSON API has them all.
const EXTRA_ROWS_SHOWN: usize = 2000;

fn scalar_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Shapes one extra value for display.
pub fn extra_block(key: &str, v: &serde_json::Value) -> ExtraBlock {
    use serde_json::Value;
    let mut b = ExtraBlock {
        key: key.to_string(),
        kind: "text",
        ..ExtraBlock::default()
    };
    match v {
        Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_object) => {
            b.kind = "table";
            for it in items {
                for k in it.as_object().into_iter().flat_map(|o| o.keys()) {
                    if !b.columns.contains(k) {
                        b.columns.push(k.clone());
                    }
                }
            }
            // Stored objects come back with sorted keys: put the usual trace columns in the
            // order a trace prints them.
            let rank = |c: &String| {
                ENTRY_COLUMNS
                    .iter()
                    .position(|k| k == c)
                    .unwrap_or(ENTRY_COLUMNS.len())
            };
            b.columns.sort_by_key(rank);
            b.rows = items
                .iter()
                .take(EXTRA_ROWS_SHOWN)
                .map(|it| {
                    b.columns
                        .iter()
                        .map(|c| it.get(c).map(scalar_text).unwrap_or_default())
                        .collect()
                })
                .collect();
            b.more = items.len().saturating_sub(EXTRA_ROWS_SHOWN);
        }
        Value::Array(items) if !items.is_empty() && items.iter().all(Value::is_array) => {
            b.kind = "table";
            let width = items
                .iter()
                .filter_map(Value::as_array)
                .map(Vec::len)
                .max()
                .unwrap_or(0);
            b.columns = (0..width).map(|i| i.to_string()).collect();
            b.rows = items
                .iter()
                .take(EXTRA_ROWS_SHOWN)
                .map(|it| {
                    let a = it.as_array().map(Vec::as_slice).unwrap_or(&[]);
                    (0..width)
                        .map(|i| a.get(i).map(scalar_text).unwrap_or_default())
                        .collect()
                })
                .collect();
            b.more = items.len().saturating_sub(EXTRA_ROWS_SHOWN);
        }
        Value::Array(items) => {
            b.kind = "list";
            b.items = items
                .iter()
                .take(EXTRA_ROWS_SHOWN)
                .map(|v| match v {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect();
            b.more = items.len().saturating_sub(EXTRA_ROWS_SHOWN);
        }
        Value::Object(o) if o.values().all(|v| !v.is_object() && !v.is_array()) => {
            b.kind = "pairs";
            b.rows = o
                .iter()
                .map(|(k, v)| vec![k.clone(), scalar_text(v)])
                .collect();
        }
        other => {
            b.text = match other {
                Value::String(s) => s.clone(),
                v => serde_json::to_string_pretty(v).unwrap_or_default(),
            };
        }
    }
    b
}

/// A stored file of a run and what its parser said.
#[derive(Debug, Clone, Serialize)]
pub struct ArtifactView {
    pub seq: i64,
    pub file_name: String,
    pub format: String,
    pub size: i64,
    pub sha256: String,
    pub meta: BTreeMap<String, serde_json::Value>,
    pub warnings: Vec<WarningView>,
    pub warning_count: i64,
    pub extra: serde_json::Map<String, serde_json::Value>,
    #[serde(skip)]
    pub blocks: Vec<ExtraBlock>,
}

impl ArtifactView {
    pub fn meta_pairs(&self) -> Vec<(String, String)> {
        self.meta
            .iter()
            .map(|(k, v)| (k.clone(), scalar_text(v)))
            .collect()
    }
    pub fn size_h(&self) -> String {
        crate::format::human_bytes(self.size as f64)
    }
    pub fn more_warnings(&self) -> i64 {
        self.warning_count - self.warnings.len() as i64
    }
}

/// The files of a run shaped for display, optionally of one format only.
pub async fn load_artifacts(
    store: &Store,
    run_id: i64,
    format: Option<&str>,
) -> Result<Vec<ArtifactView>, AppError> {
    Ok(store
        .run_artifacts(run_id, format)
        .await?
        .into_iter()
        .map(|a| {
            let extra: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(&a.extra_json).unwrap_or_default();
            let blocks = extra.iter().map(|(k, v)| extra_block(k, v)).collect();
            ArtifactView {
                seq: a.seq,
                file_name: a.file_name,
                format: a.format,
                size: a.size,
                sha256: a.sha256,
                meta: serde_json::from_str(&a.meta_json).unwrap_or_default(),
                warnings: serde_json::from_str(&a.warnings_json).unwrap_or_default(),
                warning_count: a.warning_count,
                extra,
                blocks,
            }
        })
        .collect())
}

/// Everything the run page shows.
#[derive(Debug, Clone, Serialize)]
pub struct RunDetail {
    pub id: i64,
    pub build: Build,
    pub machine: String,
    pub machine_facts: BTreeMap<String, String>,
    pub benchmark: String,
    pub params: BTreeMap<String, String>,
    pub created_at: i64,
    /// The upload token's name, when the run was uploaded.
    pub uploaded_by: Option<String>,
    pub series: Vec<SeriesSummary>,
    pub artifacts: Vec<ArtifactView>,
}

fn missing_run(id: i64) -> PageError {
    PageError::Missing(Missing {
        what: "run",
        name: id.to_string(),
        suggestions: Vec::new(),
        link_prefix: "/runs/",
    })
}

pub async fn run_detail(store: &Store, id: i64) -> PageResult<RunDetail> {
    let Some(r) = store.run(id).await? else {
        return Err(missing_run(id));
    };
    Ok(RunDetail {
        id,
        build: r.build,
        machine: r.machine,
        machine_facts: r.machine_facts,
        benchmark: r.benchmark,
        params: r.params,
        created_at: r.created_at,
        uploaded_by: r.uploaded_by,
        series: load_series(store, id).await?,
        artifacts: load_artifacts(store, id, None).await?,
    })
}

/// A run's series with n, min, median and max of their samples.
async fn load_series(store: &Store, run_id: i64) -> Result<Vec<SeriesSummary>, AppError> {
    Ok(store
        .run_series(run_id)
        .await?
        .into_iter()
        .map(|s| {
            let mut v = s.values;
            v.sort_by(f64::total_cmp);
            SeriesSummary {
                metric: s.metric,
                scope: s.scope,
                label: s.label,
                statistic: s.statistic,
                unit: s.unit,
                direction: s.direction,
                n: v.len(),
                min: v.first().copied(),
                median: median_sorted(&v),
                max: v.last().copied(),
            }
        })
        .collect())
}

/// Median of sorted values (mean of the middle two for even n).
pub fn median_sorted(v: &[f64]) -> Option<f64> {
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// Series listed on the run page; the API has them all.
pub const SERIES_SHOWN: usize = 500;

#[derive(Template, WebTemplate)]
#[template(path = "run/show.html")]
pub struct RunPage {
    pub d: RunDetail,
    pub created: String,
    pub series_shown: usize,
}

async fn page(State(st): State<AppState>, Path(id): Path<String>) -> PageResult<RunPage> {
    let id = parse_id(&id, "run id")?;
    let d = run_detail(&st.store, id).await?;
    Ok(RunPage {
        created: fmt_time(d.created_at),
        series_shown: SERIES_SHOWN.min(d.series.len()),
        d,
    })
}

/// `attachment; filename="ascii"; filename*=UTF-8''percent-encoded` for a stored name.
pub fn content_disposition(stored_name: &str) -> String {
    let safe = store::safe_file_name(stored_name);
    let ascii: String = safe
        .chars()
        .map(|c| if c.is_ascii() { c } else { '_' })
        .collect();
    format!(
        "attachment; filename=\"{ascii}\"; filename*=UTF-8''{}",
        super::view::path_escape(&safe)
    )
}

/// The raw file, byte for byte, streamed chunk by chunk from the database.
async fn download(
    State(st): State<AppState>,
    Path((id, seq)): Path<(String, String)>,
) -> PageResult<Response> {
    let id = parse_id(&id, "run id")?;
    let seq = parse_id(&seq, "file number")?;
    let Some((artifact_id, name, size)) = st.store.run_file(id, seq).await? else {
        return Err(PageError::App(AppError::NotFound(format!(
            "run {id} has no file number {seq}"
        ))));
    };
    let store = st.store.clone();
    // One chunk (1 MiB) in memory at a time, whatever the file size. Fused: the compression
    // layer may poll again after the end.
    let stream = futures_util::stream::unfold(Some(0i64), move |next| {
        let store = store.clone();
        async move {
            let chunk_seq = next?;
            match store.artifact_chunk(artifact_id, chunk_seq).await {
                Ok(Some(data)) => Some((Ok(Bytes::from(data)), Some(chunk_seq + 1))),
                Ok(None) => None,
                Err(e) => {
                    tracing::error!("reading artifact {artifact_id} chunk {chunk_seq}: {e}");
                    Some((Err(std::io::Error::other(e)), None))
                }
            }
        }
    })
    .fuse();
    Ok((
        [
            (header::CONTENT_TYPE, "application/octet-stream".to_string()),
            (header::CONTENT_LENGTH, size.to_string()),
            (header::CONTENT_DISPOSITION, content_disposition(&name)),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_string()),
        ],
        Body::from_stream(stream),
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disposition_is_sanitized() {
        assert_eq!(
            content_disposition("dir/trace_stat/function0"),
            "attachment; filename=\"function0\"; filename*=UTF-8''function0"
        );
        assert_eq!(
            content_disposition("../a \"b\"\r\n.txt"),
            "attachment; filename=\"a__b___.txt\"; filename*=UTF-8''a__b___.txt"
        );
        assert_eq!(
            content_disposition("résumé.txt"),
            "attachment; filename=\"r_sum_.txt\"; filename*=UTF-8''r%C3%A9sum%C3%A9.txt"
        );
    }

    #[test]
    fn median() {
        assert_eq!(median_sorted(&[]), None);
        assert_eq!(median_sorted(&[1.0, 2.0, 9.0]), Some(2.0));
        assert_eq!(median_sorted(&[1.0, 2.0, 4.0, 9.0]), Some(3.0));
    }

    #[test]
    fn shapes_extra() {
        let v = serde_json::json!([{"time_us": 0, "func": "a", "zz": 1}, {"time_us": 1.5, "mark": "+"}]);
        let b = extra_block("entries", &v);
        assert_eq!(b.kind, "table");
        assert_eq!(b.columns, vec!["time_us", "mark", "func", "zz"]);
        assert_eq!(b.rows[1], vec!["1.5", "+", "", ""]);
        let b = extra_block("stack", &serde_json::json!(["a", "b"]));
        assert_eq!((b.kind, b.items.len()), ("list", 2));
        let b = extra_block("x", &serde_json::json!({"k": 1}));
        assert_eq!(b.kind, "pairs");
        assert_eq!(b.rows, vec![vec!["k".to_string(), "1".to_string()]]);
    }
}
