//! `/runs`: every stored run, newest first, narrowed by build, machine and benchmark.

use askama::Template;
use askama_web::WebTemplate;
use axum::Router;
use axum::extract::{Query, State};
use axum::routing::get;
use serde::Deserialize;

use super::runs::{RunFilter, RunSummary, count_runs, list_runs};
use super::view::PageResult;
use crate::state::AppState;

/// Runs a page lists at most; the filters (or the JSON API) reach the rest.
const SHOWN: usize = 200;

/// Matching runs counted at most for a page's "in all": past it the page says "more than".
const COUNTED: i64 = 100_000;

pub fn routes() -> Router<AppState> {
    Router::new().route("/runs", get(page))
}

/// The filters as the form sends them: an empty field is no filter.
#[derive(Debug, Default, Deserialize)]
pub struct RunListQuery {
    #[serde(default)]
    pub build: String,
    #[serde(default)]
    pub machine: String,
    #[serde(default)]
    pub benchmark: String,
    /// Runs older than this run id: the pages after the first.
    #[serde(default)]
    pub before: String,
}

#[derive(Template, WebTemplate)]
#[template(path = "run/list.html")]
pub struct RunListPage {
    pub q: RunListQuery,
    pub runs: Vec<RunSummary>,
    /// More runs match than are listed: the id to list the older ones from.
    pub older_than: Option<i64>,
    /// This page starts after a run (`before`), so newer runs are on earlier pages.
    pub paged: bool,
    /// How many runs match in all, when the page lists only some of them: up to [`COUNTED`],
    /// `COUNTED + 1` meaning more.
    pub matching: Option<i64>,
}

impl RunListPage {
    /// `matching` as the page prints it: `1,234`, or `more than 100,000`.
    pub fn in_all(&self) -> Option<String> {
        let grouped = |n: i64| crate::format::grouped(n.max(0) as u64);
        self.matching.map(|n| {
            if n > COUNTED {
                format!("more than {}", grouped(COUNTED))
            } else {
                grouped(n)
            }
        })
    }

    /// Whether any filter is given (the fields come trimmed).
    pub fn filtered(&self) -> bool {
        [&self.q.build, &self.q.machine, &self.q.benchmark]
            .iter()
            .any(|v| !v.is_empty())
    }
}

async fn page(
    State(st): State<AppState>,
    Query(q): Query<RunListQuery>,
) -> PageResult<RunListPage> {
    let given = |s: &str| Some(s.trim().to_string()).filter(|s| !s.is_empty());
    let filter = RunFilter {
        build: given(&q.build),
        machine: given(&q.machine),
        benchmark: given(&q.benchmark),
        // One more than shown, to know whether there are more.
        limit: SHOWN as i64 + 1,
        before: super::runs::before_run(Some(&q.before))?,
    };
    let (runs, older_than) = one_page(list_runs(&st.store, &filter).await?, SHOWN);
    let paged = filter.before.is_some();
    // Counted only when the page does not hold every matching run.
    let matching = if paged || older_than.is_some() {
        Some(count_runs(&st.store, &filter, COUNTED).await?)
    } else {
        None
    };
    Ok(RunListPage {
        q: RunListQuery {
            build: filter.build.unwrap_or_default(),
            machine: filter.machine.unwrap_or_default(),
            benchmark: filter.benchmark.unwrap_or_default(),
            before: String::new(),
        },
        runs,
        older_than,
        paged,
        matching,
    })
}

/// The first `shown` of `runs` (newest first), and the id the next page lists runs older
/// than when there are more. Pages are cut at run ids rather than counted by offset, so runs
/// stored meanwhile do not shift the older pages.
fn one_page(mut runs: Vec<RunSummary>, shown: usize) -> (Vec<RunSummary>, Option<i64>) {
    let more = runs.len() > shown;
    runs.truncate(shown);
    let older_than = runs.last().filter(|_| more).map(|r| r.id);
    (runs, older_than)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runs(ids: &[i64]) -> Vec<RunSummary> {
        ids.iter()
            .map(|&id| RunSummary {
                id,
                build: "b".into(),
                machine: "m".into(),
                benchmark: "x".into(),
                params_key: String::new(),
                created_at: 0,
                series: 1,
                samples: 1,
            })
            .collect()
    }

    #[test]
    fn a_page_ends_at_its_last_run_when_more_follow() {
        let (page, older) = one_page(runs(&[9, 7, 4, 2]), 3);
        assert_eq!(page.iter().map(|r| r.id).collect::<Vec<_>>(), [9, 7, 4]);
        assert_eq!(older, Some(4));
        let (page, older) = one_page(runs(&[9, 7, 4]), 3);
        assert_eq!(page.len(), 3);
        assert_eq!(older, None, "no further page when all fit");
        assert_eq!(one_page(Vec::new(), 3).1, None);
    }

    #[test]
    fn the_count_in_all_reads_grouped_or_as_more_than_the_cap() {
        let page = |matching| RunListPage {
            q: RunListQuery::default(),
            runs: Vec::new(),
            older_than: None,
            paged: true,
            matching,
        };
        assert_eq!(page(None).in_all(), None);
        assert_eq!(page(Some(14)).in_all().as_deref(), Some("14"));
        assert_eq!(page(Some(COUNTED)).in_all().as_deref(), Some("100,000"));
        assert_eq!(
            page(Some(COUNTED + 1)).in_all().as_deref(),
            Some("more than 100,000")
        );
    }
}
