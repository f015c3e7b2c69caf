//! The report as plain text within 72 columns, for an LKML reply: lkp-style lines and a
//! one-line legend.

use compare::Verdict;

use crate::format;
use crate::report::Report;

use super::{clip, median_h};

fn std_pct(d: &compare::Describe) -> String {
    match d.cv_pct {
        Some(cv) if d.n >= 2 => format!("±{:.1}%", cv),
        _ => String::new(),
    }
}

/// Plain text within 72 columns for an LKML reply.
pub fn text(r: &Report) -> String {
    text_first(r, r.comparisons.len())
}

/// [`text`] listing the first `rows` series only (in the report's order, regressions first)
/// and then how many it left out: a page shows two profiles' millions of series this way.
pub fn text_first(r: &Report, rows: usize) -> String {
    let commit = |c: &Option<String>| c.as_ref().map(|c| format!(" ({c})")).unwrap_or_default();
    let mut out = format!(
        "base: {}{}\nhead: {}{}\n\n",
        r.base.build.label,
        commit(&r.base.build.commit),
        r.head.build.label,
        commit(&r.head.build.commit),
    );
    out.push_str("            base  %stddev     %change           head  %stddev\n");
    out.push_str("---------------- --------  ---------- -------------- --------\n");
    let mut last_bench = String::new();
    for row in r.comparisons.iter().take(rows) {
        if row.benchmark != last_bench {
            out.push_str(&format!("{}:\n", clip(&row.benchmark, 72)));
            last_bench = row.benchmark.clone();
        }
        let c = &row.cmp;
        let mark = match c.verdict {
            Verdict::Regression => "R",
            Verdict::Improvement => "I",
            Verdict::Increase => "+",
            Verdict::Decrease => "-",
            Verdict::NoSignificantChange => " ",
            Verdict::NotEnoughData => "?",
        };
        out.push_str(&format!(
            "{:>16} {:>8}  {:>9}{} {:>14} {:>8}\n",
            clip(&median_h(&c.base, &row.unit), 16),
            std_pct(&c.base),
            format::percent(c.change_pct, 1),
            mark,
            clip(&median_h(&c.head, &row.unit), 14),
            std_pct(&c.head),
        ));
        let mut name = String::from("    ");
        let params = row.params_text();
        if !params.is_empty() {
            name.push_str(&params);
            name.push(' ');
        }
        name.push_str(&row.name());
        out.push_str(&clip(&name, 72));
        out.push('\n');
    }
    if let Some(left) = r.comparisons.len().checked_sub(rows).filter(|&n| n > 0) {
        out.push_str(&format!("({left} more series, not listed here)\n"));
    }
    out.push_str(&format!(
        "\n{} series: {},\n{} unchanged, {} without enough data.\n",
        r.summary.total,
        r.summary.changes_text(),
        r.summary.unchanged,
        r.summary.not_enough_data
    ));
    out.push_str(&format!(
        "Legend: medians; R/I regression/improvement, +/- change of a neutral\nmetric, ? too few samples; significant at q < {} and |change| >= {}%.\n",
        r.settings.alpha, r.settings.threshold_pct
    ));
    out
}
