//! The comparison page `/compare?base=..&head=..` and its exports (`/compare.csv`,
//! `/compare.json`). The view built here is shared with frozen comparisons (`/c/{id}`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Query, RawQuery, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use compare::{Flag, Settings, Verdict};
use serde::{Deserialize, Serialize};
use sqlx::{Row as _, SqlitePool};

use super::charts::{self, Ecdf, Strip};
use super::runs::{ExtraBlock, extra_block};
use super::view::{Missing, PageError, PageResult, close_matches, human, path_escape, pct, prob};
use crate::error::AppError;
use crate::report::{self, Report, Row, Selection};
use crate::state::AppState;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/compare", get(page))
        .route("/compare.csv", get(csv))
        .route("/compare.json", get(json))
}

/// The query string of a comparison: what to compare, the policy, and the table's filters.
/// Every field is text so that a bad value answers 400 with a reason of ours.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CompareQuery {
    pub base: Option<String>,
    pub head: Option<String>,
    pub benchmark: Option<String>,
    pub machine: Option<String>,
    pub metric: Option<String>,
    pub alpha: Option<String>,
    pub threshold: Option<String>,
    pub only: Option<String>,
    pub hide_ns: Option<String>,
    pub q: Option<String>,
}

/// Table filters (not part of the comparison itself).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewFilter {
    /// `regressions` or `changes` (any significant change).
    pub only: Option<String>,
    pub hide_ns: bool,
    /// Words that must all appear in the series' benchmark, params or name.
    pub q: Option<String>,
}

fn nonempty(v: &Option<String>) -> Option<String> {
    v.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

impl CompareQuery {
    /// Nothing asked yet: the page shows only the form.
    pub fn is_blank(&self) -> bool {
        [
            &self.base,
            &self.head,
            &self.benchmark,
            &self.machine,
            &self.metric,
            &self.alpha,
            &self.threshold,
            &self.only,
            &self.hide_ns,
            &self.q,
        ]
        .iter()
        .all(|v| nonempty(v).is_none())
    }

    pub fn selection(&self) -> Result<Selection, AppError> {
        let base = nonempty(&self.base)
            .ok_or_else(|| AppError::BadRequest("missing base: give base=BUILD_LABEL".into()))?;
        let head = nonempty(&self.head)
            .ok_or_else(|| AppError::BadRequest("missing head: give head=BUILD_LABEL".into()))?;
        Ok(Selection {
            base,
            head,
            benchmark: nonempty(&self.benchmark),
            machine: nonempty(&self.machine),
            metric: nonempty(&self.metric),
        })
    }

    pub fn settings(&self) -> Result<Settings, AppError> {
        let mut s = Settings::default();
        if let Some(a) = nonempty(&self.alpha) {
            s.alpha = match a.parse::<f64>() {
                Ok(v) if v > 0.0 && v < 1.0 => v,
                _ => {
                    return Err(AppError::BadRequest(format!(
                        "alpha must be a number between 0 and 1 (e.g. 0.05), found {a:?}"
                    )));
                }
            };
        }
        if let Some(t) = nonempty(&self.threshold) {
            s.threshold_pct = match t.trim_end_matches('%').parse::<f64>() {
                Ok(v) if v >= 0.0 && v.is_finite() => v,
                _ => {
                    return Err(AppError::BadRequest(format!(
                        "threshold must be a percentage >= 0 (e.g. 1), found {t:?}"
                    )));
                }
            };
        }
        Ok(s)
    }

    pub fn view(&self) -> Result<ViewFilter, AppError> {
        let only = nonempty(&self.only);
        if let Some(o) = &only
            && o != "regressions"
            && o != "changes"
        {
            return Err(AppError::BadRequest(format!(
                "only must be `regressions` or `changes`, found {o:?}"
            )));
        }
        let hide_ns = match nonempty(&self.hide_ns).as_deref() {
            None | Some("0") | Some("false") | Some("off") => false,
            Some("1") | Some("true") | Some("on") => true,
            Some(other) => {
                return Err(AppError::BadRequest(format!(
                    "hide_ns must be 1 or 0, found {other:?}"
                )));
            }
        };
        Ok(ViewFilter {
            only,
            hide_ns,
            q: nonempty(&self.q),
        })
    }

    /// Everything parsed, or the first reason it cannot be.
    pub fn parse(&self) -> Result<(Selection, Settings, ViewFilter), AppError> {
        Ok((self.selection()?, self.settings()?, self.view()?))
    }
}

/// The canonical query string of a comparison (defaults left out).
pub fn query_string(sel: &Selection, settings: &Settings, view: Option<&ViewFilter>) -> String {
    let d = Settings::default();
    let mut parts = vec![
        format!("base={}", path_escape(&sel.base)),
        format!("head={}", path_escape(&sel.head)),
    ];
    let mut push = |k: &str, v: &Option<String>| {
        if let Some(v) = v {
            parts.push(format!("{k}={}", path_escape(v)));
        }
    };
    push("benchmark", &sel.benchmark);
    push("machine", &sel.machine);
    push("metric", &sel.metric);
    if settings.alpha != d.alpha {
        parts.push(format!("alpha={}", settings.alpha));
    }
    if settings.threshold_pct != d.threshold_pct {
        parts.push(format!("threshold={}", settings.threshold_pct));
    }
    if let Some(v) = view {
        if let Some(o) = &v.only {
            parts.push(format!("only={}", path_escape(o)));
        }
        if v.hide_ns {
            parts.push("hide_ns=1".into());
        }
        if let Some(q) = &v.q {
            parts.push(format!("q={}", path_escape(q)));
        }
    }
    parts.join("&")
}

/// The GET form that picks a comparison (home page and comparison page).
#[derive(Debug, Clone, Default)]
pub struct CompareForm {
    pub builds: Vec<String>,
    pub benchmarks: Vec<String>,
    pub machines: Vec<String>,
    pub base: String,
    pub head: String,
    pub benchmark: String,
    pub machine: String,
    pub metric: String,
    pub alpha: String,
    pub threshold: String,
    pub only: String,
    pub hide_ns: bool,
    pub q: String,
}

impl CompareForm {
    /// The choices that exist, with nothing selected.
    pub async fn load(pool: &SqlitePool) -> Result<CompareForm, AppError> {
        let builds =
            sqlx::query_scalar("SELECT label FROM builds ORDER BY created_at DESC, id DESC")
                .fetch_all(pool)
                .await?;
        let benchmarks = sqlx::query_scalar("SELECT DISTINCT benchmark FROM runs ORDER BY 1")
            .fetch_all(pool)
            .await?;
        let machines = sqlx::query_scalar("SELECT name FROM machines ORDER BY name")
            .fetch_all(pool)
            .await?;
        Ok(CompareForm {
            builds,
            benchmarks,
            machines,
            ..CompareForm::default()
        })
    }

    /// Pre-fills the fields from a query.
    pub fn fill(&mut self, q: &CompareQuery) {
        let s = |v: &Option<String>| nonempty(v).unwrap_or_default();
        self.base = s(&q.base);
        self.head = s(&q.head);
        self.benchmark = s(&q.benchmark);
        self.machine = s(&q.machine);
        self.metric = s(&q.metric);
        self.alpha = s(&q.alpha);
        self.threshold = s(&q.threshold);
        self.only = s(&q.only);
        self.hide_ns = matches!(s(&q.hide_ns).as_str(), "1" | "true" | "on");
        self.q = s(&q.q);
    }

    pub fn is(&self, field: &str, value: &str) -> bool {
        match field {
            "base" => self.base == value,
            "head" => self.head == value,
            "benchmark" => self.benchmark == value,
            "machine" => self.machine == value,
            "only" => self.only == value,
            _ => false,
        }
    }
}

/// A build label that does not exist: a 404 listing close labels.
async fn check_builds(pool: &SqlitePool, sel: &Selection) -> PageResult<()> {
    for name in [&sel.base, &sel.head] {
        match report::find_build(pool, name).await {
            Ok(_) => {}
            Err(AppError::NotFound(_)) => {
                let labels: Vec<String> =
                    sqlx::query_scalar("SELECT label FROM builds ORDER BY label")
                        .fetch_all(pool)
                        .await?;
                return Err(PageError::Missing(Missing {
                    what: "build",
                    name: name.clone(),
                    suggestions: close_matches(name, &labels),
                    link_prefix: "/builds/",
                }));
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// The live report for a query, through the cache.
pub async fn live_report(
    st: &AppState,
    sel: &Selection,
    settings: &Settings,
) -> PageResult<Arc<Report>> {
    let generation = st.cache.generation(&st.pool).await?;
    let key = format!(
        "live\0{}",
        serde_json::to_string(&(sel, settings)).unwrap_or_default()
    );
    if let Some(r) = st.cache.get(&key, generation) {
        return Ok(r);
    }
    check_builds(&st.pool, sel).await?;
    let r = Arc::new(report::build(&st.pool, sel, settings).await?);
    st.cache.put(key, generation, r.clone());
    Ok(r)
}

// ---------------------------------------------------------------------------------------------
// The view of a report.

/// One line of the comparison table.
#[derive(Debug, Clone)]
pub struct RowView {
    pub idx: usize,
    pub benchmark: String,
    pub params: String,
    pub name: String,
    pub unit: String,
    pub n: String,
    pub base_med: String,
    pub head_med: String,
    pub change: String,
    pub ci: String,
    pub p: String,
    pub q: String,
    pub delta: String,
    pub verdict: &'static str,
    pub verdict_text: &'static str,
    /// (short text, explanation) of each flag.
    pub flags: Vec<(String, &'static str)>,
    /// Lower-case text the search box matches.
    pub search: String,
    pub significant: bool,
    pub charted: bool,
    /// Passes the table filters (rows that do not are rendered hidden, for live filtering).
    pub shown: bool,
}

fn verdict_text(r: &Row) -> &'static str {
    if r.cmp.flags.contains(&Flag::Summary) {
        return "summary values, no test possible";
    }
    match r.cmp.verdict {
        Verdict::Regression => "regression",
        Verdict::Improvement => "improvement",
        Verdict::Increase => "increase",
        Verdict::Decrease => "decrease",
        Verdict::NoSignificantChange => "no significant change",
        Verdict::NotEnoughData => "not enough data",
    }
}

fn flag_help(f: &Flag) -> &'static str {
    match f {
        Flag::WelchFallback => {
            "Too few samples for Mann-Whitney to reach alpha: Welch's t-test gave p."
        }
        Flag::Ties => "Tied or quantized values (e.g. 3-decimal time output).",
        Flag::PerCpu => "Samples are per-CPU values of one run, not repeated runs.",
        Flag::LargeN => "Very large n: samples inside one run are not independent.",
        Flag::MeanMedianDisagree => "Mean and median moved in different directions.",
        Flag::BelowThreshold => "Significant, but the change is below the practical threshold.",
        Flag::Inconclusive { .. } => "The interval spans the threshold: more runs would settle it.",
        Flag::Summary => "Pre-computed summary values, not samples: no test is possible.",
    }
}

fn is_change(v: Verdict) -> bool {
    matches!(
        v,
        Verdict::Regression | Verdict::Improvement | Verdict::Increase | Verdict::Decrease
    )
}

fn row_view(idx: usize, r: &Row) -> RowView {
    let c = &r.cmp;
    let params = r.params_text();
    let name = r.name();
    RowView {
        idx,
        search: format!("{} {} {}", r.benchmark, params, name).to_lowercase(),
        benchmark: r.benchmark.clone(),
        params: if params.is_empty() {
            "-".into()
        } else {
            params
        },
        name,
        unit: r.unit.clone(),
        n: format!("{} / {}", c.base.n, c.head.n),
        base_med: human(c.base.median, &r.unit),
        head_med: human(c.head.median, &r.unit),
        change: pct(c.change_pct),
        ci: c
            .ci
            .as_ref()
            .map(|i| format!("[{:+.2}%, {:+.2}%]", i.low, i.high))
            .unwrap_or_default(),
        p: prob(c.p),
        q: prob(c.q),
        delta: c
            .cliffs_delta
            .map(|d| format!("{d:+.2}"))
            .unwrap_or_else(|| "-".into()),
        verdict: c.verdict.as_str(),
        verdict_text: verdict_text(r),
        // The summary flag is the verdict text already.
        flags: c
            .flags
            .iter()
            .filter(|f| **f != Flag::Summary)
            .map(|f| (report::flag_text(f), flag_help(f)))
            .collect(),
        significant: is_change(c.verdict),
        charted: false,
        shown: true,
    }
}

fn keep(r: &Row, rv: &RowView, f: &ViewFilter) -> bool {
    match f.only.as_deref() {
        Some("regressions") if r.cmp.verdict != Verdict::Regression => return false,
        Some("changes") if !is_change(r.cmp.verdict) => return false,
        _ => {}
    }
    if f.hide_ns && r.cmp.verdict == Verdict::NoSignificantChange {
        return false;
    }
    if let Some(q) = &f.q {
        let q = q.to_lowercase();
        if !q.split_whitespace().all(|w| rv.search.contains(w)) {
            return false;
        }
    }
    true
}

/// A statistic of both sides for the numbers under a chart.
#[derive(Debug, Clone)]
pub struct StatLine {
    pub name: &'static str,
    pub base: String,
    pub head: String,
}

/// One series' charts and numbers.
#[derive(Debug, Clone)]
pub struct Detail {
    pub idx: usize,
    pub title: String,
    pub verdict: &'static str,
    pub verdict_text: &'static str,
    pub strip: Option<Strip>,
    pub ecdf: Option<Ecdf>,
    pub stats: Vec<StatLine>,
    /// (name, value) of the tests and effect sizes.
    pub tests: Vec<(&'static str, String)>,
    pub base_samples: String,
    pub head_samples: String,
    pub samples_more: usize,
}

/// Series charted in full on one page.
pub const CHARTS_SHOWN: usize = 30;
/// Sample values listed under a chart per side.
const SAMPLES_LISTED: usize = 200;

fn detail(idx: usize, r: &Row, base_name: &str, head_name: &str) -> Detail {
    let c = &r.cmp;
    let u = r.unit.as_str();
    let line = |name, f: &dyn Fn(&compare::Describe) -> String| StatLine {
        name,
        base: f(&c.base),
        head: f(&c.head),
    };
    let stats = vec![
        line("n", &|d| d.n.to_string()),
        line("min", &|d| human(d.min, u)),
        line("p25", &|d| human(d.p25, u)),
        line("median", &|d| human(d.median, u)),
        line("mean", &|d| human(d.mean, u)),
        line("p75", &|d| human(d.p75, u)),
        line("p90", &|d| human(d.p90, u)),
        line("p99", &|d| human(d.p99, u)),
        line("max", &|d| human(d.max, u)),
        line("std", &|d| human(d.std, u)),
        line("cv", &|d| {
            d.cv_pct
                .map(|v| format!("{v:.2}%"))
                .unwrap_or_else(|| "-".into())
        }),
    ];
    let mut tests = vec![("change of the median", pct(c.change_pct))];
    if let Some(i) = &c.ci {
        tests.push((
            "interval",
            format!(
                "[{:+.2}%, {:+.2}%] at {}% ({})",
                i.low,
                i.high,
                (i.level * 100.0).round(),
                i.method.replace('_', " ")
            ),
        ));
    }
    if let Some(mw) = &c.mann_whitney {
        tests.push((
            "Mann-Whitney",
            format!("U = {}, p = {} ({})", mw.u, prob(Some(mw.p)), mw.method),
        ));
    }
    if let Some(w) = &c.welch {
        tests.push((
            "Welch's t",
            format!("t = {:.3}, df = {:.1}, p = {}", w.t, w.df, prob(Some(w.p))),
        ));
    }
    if let Some(hl) = &c.hodges_lehmann {
        tests.push(("Hodges-Lehmann shift", human(Some(hl.shift), u)));
    }
    if let Some(d) = c.cliffs_delta {
        tests.push(("Cliff's delta", format!("{d:+.3}")));
    }
    tests.push(("p (test used)", format!("{} ({:?})", prob(c.p), c.test)));
    tests.push(("q (Benjamini-Hochberg)", prob(c.q)));
    let list = |v: &[f64]| {
        v.iter()
            .take(SAMPLES_LISTED)
            .map(|x| crate::cli::sig(*x))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let summary = c.flags.contains(&Flag::Summary);
    Detail {
        idx,
        title: format!("{} {} {}", r.benchmark, r.params_text(), r.name())
            .trim()
            .to_string(),
        verdict: c.verdict.as_str(),
        verdict_text: verdict_text(r),
        strip: if summary {
            None
        } else {
            charts::strip(
                &r.base_samples,
                &r.head_samples,
                &c.base,
                &c.head,
                (base_name, head_name),
                u,
            )
        },
        ecdf: if summary {
            None
        } else {
            charts::ecdf(&r.base_samples, &r.head_samples, u)
        },
        stats,
        tests,
        base_samples: list(&r.base_samples),
        head_samples: list(&r.head_samples),
        samples_more: r
            .base_samples
            .len()
            .max(r.head_samples.len())
            .saturating_sub(SAMPLES_LISTED),
    }
}

/// A cell of a sweep matrix.
#[derive(Debug, Clone)]
pub struct Cell {
    pub idx: usize,
    pub change: String,
    pub verdict: &'static str,
    /// Intensity class `s1`..`s3` by the size of the change.
    pub strength: &'static str,
    /// Without a test (`not_enough_data`): `worse` or `better` by the metric's direction, so
    /// a sweep of summaries still shows which way it went; empty otherwise.
    pub lean: &'static str,
    pub title: String,
}

fn strength(change: Option<f64>) -> &'static str {
    match change.map(f64::abs) {
        Some(c) if c >= 20.0 => "s3",
        Some(c) if c >= 5.0 => "s2",
        _ => "s1",
    }
}

fn lean(r: &Row) -> &'static str {
    use compare::Direction;
    if r.cmp.verdict != Verdict::NotEnoughData {
        return "";
    }
    match (r.direction, r.cmp.change_pct) {
        (Direction::LowerIsBetter, Some(c)) if c > 0.0 => "worse",
        (Direction::LowerIsBetter, Some(c)) if c < 0.0 => "better",
        (Direction::HigherIsBetter, Some(c)) if c < 0.0 => "worse",
        (Direction::HigherIsBetter, Some(c)) if c > 0.0 => "better",
        _ => "",
    }
}

fn cell(idx: usize, r: &Row) -> Cell {
    Cell {
        idx,
        change: pct(r.cmp.change_pct),
        verdict: r.cmp.verdict.as_str(),
        strength: strength(r.cmp.change_pct),
        lean: lean(r),
        title: format!(
            "{} → {} ({})",
            human(r.cmp.base.median, &r.unit),
            human(r.cmp.head.median, &r.unit),
            verdict_text(r)
        ),
    }
}

/// A parameter sweep: one parameter varies, everything else is the same.
#[derive(Debug, Clone)]
pub struct Sweep {
    pub benchmark: String,
    pub param: String,
    /// The parameters held fixed (`-` when none).
    pub fixed: String,
    pub columns: Vec<String>,
    /// (swept value, one cell per column).
    pub rows: Vec<(String, Vec<Option<Cell>>)>,
    pub more_columns: usize,
}

impl Sweep {
    /// Some cells only lean one way (no test behind them).
    pub fn has_untested(&self) -> bool {
        self.rows
            .iter()
            .flat_map(|(_, cells)| cells.iter().flatten())
            .any(|c| !c.lean.is_empty())
    }
}

const SWEEP_COLUMNS: usize = 10;

fn sweeps(rows: &[Row]) -> Vec<Sweep> {
    // (benchmark, swept param, fixed params) -> rows
    let mut groups: BTreeMap<(String, String, String), Vec<usize>> = BTreeMap::new();
    for (i, r) in rows.iter().enumerate() {
        for k in r.params.keys() {
            let fixed = r
                .params
                .iter()
                .filter(|(pk, _)| *pk != k)
                .map(|(pk, pv)| format!("{pk}={pv}"))
                .collect::<Vec<_>>()
                .join(" ");
            groups
                .entry((r.benchmark.clone(), k.clone(), fixed))
                .or_default()
                .push(i);
        }
    }
    let mut out = Vec::new();
    for ((benchmark, param, fixed), idxs) in groups {
        let values: BTreeSet<&String> = idxs.iter().map(|&i| &rows[i].params[&param]).collect();
        if values.len() < 2 {
            continue;
        }
        let mut values: Vec<&String> = values.into_iter().collect();
        values.sort_by(|a, b| crate::natural(a, b));
        let mut names: Vec<String> = idxs
            .iter()
            .map(|&i| rows[i].name())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        names.sort_by(|a, b| crate::natural(a, b));
        let more_columns = names.len().saturating_sub(SWEEP_COLUMNS);
        names.truncate(SWEEP_COLUMNS);
        let mut cells: HashMap<(&String, String), usize> = HashMap::new();
        for &i in &idxs {
            cells.insert((&rows[i].params[&param], rows[i].name()), i);
        }
        let table = values
            .iter()
            .map(|v| {
                (
                    (*v).clone(),
                    names
                        .iter()
                        .map(|n| cells.get(&(*v, n.clone())).map(|&i| cell(i, &rows[i])))
                        .collect(),
                )
            })
            .collect();
        out.push(Sweep {
            benchmark,
            param,
            fixed: if fixed.is_empty() { "-".into() } else { fixed },
            columns: names,
            rows: table,
            more_columns,
        });
    }
    out
}

/// A function profiler cell: base and head medians of one CPU (or the total).
#[derive(Debug, Clone, Default)]
pub struct ProfCell {
    pub hit_base: String,
    pub hit_head: String,
    pub hit_verdict: &'static str,
    pub hit_change: String,
    pub avg_base: String,
    pub avg_head: String,
    pub avg_verdict: &'static str,
    pub avg_change: String,
    pub present: bool,
}

/// One function of a trace_stat comparison.
#[derive(Debug, Clone)]
pub struct ProfFunc {
    pub name: String,
    /// One per CPU, then the total.
    pub cells: Vec<ProfCell>,
    /// The test over per-CPU hits (the report pools them), when there is one.
    pub pooled: Option<Cell>,
}

/// trace_stat as function x CPU.
#[derive(Debug, Clone)]
pub struct Profile {
    pub benchmark: String,
    pub params: String,
    pub cpus: Vec<String>,
    pub funcs: Vec<ProfFunc>,
    pub more: usize,
    /// Whether the totals are computed here from the per-CPU medians.
    pub computed_totals: bool,
}

const PROFILE_FUNCS: usize = 60;

fn split_prof_metric(metric: &str) -> Option<(&str, &str)> {
    let (f, field) = metric.rsplit_once('.')?;
    matches!(field, "hit" | "time" | "avg" | "s2").then_some((f, field))
}

fn is_cpu(scope: &str) -> bool {
    scope
        .strip_prefix("cpu")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Percent change of head against base.
fn change(base: Option<f64>, head: Option<f64>) -> Option<f64> {
    match (base, head) {
        (Some(b), Some(h)) if b != 0.0 => Some((h - b) / b.abs() * 100.0),
        _ => None,
    }
}

fn profiles(rows: &[Row]) -> Vec<Profile> {
    // (benchmark, params, label) -> (functions in order, function -> (field, scope) -> row)
    type Fields = HashMap<(String, String), usize>;
    type Group = (Vec<String>, HashMap<String, Fields>);
    let mut groups: BTreeMap<(String, String, String), Group> = BTreeMap::new();
    for (i, r) in rows.iter().enumerate() {
        if r.statistic.is_some() {
            continue;
        }
        let Some((func, field)) = split_prof_metric(&r.metric) else {
            continue;
        };
        if !(is_cpu(&r.scope) || r.scope == "all" || r.scope == "cpus") {
            continue;
        }
        let g = groups
            .entry((
                r.benchmark.clone(),
                r.params_text(),
                r.label.clone().unwrap_or_default(),
            ))
            .or_default();
        if !g.1.contains_key(func) {
            // Rows come sorted by significance: the first functions seen matter most.
            g.0.push(func.to_string());
        }
        g.1.entry(func.to_string())
            .or_default()
            .insert((field.to_string(), r.scope.clone()), i);
    }
    let mut out = Vec::new();
    for ((benchmark, params, label), (order, funcs)) in groups {
        let mut cpus: Vec<String> = funcs
            .values()
            .flat_map(|f| f.keys().map(|(_, s)| s.clone()))
            .filter(|s| is_cpu(s))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if cpus.is_empty() {
            continue;
        }
        cpus.sort_by(|a, b| crate::natural(a, b));
        let mut computed_totals = false;
        let med = |i: usize, base: bool| {
            let d = if base {
                &rows[i].cmp.base
            } else {
                &rows[i].cmp.head
            };
            d.median
        };
        let list: Vec<ProfFunc> = order
            .iter()
            .take(PROFILE_FUNCS)
            .map(|name| {
                let f = &funcs[name];
                let get = |field: &str, scope: &str| f.get(&(field.to_string(), scope.to_string()));
                let mut cells: Vec<ProfCell> = cpus
                    .iter()
                    .map(|cpu| {
                        let mut c = ProfCell::default();
                        if let Some(&i) = get("hit", cpu) {
                            c.present = true;
                            c.hit_base = human(med(i, true), &rows[i].unit);
                            c.hit_head = human(med(i, false), &rows[i].unit);
                            c.hit_verdict = rows[i].cmp.verdict.as_str();
                            c.hit_change = pct(rows[i].cmp.change_pct);
                        }
                        if let Some(&i) = get("avg", cpu) {
                            c.present = true;
                            c.avg_base = human(med(i, true), &rows[i].unit);
                            c.avg_head = human(med(i, false), &rows[i].unit);
                            c.avg_verdict = rows[i].cmp.verdict.as_str();
                            c.avg_change = pct(rows[i].cmp.change_pct);
                        }
                        c
                    })
                    .collect();
                // Totals: the file's own `all` rows, else sums over the CPUs.
                let mut total = ProfCell::default();
                if let Some(&i) = get("hit", "all") {
                    total.present = true;
                    total.hit_base = human(med(i, true), &rows[i].unit);
                    total.hit_head = human(med(i, false), &rows[i].unit);
                    total.hit_verdict = rows[i].cmp.verdict.as_str();
                    total.hit_change = pct(rows[i].cmp.change_pct);
                    if let Some(&j) = get("avg", "all") {
                        total.avg_base = human(med(j, true), &rows[j].unit);
                        total.avg_head = human(med(j, false), &rows[j].unit);
                        total.avg_verdict = rows[j].cmp.verdict.as_str();
                        total.avg_change = pct(rows[j].cmp.change_pct);
                    }
                } else {
                    computed_totals = true;
                    let sum = |field: &str, base: bool| -> Option<f64> {
                        let vals: Vec<f64> = cpus
                            .iter()
                            .filter_map(|c| get(field, c))
                            .filter_map(|&i| med(i, base))
                            .collect();
                        (!vals.is_empty()).then(|| vals.iter().sum())
                    };
                    let unit_of = |field: &str| {
                        cpus.iter()
                            .find_map(|c| get(field, c))
                            .map(|&i| rows[i].unit.clone())
                            .unwrap_or_default()
                    };
                    let (hb, hh) = (sum("hit", true), sum("hit", false));
                    if hb.is_some() || hh.is_some() {
                        total.present = true;
                        total.hit_base = human(hb, &unit_of("hit"));
                        total.hit_head = human(hh, &unit_of("hit"));
                        total.hit_change = pct(change(hb, hh));
                    }
                    let (tb, th) = (sum("time", true), sum("time", false));
                    let div = |t: Option<f64>, h: Option<f64>| match (t, h) {
                        (Some(t), Some(h)) if h > 0.0 => Some(t / h),
                        _ => None,
                    };
                    let ut = unit_of("time");
                    total.avg_base = human(div(tb, hb), &ut);
                    total.avg_head = human(div(th, hh), &ut);
                    total.avg_change = pct(change(div(tb, hb), div(th, hh)));
                }
                cells.push(total);
                ProfFunc {
                    name: name.clone(),
                    cells,
                    pooled: get("hit", "cpus").map(|&i| cell(i, &rows[i])),
                }
            })
            .collect();
        let p = if label.is_empty() {
            params
        } else {
            format!("{params} {{{label}}}").trim().to_string()
        };
        out.push(Profile {
            benchmark,
            params: if p.is_empty() { "-".into() } else { p },
            cpus,
            more: order.len().saturating_sub(PROFILE_FUNCS),
            funcs: list,
            computed_totals,
        });
    }
    out
}

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
const TRACES_SHOWN: i64 = 12;

/// The header fields shown first, in this order, when present.
const TRACE_KEYS: [&str; 10] = [
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

async fn latency(pool: &SqlitePool, r: &Report) -> Result<Option<Latency>, AppError> {
    if !r.comparisons.iter().any(|row| row.metric == "latency") {
        return Ok(None);
    }
    let mut traces = Vec::new();
    let mut more = false;
    let mut keys: BTreeSet<String> = BTreeSet::new();
    let mut raw: Vec<BTreeMap<String, String>> = Vec::new();
    for (side, ids) in [("base", &r.base.run_ids), ("head", &r.head.run_ids)] {
        let ids_json = serde_json::to_string(ids).unwrap_or_else(|_| "[]".into());
        let rows = sqlx::query(
            "SELECT ra.run_id, ra.seq, ra.file_name, ra.meta_json, ra.extra_json FROM run_artifacts ra \
             WHERE ra.format = 'latency' AND ra.run_id IN (SELECT value FROM json_each(?1)) \
             ORDER BY ra.run_id, ra.seq LIMIT ?2",
        )
        .bind(ids_json)
        .bind(TRACES_SHOWN + 1)
        .fetch_all(pool)
        .await?;
        more |= rows.len() as i64 > TRACES_SHOWN;
        let mut latencies: HashMap<i64, Vec<f64>> = HashMap::new();
        let mut seen_in_run: HashMap<i64, usize> = HashMap::new();
        for row in rows.iter().take(TRACES_SHOWN as usize) {
            let run_id: i64 = row.get(0);
            if let std::collections::hash_map::Entry::Vacant(slot) = latencies.entry(run_id) {
                let ids: Vec<i64> = sqlx::query_scalar(
                    "SELECT id FROM series WHERE run_id = ? AND metric = 'latency' \
                     AND label IS NULL AND statistic IS NULL",
                )
                .bind(run_id)
                .fetch_all(pool)
                .await?;
                let v: Vec<f64> = store::series_values(pool, &ids)
                    .await?
                    .into_iter()
                    .flat_map(|(_, v)| v)
                    .collect();
                slot.insert(v);
            }
            let meta: BTreeMap<String, serde_json::Value> =
                serde_json::from_str(row.get::<&str, _>(3)).unwrap_or_default();
            let extra: serde_json::Map<String, serde_json::Value> =
                serde_json::from_str(row.get::<&str, _>(4)).unwrap_or_default();
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
                    seq: row.get(1),
                    file_name: row.get(2),
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

/// Everything the comparison page shows about one report.
pub struct CompareView {
    pub report: Arc<Report>,
    pub rows: Vec<RowView>,
    pub details: Vec<Detail>,
    pub sweeps: Vec<Sweep>,
    pub profiles: Vec<Profile>,
    pub latency: Option<Latency>,
    pub email: String,
    /// The environment differs in more than the build (machine, boot command line).
    pub env_warning: bool,
    /// Canonical query (selection and settings, without the table filters).
    pub query: String,
    pub filter: ViewFilter,
    /// Hidden fields of the filter form: the selection and settings.
    pub sel_fields: Vec<(&'static str, String)>,
    /// Hidden fields of the share form: the selection, settings and filters.
    pub share_fields: Vec<(&'static str, String)>,
    pub csv_href: String,
    pub json_href: String,
    pub api_href: String,
}

impl CompareView {
    pub async fn build(
        pool: &SqlitePool,
        report: Arc<Report>,
        sel: &Selection,
        filter: ViewFilter,
    ) -> Result<CompareView, AppError> {
        let r = &report;
        let mut rows: Vec<RowView> = Vec::new();
        for (i, row) in r.comparisons.iter().enumerate() {
            let mut rv = row_view(i, row);
            rv.shown = keep(row, &rv, &filter);
            rows.push(rv);
        }
        let (bn, hn) = (r.base.build.label.as_str(), r.head.build.label.as_str());
        let mut details = Vec::new();
        for rv in rows.iter_mut().filter(|rv| rv.shown) {
            if details.len() >= CHARTS_SHOWN {
                break;
            }
            let row = &r.comparisons[rv.idx];
            if row.cmp.flags.contains(&Flag::Summary) {
                continue;
            }
            rv.charted = true;
            details.push(detail(rv.idx, row, bn, hn));
        }
        let query = query_string(sel, &r.settings, None);
        let mut sel_fields = vec![("base", sel.base.clone()), ("head", sel.head.clone())];
        for (k, v) in [
            ("benchmark", &sel.benchmark),
            ("machine", &sel.machine),
            ("metric", &sel.metric),
        ] {
            if let Some(v) = v {
                sel_fields.push((k, v.clone()));
            }
        }
        let d = Settings::default();
        if r.settings.alpha != d.alpha {
            sel_fields.push(("alpha", r.settings.alpha.to_string()));
        }
        if r.settings.threshold_pct != d.threshold_pct {
            sel_fields.push(("threshold", r.settings.threshold_pct.to_string()));
        }
        let mut share_fields = sel_fields.clone();
        for (k, v) in [("only", &filter.only), ("q", &filter.q)] {
            if let Some(v) = v {
                share_fields.push((k, v.clone()));
            }
        }
        if filter.hide_ns {
            share_fields.push(("hide_ns", "1".into()));
        }
        Ok(CompareView {
            sweeps: sweeps(&r.comparisons),
            profiles: profiles(&r.comparisons),
            latency: latency(pool, r).await?,
            email: report::email_text(r),
            env_warning: r.env_diff.iter().any(|d| d.is_environmental()),
            csv_href: format!("/compare.csv?{query}"),
            json_href: format!("/compare.json?{query}"),
            api_href: format!("/api/v1/compare?{query}"),
            query,
            filter,
            sel_fields,
            share_fields,
            rows,
            details,
            report,
        })
    }

    /// Whether more series could have been charted.
    pub fn charts_capped(&self) -> bool {
        self.details.len() == CHARTS_SHOWN
    }

    /// How many rows pass the filters.
    pub fn shown(&self) -> usize {
        self.rows.iter().filter(|r| r.shown).count()
    }

    /// How many rows the filters hide.
    pub fn hidden(&self) -> usize {
        self.rows.len() - self.shown()
    }

    pub fn base_runs(&self) -> String {
        runs_text(&self.report.base.run_ids)
    }

    pub fn head_runs(&self) -> String {
        runs_text(&self.report.head.run_ids)
    }
}

fn runs_text(ids: &[i64]) -> String {
    match ids.len() {
        0 => "no runs".into(),
        1 => "1 run".into(),
        n => format!("{n} runs"),
    }
}

/// A frozen comparison's identity, shown above its numbers.
#[derive(Debug, Clone)]
pub struct FrozenInfo {
    pub id: String,
    pub created: String,
    pub newer_runs: bool,
    /// The live comparison of the same selection.
    pub live_href: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "compare/page.html")]
pub struct ComparePage {
    pub form: CompareForm,
    pub v: Option<CompareView>,
    pub frozen: Option<FrozenInfo>,
}

/// Serves a rendered page from the cache, or renders it with `make` and keeps it.
pub async fn cached_page<F>(st: &AppState, key: String, make: F) -> PageResult<Response>
where
    F: std::future::Future<Output = PageResult<ComparePage>>,
{
    let generation = st.cache.generation(&st.pool).await?;
    let body = match st.cache.get_page(&key, generation) {
        Some(b) => b,
        None => {
            let html = make
                .await?
                .render()
                .map_err(|e| AppError::Anyhow(anyhow::anyhow!("rendering {key}: {e}")))?;
            let b = axum::body::Bytes::from(html);
            st.cache.put_page(key, generation, b.clone());
            b
        }
    };
    Ok(([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response())
}

async fn page(
    State(st): State<AppState>,
    RawQuery(raw): RawQuery,
    Query(q): Query<CompareQuery>,
) -> PageResult<Response> {
    let key = format!("/compare?{}", raw.unwrap_or_default());
    cached_page(&st, key, async {
        let mut form = CompareForm::load(&st.pool).await?;
        form.fill(&q);
        if q.is_blank() {
            return Ok(ComparePage {
                form,
                v: None,
                frozen: None,
            });
        }
        let (sel, settings, filter) = q.parse()?;
        let report = live_report(&st, &sel, &settings).await?;
        let v = CompareView::build(&st.pool, report, &sel, filter).await?;
        Ok(ComparePage {
            form,
            v: Some(v),
            frozen: None,
        })
    })
    .await
}

/// A text download with a file name.
pub fn download(body: String, content_type: &'static str, file_name: &str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type.to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!("inline; filename=\"{file_name}\""),
            ),
        ],
        body,
    )
        .into_response()
}

/// `comparison-BASE-vs-HEAD` with only safe characters.
pub fn export_name(r: &Report, ext: &str) -> String {
    let clean = |s: &str| store::safe_file_name(&s.replace('/', "_"));
    format!(
        "comparison-{}-vs-{}.{ext}",
        clean(&r.base.build.label),
        clean(&r.head.build.label)
    )
    .chars()
    .map(|c| if c.is_ascii() { c } else { '_' })
    .collect()
}

async fn csv(State(st): State<AppState>, Query(q): Query<CompareQuery>) -> PageResult<Response> {
    let (sel, settings, _) = q.parse()?;
    let r = live_report(&st, &sel, &settings).await?;
    Ok(download(
        report::csv_text(&r),
        "text/csv; charset=utf-8",
        &export_name(&r, "csv"),
    ))
}

/// The same JSON as `quiescent compare --json`.
pub fn report_json(r: &Report) -> Result<String, AppError> {
    serde_json::to_string_pretty(r).map_err(|e| AppError::Anyhow(e.into()))
}

async fn json(State(st): State<AppState>, Query(q): Query<CompareQuery>) -> PageResult<Response> {
    let (sel, settings, _) = q.parse()?;
    let r = live_report(&st, &sel, &settings).await?;
    Ok(download(
        report_json(&r)?,
        "application/json",
        &export_name(&r, "json"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(pairs: &[(&str, &str)]) -> CompareQuery {
        let s = pairs
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join("&");
        serde_json::from_value(serde_json::json!(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>()
        ))
        .unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn parses_queries() {
        let (sel, st, view) = q(&[
            ("base", "v4.19"),
            ("head", "v5.1"),
            ("alpha", "0.01"),
            ("threshold", "2%"),
            ("only", "regressions"),
            ("hide_ns", "1"),
            ("benchmark", ""),
        ])
        .parse()
        .unwrap();
        assert_eq!(sel.base, "v4.19");
        assert_eq!(sel.benchmark, None);
        assert_eq!((st.alpha, st.threshold_pct), (0.01, 2.0));
        assert_eq!(view.only.as_deref(), Some("regressions"));
        assert!(view.hide_ns);
        assert_eq!(
            query_string(&sel, &st, Some(&view)),
            "base=v4.19&head=v5.1&alpha=0.01&threshold=2&only=regressions&hide_ns=1"
        );
    }

    #[test]
    fn rejects_bad_queries_with_reasons() {
        let e = q(&[("base", "a")]).parse().unwrap_err();
        assert!(e.to_string().contains("missing head"), "{e}");
        for (k, v, want) in [
            ("alpha", "abc", "alpha must be"),
            ("alpha", "1.5", "alpha must be"),
            ("threshold", "-1", "threshold must be"),
            ("only", "everything", "only must be"),
            ("hide_ns", "maybe", "hide_ns must be"),
        ] {
            let e = q(&[("base", "a"), ("head", "b"), (k, v)])
                .parse()
                .unwrap_err();
            assert!(matches!(e, AppError::BadRequest(_)));
            assert!(e.to_string().contains(want), "{k}={v}: {e}");
        }
    }

    #[test]
    fn classifies_trace_stat_metrics() {
        assert_eq!(
            split_prof_metric("rcu_preempt_deferred_qs_handle.hit"),
            Some(("rcu_preempt_deferred_qs_handle", "hit"))
        );
        assert_eq!(split_prof_metric("a.b.avg"), Some(("a.b", "avg")));
        assert_eq!(split_prof_metric("real"), None);
        assert_eq!(split_prof_metric("x.p99"), None);
        assert!(is_cpu("cpu12") && !is_cpu("cpus") && !is_cpu("cpu"));
        assert_eq!(strength(Some(-25.0)), "s3");
        assert_eq!(strength(Some(6.0)), "s2");
        assert_eq!(strength(None), "s1");
    }
}
