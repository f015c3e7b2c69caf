//! Function profiles (trace_stat) as function x CPU tables of hits and average times.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::sweep::{Cell, cell};

use crate::report::Row;
use crate::web::view::{human, pct};

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

pub(super) const PROFILE_FUNCS: usize = 60;

pub(super) fn split_prof_metric(metric: &str) -> Option<(&str, &str)> {
    let (f, field) = metric.rsplit_once('.')?;
    matches!(field, "hit" | "time" | "avg" | "s2").then_some((f, field))
}

pub(super) fn is_cpu(scope: &str) -> bool {
    scope
        .strip_prefix("cpu")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Where a function's field on one CPU (or in total) comes from: its own row, or the value a
/// pooled row folded in (a single run's per-CPU series have no rows of their own).
#[derive(Clone, Copy)]
enum Source {
    Row(usize),
    /// The `k`th per-CPU value of the pooled row `row`.
    Folded {
        row: usize,
        k: usize,
    },
}

/// A field's base and head medians, verdict and change in percent, and the row giving its unit.
struct Values {
    base: Option<f64>,
    head: Option<f64>,
    verdict: &'static str,
    change: Option<f64>,
    row: usize,
}

fn values(rows: &[Row], src: Source) -> Values {
    match src {
        Source::Row(i) => {
            let c = &rows[i].cmp;
            Values {
                base: c.base.median,
                head: c.head.median,
                verdict: c.verdict.as_str(),
                change: c.change_pct,
                row: i,
            }
        }
        // One value a side: what the series' own row would say.
        Source::Folded { row, k } => {
            let v = &rows[row].per_cpu[k];
            Values {
                base: v.base,
                head: v.head,
                verdict: compare::Verdict::NotEnoughData.as_str(),
                change: compare::change_pct(v.base, v.head),
                row,
            }
        }
    }
}

pub(super) fn profiles(rows: &[Row]) -> Vec<Profile> {
    // (benchmark, params, label) -> (functions in order, function -> (field, scope) -> source)
    type Fields = HashMap<(String, String), Source>;
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
        let fields = g.1.entry(func.to_string()).or_default();
        fields.insert((field.to_string(), r.scope.clone()), Source::Row(i));
        for (k, v) in r.per_cpu.iter().enumerate() {
            // A CPU's own row, when it has one, says more than its folded value.
            fields
                .entry((field.to_string(), v.cpu.to_string()))
                .or_insert(Source::Folded { row: i, k });
        }
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
        let list: Vec<ProfFunc> = order
            .iter()
            .take(PROFILE_FUNCS)
            .map(|name| {
                let f = &funcs[name];
                let get = |field: &str, scope: &str| {
                    f.get(&(field.to_string(), scope.to_string()))
                        .map(|&src| values(rows, src))
                };
                let mut cells: Vec<ProfCell> = cpus
                    .iter()
                    .map(|cpu| {
                        let mut c = ProfCell::default();
                        if let Some(v) = get("hit", cpu) {
                            c.present = true;
                            c.hit_base = human(v.base, &rows[v.row].unit);
                            c.hit_head = human(v.head, &rows[v.row].unit);
                            c.hit_verdict = v.verdict;
                            c.hit_change = pct(v.change);
                        }
                        if let Some(v) = get("avg", cpu) {
                            c.present = true;
                            c.avg_base = human(v.base, &rows[v.row].unit);
                            c.avg_head = human(v.head, &rows[v.row].unit);
                            c.avg_verdict = v.verdict;
                            c.avg_change = pct(v.change);
                        }
                        c
                    })
                    .collect();
                // Totals: the file's own `all` rows, else sums over the CPUs.
                let mut total = ProfCell::default();
                if let Some(v) = get("hit", "all") {
                    total.present = true;
                    total.hit_base = human(v.base, &rows[v.row].unit);
                    total.hit_head = human(v.head, &rows[v.row].unit);
                    total.hit_verdict = v.verdict;
                    total.hit_change = pct(v.change);
                    if let Some(w) = get("avg", "all") {
                        total.avg_base = human(w.base, &rows[w.row].unit);
                        total.avg_head = human(w.head, &rows[w.row].unit);
                        total.avg_verdict = w.verdict;
                        total.avg_change = pct(w.change);
                    }
                } else {
                    computed_totals = true;
                    let sum = |field: &str, base: bool| -> Option<f64> {
                        let vals: Vec<f64> = cpus
                            .iter()
                            .filter_map(|c| get(field, c))
                            .filter_map(|v| if base { v.base } else { v.head })
                            .collect();
                        (!vals.is_empty()).then(|| vals.iter().sum())
                    };
                    let unit_of = |field: &str| {
                        cpus.iter()
                            .find_map(|c| get(field, c))
                            .map(|v| rows[v.row].unit.to_string())
                            .unwrap_or_default()
                    };
                    let (hb, hh) = (sum("hit", true), sum("hit", false));
                    if hb.is_some() || hh.is_some() {
                        total.present = true;
                        total.hit_base = human(hb, unit_of("hit"));
                        total.hit_head = human(hh, unit_of("hit"));
                        total.hit_change = pct(compare::change_pct(hb, hh));
                    }
                    let (tb, th) = (sum("time", true), sum("time", false));
                    let div = |t: Option<f64>, h: Option<f64>| match (t, h) {
                        (Some(t), Some(h)) if h > 0.0 => Some(t / h),
                        _ => None,
                    };
                    let ut = unit_of("time");
                    total.avg_base = human(div(tb, hb), &ut);
                    total.avg_head = human(div(th, hh), &ut);
                    total.avg_change = pct(compare::change_pct(div(tb, hb), div(th, hh)));
                }
                cells.push(total);
                ProfFunc {
                    name: name.clone(),
                    cells,
                    pooled: match f.get(&("hit".to_string(), "cpus".to_string())) {
                        Some(&Source::Row(i)) => Some(cell(i, &rows[i])),
                        _ => None,
                    },
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
