//! The report for a terminal: one table per benchmark, sweeps as matrices, and a
//! ministat-like sketch of each changed series.

use std::collections::BTreeMap;

use compare::Verdict;

use crate::format;
use crate::report::{Report, Row};

use super::{ci_text, clip, flags_text, median_h};

/// A side's build and how many runs were pooled; files and mails compared without a
/// database have no runs to count.
fn side(s: &crate::report::Side) -> String {
    if s.run_ids.is_empty() {
        s.build.label.clone()
    } else {
        format!(
            "{} ({})",
            s.build.label,
            format::count(s.run_ids.len(), "run")
        )
    }
}

/// The terminal report; `width` bounds the sketches.
pub fn text(r: &Report, width: usize) -> String {
    let mut out = format!("base: {}   head: {}\n", side(&r.base), side(&r.head));
    for d in &r.env_diff {
        out.push_str(&format!(
            "  differs: {}: {} -> {}\n",
            d.field,
            clip(&d.base, 40),
            clip(&d.head, 40)
        ));
    }
    // One table per benchmark: the benchmark is a heading, not a repeated column.
    let mut benches: Vec<&str> = Vec::new();
    for row in &r.comparisons {
        if !benches.contains(&row.benchmark.as_str()) {
            benches.push(&row.benchmark);
        }
    }
    for bench in benches {
        if !bench.is_empty() {
            out.push_str(&format!("\n{bench}\n"));
        }
        let mut table = comfy_table::Table::new();
        table.load_style(comfy_table::presets::NOTHING);
        table.set_header(vec![
            "params", "series", "n", "base", "head", "change", "95% CI", "p", "q", "verdict",
            "flags",
        ]);
        for row in r.comparisons.iter().filter(|x| x.benchmark == bench) {
            let c = &row.cmp;
            table.add_row(vec![
                row.params_text(),
                row.name(),
                format!("{}/{}", c.base.n, c.head.n),
                median_h(&c.base, &row.unit),
                median_h(&c.head, &row.unit),
                format::percent(c.change_pct, 1),
                ci_text(c),
                format::p_value(c.p),
                format::p_value(c.q),
                c.verdict.as_str().to_string(),
                flags_text(row),
            ]);
        }
        out.push_str(&table.trim_fmt());
        out.push('\n');
    }
    out.push_str(&sweep_matrices(r));
    for row in r.comparisons.iter().filter(|r| {
        matches!(
            r.cmp.verdict,
            Verdict::Regression | Verdict::Improvement | Verdict::Increase | Verdict::Decrease
        )
    }) {
        out.push_str(&format!(
            "\n{} {} {}: x = {}, + = {}\n",
            row.benchmark,
            row.params_text(),
            row.name(),
            r.base.build.label,
            r.head.build.label
        ));
        out.push_str(&compare::text_sketch(
            &row.base_samples,
            &row.head_samples,
            width.clamp(40, 100),
        ));
        out.push('\n');
    }
    out.push_str(&format!(
        "\n{} series: {}, {} unchanged, {} without enough data\n",
        r.summary.total,
        r.summary.changes_text(),
        r.summary.unchanged,
        r.summary.not_enough_data
    ));
    out
}

/// Parameter sweeps (one param varying, same metric) as matrices: rows = the swept value.
pub fn sweep_matrices(r: &Report) -> String {
    let mut groups: BTreeMap<(String, String, String), Vec<&Row>> = BTreeMap::new();
    for row in &r.comparisons {
        if row.params.len() == 1 && row.scope == "all" {
            let (k, _) = row.params.iter().next().expect("one param");
            groups
                .entry((row.benchmark.clone(), k.clone(), row.name()))
                .or_default()
                .push(row);
        }
    }
    let mut out = String::new();
    for ((bench, param, name), mut rows) in groups {
        if rows.len() < 2 {
            continue;
        }
        rows.sort_by(|a, b| crate::natural(&a.params[&param], &b.params[&param]));
        out.push_str(&format!("\n{bench}: {name} by {param}\n"));
        // Columns as wide as what they hold (swept values such as scenario names run long),
        // the figures right-aligned so that their digits line up.
        let mut table = comfy_table::Table::new();
        table.load_style(comfy_table::presets::NOTHING);
        table.set_header(vec![
            param.clone(),
            clip(&r.base.build.label, 32),
            clip(&r.head.build.label, 32),
            "change".to_string(),
            "verdict".to_string(),
        ]);
        for row in &rows {
            table.add_row(vec![
                row.params[&param].clone(),
                median_h(&row.cmp.base, &row.unit),
                median_h(&row.cmp.head, &row.unit),
                format::percent(row.cmp.change_pct, 1),
                row.cmp.verdict.as_str().to_string(),
            ]);
        }
        let numeric = rows.iter().all(|r| r.params[&param].parse::<f64>().is_ok());
        for i in (if numeric { 0 } else { 1 })..4 {
            if let Some(c) = table.column_mut(i) {
                c.set_cell_alignment(comfy_table::CellAlignment::Right);
            }
        }
        out.push_str(&table.trim_fmt());
        out.push('\n');
    }
    out
}
