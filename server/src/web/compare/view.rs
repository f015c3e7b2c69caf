//! Everything the comparison page shows about one report, built from it in one pass.

use std::sync::Arc;

use compare::{Flag, Settings};
use store::Store;

use super::latency::{Latency, latency};
use super::profile::{Profile, profiles};
use super::rows::{CHARTS_SHOWN, Detail, RowView, detail, keep, row_view};
use super::sweep::{Sweep, sweeps};
use super::{ViewFilter, query_string};
use crate::error::AppError;
use crate::report::{Report, Selection};

/// Rows rendered into the table at most. A larger report (a profile compares millions of
/// series, hundreds of bytes of HTML each) renders only the rows that pass the filters, the
/// first this many in the report's order (regressions first): the filters then work through
/// the server, and the exports hold every row.
pub const ROWS_RENDERED: usize = 2000;

/// Everything the comparison page shows about one report.
pub struct CompareView {
    pub report: Arc<Report>,
    pub rows: Vec<RowView>,
    /// Rows that pass the filters, rendered or not.
    pub shown_rows: usize,
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
    /// When the sides share no series: each side's build, how many kinds of series it holds,
    /// and the first few in words.
    pub held: Vec<(String, usize, Vec<String>)>,
}

impl CompareView {
    pub async fn build(
        store: &Store,
        report: Arc<Report>,
        sel: &Selection,
        filter: ViewFilter,
    ) -> Result<CompareView, AppError> {
        let r = &report;
        let capped = r.comparisons.len() > ROWS_RENDERED;
        let mut rows: Vec<RowView> = Vec::new();
        let mut shown_rows = 0;
        for (i, row) in r.comparisons.iter().enumerate() {
            let shown = keep(row, &filter);
            shown_rows += usize::from(shown);
            if capped && (!shown || rows.len() == ROWS_RENDERED) {
                continue;
            }
            let mut rv = row_view(i, row);
            rv.shown = shown;
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
        let mut held = Vec::new();
        if r.comparisons.is_empty() {
            for side in [&r.base, &r.head] {
                if !side.run_ids.is_empty() {
                    let (n, shown) = crate::report::series_of_runs(store, &side.run_ids, 4).await?;
                    held.push((side.build.label.clone(), n, shown));
                }
            }
        }
        Ok(CompareView {
            held,
            sweeps: sweeps(&r.comparisons),
            profiles: profiles(&r.comparisons),
            latency: latency(store, r).await?,
            email: crate::export::email::text_first(r, ROWS_RENDERED),
            env_warning: r.env_diff.iter().any(|d| d.is_environmental()),
            csv_href: format!("/compare.csv?{query}"),
            json_href: format!("/compare.json?{query}"),
            api_href: format!("/api/v1/compare?{query}"),
            query,
            filter,
            sel_fields,
            share_fields,
            rows,
            shown_rows,
            details,
            report,
        })
    }

    /// Whether more series could have been charted.
    pub fn charts_capped(&self) -> bool {
        self.details.len() == CHARTS_SHOWN
    }

    /// Whether only the rows that pass the filters are rendered, at most [`ROWS_RENDERED`].
    pub fn capped(&self) -> bool {
        self.report.comparisons.len() > ROWS_RENDERED
    }

    /// Whether rows that pass the filters were left out of the table ([`ROWS_RENDERED`]).
    pub fn cut(&self) -> bool {
        self.shown_rows > self.rows.len()
    }

    /// How many rows pass the filters.
    pub fn shown(&self) -> usize {
        self.shown_rows
    }

    pub fn base_runs(&self) -> String {
        runs_text(&self.report.base.run_ids)
    }

    pub fn head_runs(&self) -> String {
        runs_text(&self.report.head.run_ids)
    }
}

pub(super) fn runs_text(ids: &[i64]) -> String {
    match ids.len() {
        0 => "no runs".into(),
        1 => "1 run".into(),
        n => format!("{n} runs"),
    }
}
