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

pub(super) fn profiles(rows: &[Row]) -> Vec<Profile> {
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
                            .map(|&i| rows[i].unit.to_string())
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
