//! Parameter sweeps as matrices: one parameter varying, one cell per (value, series).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::rows::verdict_text;

use compare::Verdict;

use crate::report::Row;
use crate::web::view::{human, pct};

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

pub(super) fn strength(change: Option<f64>) -> &'static str {
    match change.map(f64::abs) {
        Some(c) if c >= 20.0 => "s3",
        Some(c) if c >= 5.0 => "s2",
        _ => "s1",
    }
}

pub(super) fn lean(r: &Row) -> &'static str {
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

pub(super) fn cell(idx: usize, r: &Row) -> Cell {
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

pub(super) const SWEEP_COLUMNS: usize = 10;

pub(super) fn sweeps(rows: &[Row]) -> Vec<Sweep> {
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
