//! The report as a GitHub-flavoured Markdown table.

use crate::format;
use crate::report::Report;

use super::{ci_text, flags_text, median_h};

/// A GitHub-flavoured Markdown table.
pub fn text(r: &Report) -> String {
    let esc = |s: &str| s.replace('|', "\\|").replace('\n', " ");
    let mut out = format!(
        "Comparison of **{}** (base) and **{}** (head)\n\n| benchmark | params | series | base median | head median | change | 95% CI | p | q | verdict | flags |\n|---|---|---|---:|---:|---:|---|---:|---:|---|---|\n",
        esc(&r.base.build.label),
        esc(&r.head.build.label)
    );
    for row in &r.comparisons {
        let c = &row.cmp;
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            esc(&row.benchmark),
            esc(&row.params_text()),
            esc(&row.name()),
            median_h(&c.base, &row.unit),
            median_h(&c.head, &row.unit),
            format::percent(c.change_pct, 1),
            ci_text(c),
            format::p_value(c.p),
            format::p_value(c.q),
            c.verdict.as_str(),
            esc(&flags_text(row)),
        ));
    }
    out
}
