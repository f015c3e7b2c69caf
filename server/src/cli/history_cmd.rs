//! `quiescent history` (one benchmark's series over its branch's builds, with the change points
//! stored as alerts) and `quiescent commits import` (a branch's order from git).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use store::{AlertFilter, KeyFilter};

use crate::config::DbArgs;
use crate::format::count;
use crate::history::{self, aggregate};

#[derive(Debug, clap::Args)]
pub struct HistoryArgs {
    /// The benchmark, as stored (`quiescent runs` lists them).
    #[arg(long)]
    pub benchmark: String,
    /// The metric (`real`, `time`, `hit`...).
    #[arg(long)]
    pub metric: String,
    /// Only this machine's history (without it, one history per machine).
    #[arg(long)]
    pub machine: Option<String>,
    /// Only the history with these parameters, as stored (`k=v&k2=v2`; without it, one per set).
    #[arg(long)]
    pub params: Option<String>,
    /// The branch whose builds make the history.
    #[arg(long, default_value = "main")]
    pub branch: String,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub db: DbArgs,
}

#[derive(Debug, clap::Args)]
pub struct CommitsArgs {
    #[command(subcommand)]
    pub action: CommitsAction,
}

#[derive(Debug, clap::Subcommand)]
pub enum CommitsAction {
    /// Order a branch's builds by `git log --first-parent` of a git tree.
    Import {
        /// The git tree (a kernel checkout).
        #[arg(long)]
        repo: PathBuf,
        /// The branch of the history.
        #[arg(long, default_value = "main")]
        branch: String,
        /// The git revision whose first-parent chain is the branch.
        #[arg(long, default_value = "HEAD")]
        rev: String,
        #[command(flatten)]
        db: DbArgs,
    },
}

/// One series of the history, as printed.
#[derive(Debug, serde::Serialize)]
struct SeriesOut {
    machine: String,
    params: String,
    unit: String,
    builds: Vec<BuildOut>,
    change_points: Vec<store::Alert>,
}

#[derive(Debug, serde::Serialize)]
struct BuildOut {
    position: i64,
    build: String,
    runs: usize,
    #[serde(flatten)]
    summary: aggregate::BuildSummary,
}

pub async fn run_history(args: HistoryArgs) -> anyhow::Result<ExitCode> {
    let store = super::open_store(&args.db).await?;
    let keys = store
        .history_keys(&KeyFilter {
            branch: Some(args.branch.clone()),
            benchmark: Some(args.benchmark.clone()),
            metric: Some(args.metric.clone()),
            machine: args.machine.clone(),
            params_key: args.params.clone(),
        })
        .await?;
    if keys.is_empty() {
        anyhow::bail!(
            "no history of benchmark {:?} metric {:?} on branch {:?}{}",
            args.benchmark,
            args.metric,
            args.branch,
            args.machine
                .as_ref()
                .map(|m| format!(" machine {m:?}"))
                .unwrap_or_default()
        );
    }
    let alerts = store
        .alerts(&AlertFilter {
            benchmark: Some(args.benchmark.clone()),
            branch: Some(args.branch.clone()),
            ..AlertFilter::default()
        })
        .await?;
    let mut out = Vec::new();
    for key in &keys {
        let loaded = history::load(&store, key).await?;
        let (pos, vals) = loaded.flat();
        let summaries = aggregate::per_build_blocking(pos, vals).await?;
        let builds = summaries
            .into_iter()
            .map(|s| BuildOut {
                position: s.position,
                build: loaded
                    .points()
                    .iter()
                    .find(|p| p.position == s.position)
                    .map(|p| p.label.clone())
                    .unwrap_or_default(),
                runs: loaded
                    .points()
                    .iter()
                    .filter(|p| p.position == s.position)
                    .count(),
                summary: s,
            })
            .collect();
        out.push(SeriesOut {
            machine: key.machine.clone(),
            params: key.params_key.clone(),
            unit: loaded.unit().to_string(),
            builds,
            change_points: alerts
                .iter()
                .filter(|a| {
                    a.metric == key.metric
                        && a.machine == key.machine
                        && a.params_key == key.params_key
                })
                .cloned()
                .collect(),
        });
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    for s in &out {
        println!(
            "{} {} on {}{} ({})",
            args.benchmark,
            args.metric,
            s.machine,
            if s.params.is_empty() {
                String::new()
            } else {
                format!(" [{}]", s.params)
            },
            args.branch
        );
        let mut table = comfy_table::Table::new();
        table.load_style(comfy_table::presets::NOTHING);
        table.set_header(["pos", "build", "runs", "n", "median", "q1", "q3", ""]);
        for b in &s.builds {
            let mark = s
                .change_points
                .iter()
                .find(|a| a.build_after == b.build)
                .map(|a| format!("<- change {:+.1}% (alert {})", a.change_pct, a.id))
                .unwrap_or_default();
            table.add_row([
                b.position.to_string(),
                b.build.clone(),
                b.runs.to_string(),
                b.summary.n.to_string(),
                crate::format::human(b.summary.median, &s.unit),
                crate::format::human(b.summary.q1, &s.unit),
                crate::format::human(b.summary.q3, &s.unit),
                mark,
            ]);
        }
        println!("{}", table.trim_fmt());
        println!("change points: {}\n", s.change_points.len());
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn run_commits(args: CommitsArgs) -> anyhow::Result<ExitCode> {
    let CommitsAction::Import {
        repo,
        branch,
        rev,
        db,
    } = args.action;
    let output = std::process::Command::new("git")
        .arg("-C")
        .arg(&repo)
        .args([
            "log",
            "--first-parent",
            "--reverse",
            "--format=%H",
            &rev,
            "--",
        ])
        .output()
        .with_context(|| format!("running git log in {}", repo.display()))?;
    if !output.status.success() {
        anyhow::bail!(
            "git log --first-parent {rev} in {} failed: {}",
            repo.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let commits: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(str::to_string)
        .collect();
    let store = super::open_store(&db).await?;
    let known = store.import_commit_order(&branch, &commits).await?;
    let keys = store
        .history_keys(&KeyFilter {
            branch: Some(branch.clone()),
            ..KeyFilter::default()
        })
        .await?;
    let groups = history::detect_keys(&store, &keys).await?;
    println!(
        "{} read; {} of branch {branch} are in git order; {} series re-analysed, {} with new alerts",
        count(commits.len(), "commit"),
        count(known, "build"),
        keys.len(),
        count(groups.len(), "alert group")
    );
    Ok(ExitCode::SUCCESS)
}
