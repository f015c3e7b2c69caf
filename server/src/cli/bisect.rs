//! `quiescent bisect-step`: one step of `git bisect run`, decided by as many benchmark runs as
//! it takes; `quiescent bisect-log`: the steps stored in the database.
//!
//! Exit status is the protocol of `git bisect run`: 0 good, 1 bad, 125 skip (the benchmark
//! failed, or the runs could not decide), 255 stop (the references cannot be told apart, or
//! the step itself is misconfigured). Every error of the step ends in 255, never in 1: a
//! broken command line must not be taken for a bad commit.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use compare::bisect::{BisectPolicy, Look, StepVerdict, check_references, decide};

use super::bisect_db;
use super::error_chain;
use crate::format::{count, human, sig};

/// Exit status that makes `git bisect run` skip the commit.
const SKIP: u8 = 125;
/// Exit status that makes `git bisect run` stop.
const STOP: u8 = 255;

#[derive(Debug, clap::Args)]
pub struct BisectStepArgs {
    /// The good reference: a file of benchmark outputs (any supported format, several runs
    /// concatenated) or a build label or commit id in the database.
    #[arg(long)]
    pub good: String,
    /// The bad reference, like --good.
    #[arg(long)]
    pub bad: String,
    /// Bisect this metric (a glob: `time`, `*.hit`); by default the series in which good and
    /// bad differ most significantly.
    #[arg(long)]
    pub metric: Option<String>,
    /// Runs of CMD before the first decision; each undecided look adds as many again.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// At most this many runs of CMD; still undecided then, the commit is skipped (125).
    #[arg(long, default_value_t = 30)]
    pub max_runs: usize,
    /// Bound on the chance that one step calls the commit the wrong side; good and bad must
    /// differ at this level.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Force the format of CMD's output and of reference files.
    #[arg(long)]
    pub format: Option<String>,
    /// Database: build references are looked up there, and each step is stored there (its
    /// runs as build `bisect-<commit>`, and a record for `quiescent bisect-log`).
    #[arg(long, env = "QUIESCENT_DB")]
    pub db: Option<PathBuf>,
    /// Machine name the runs are stored under, and the machine whose runs a build reference
    /// takes (default: the host name when storing, any machine when reading).
    #[arg(long)]
    pub machine: Option<String>,
    /// Benchmark name the runs are stored under (default: the reference's, or CMD's name).
    #[arg(long)]
    pub benchmark: Option<String>,
    /// The benchmark command, run at the current checkout; prints a supported format.
    #[arg(last = true, required = true, num_args = 1.., value_name = "CMD")]
    pub cmd: Vec<String>,
}

#[derive(Debug, clap::Args)]
pub struct BisectLogArgs {
    /// Only steps at commits starting with this.
    #[arg(long)]
    pub commit: Option<String>,
    #[command(flatten)]
    pub db: crate::config::DbArgs,
}

/// A series' identity across files and builds (the benchmark name aside: a command's output
/// does not carry one).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SeriesName {
    pub metric: String,
    pub scope: String,
    pub label: Option<String>,
    pub params: BTreeMap<String, String>,
}

impl std::fmt::Display for SeriesName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.metric)?;
        if self.scope != "all" {
            write!(f, " [{}]", self.scope)?;
        }
        for (k, v) in &self.params {
            write!(f, " {k}={v}")?;
        }
        if let Some(l) = &self.label {
            write!(f, " ({l})")?;
        }
        Ok(())
    }
}

/// The samples of one series of a reference.
#[derive(Debug, Clone)]
pub struct RefSeries {
    pub name: SeriesName,
    pub benchmark: Option<String>,
    pub unit: String,
    pub samples: Vec<f64>,
}

/// A parsed output's sample series, summaries (someone's medians) left out.
fn series_of(ds: ingest::Dataset) -> Vec<RefSeries> {
    let mut out: BTreeMap<SeriesName, RefSeries> = BTreeMap::new();
    for s in ds.series {
        if s.spec.key.statistic.is_some() {
            continue;
        }
        let name = SeriesName {
            metric: s.spec.key.metric,
            scope: s.spec.key.scope,
            label: s.spec.key.label,
            params: s.spec.key.params,
        };
        out.entry(name.clone())
            .or_insert_with(|| RefSeries {
                name,
                benchmark: None,
                unit: s.spec.unit.as_str().to_string(),
                samples: Vec::new(),
            })
            .samples
            .extend(s.samples);
    }
    out.into_values().collect()
}

/// What a step concluded, for the exit status and the record.
struct Outcome {
    verdict: StepVerdict,
    /// Why the step skips without a decision (CMD failed, unparsable output).
    failure: Option<String>,
    look: Option<Look>,
    runs: usize,
    outputs: Vec<Vec<u8>>,
}

pub async fn run_step(args: BisectStepArgs) -> anyhow::Result<ExitCode> {
    Ok(match step(args).await {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!(
                "bisect-step: error: {}; stopping the bisection",
                error_chain(&e)
            );
            ExitCode::from(STOP)
        }
    })
}

async fn step(args: BisectStepArgs) -> anyhow::Result<u8> {
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        anyhow::bail!("--alpha must be between 0 and 1, got {}", args.alpha);
    }
    if args.runs < compare::bisect::MIN_N || args.max_runs < args.runs {
        anyhow::bail!(
            "--runs must be at least {} and --max-runs at least --runs (got {} and {})",
            compare::bisect::MIN_N,
            args.runs,
            args.max_runs
        );
    }
    let policy = BisectPolicy {
        alpha: args.alpha,
        runs: args.runs,
        batch: args.runs,
        max_runs: args.max_runs,
        ..BisectPolicy::default()
    };
    let db = match &args.db {
        Some(p) => Some(bisect_db::open(p).await?),
        None => None,
    };
    let good = load_ref(&args, &args.good, db.as_ref()).await?;
    let bad = load_ref(&args, &args.bad, db.as_ref()).await?;
    let (good, bad, candidates) = choose_series(&args, good, bad)?;
    let name = &good.name;
    let unit = good.unit.clone();

    // Picking the most significant of k series is k tests: Bonferroni keeps the refusal honest.
    let ref_alpha = args.alpha / candidates as f64;
    let check = check_references(&good.samples, &bad.samples, ref_alpha);
    let med = |m: Option<f64>| m.map_or("-".to_string(), |v| human(v, &unit));
    eprintln!(
        "bisect-step: {name}: good median {} ({} values), bad median {} ({} values), {}, p = {} ({})",
        med(check.good_median),
        check.good_n,
        med(check.bad_median),
        check.bad_n,
        check.change_pct.map_or("-".into(), |c| format!("{c:+.2}%")),
        pvalue(check.test.p),
        check.test.test,
    );
    if !check.significant {
        eprintln!(
            "bisect-step: good ({}) and bad ({}) are not significantly different on {name} \
             (p = {} is not below {}): a bisection could only follow noise. \
             Measure more reference runs or choose another --metric. Stopping the bisection.",
            args.good,
            args.bad,
            pvalue(check.test.p),
            match candidates {
                1 => format!("alpha {}", args.alpha),
                k => format!("alpha {} / {k} series", args.alpha),
            }
        );
        return Ok(STOP);
    }

    let outcome = measure(&args, &policy, &good, &bad);
    let code = match (outcome.verdict, &outcome.failure) {
        (_, Some(why)) => {
            eprintln!("bisect-step: skip: {why}");
            SKIP
        }
        (StepVerdict::Good, None) => {
            eprintln!("bisect-step: good after {}", count(outcome.runs, "run"));
            0
        }
        (StepVerdict::Bad, None) => {
            eprintln!("bisect-step: bad after {}", count(outcome.runs, "run"));
            1
        }
        (StepVerdict::Undecided, None) => {
            eprintln!(
                "bisect-step: skip: still undecided after {} (--max-runs)",
                count(outcome.runs, "run")
            );
            SKIP
        }
    };
    if let Some(db) = &db {
        // The verdict stands whatever happens to the record: losing it must not change the
        // bisection.
        let commit = match git_head() {
            Ok(c) => c,
            Err(e) => {
                eprintln!(
                    "bisect-step: warning: the step is not stored: {}",
                    error_chain(&e)
                );
                return Ok(code);
            }
        };
        let record = bisect_db::StepRecord {
            commit,
            machine: args.machine.clone().unwrap_or_else(hostname),
            benchmark: args
                .benchmark
                .clone()
                .or_else(|| good.benchmark.clone())
                .unwrap_or_else(|| command_name(&args.cmd)),
            series: name.to_string(),
            good_ref: args.good.clone(),
            bad_ref: args.bad.clone(),
            format: args.format.clone(),
            outputs: outcome.outputs,
            runs: outcome.runs,
            good_median: check.good_median,
            bad_median: check.bad_median,
            look: outcome.look,
            verdict: match code {
                0 => "good",
                1 => "bad",
                _ => "skip",
            },
        };
        match bisect_db::record_step(db, &record).await {
            Ok(id) => eprintln!(
                "bisect-step: stored as step {id} (build {})",
                record.label()
            ),
            Err(e) => eprintln!(
                "bisect-step: warning: the step could not be stored: {}",
                error_chain(&e)
            ),
        }
    }
    Ok(code)
}

/// Reads a reference: a file, else a build in the database.
async fn load_ref(
    args: &BisectStepArgs,
    name: &str,
    db: Option<&store::Store>,
) -> anyhow::Result<Vec<RefSeries>> {
    let path = Path::new(name);
    if path.is_file() {
        let parsed = ingest::parse_file(path, args.format.as_deref())?;
        return Ok(series_of(parsed.dataset));
    }
    let owned;
    let db = match db {
        Some(d) => d,
        None => {
            let default = Path::new("quiescent.db");
            if !default.is_file() {
                anyhow::bail!(
                    "{name:?} is not a file, and there is no database (--db) to look a build up in"
                );
            }
            owned = bisect_db::open(default).await?;
            &owned
        }
    };
    bisect_db::reference(db, name, args.machine.as_deref(), args.metric.as_deref())
        .await
        .with_context(|| format!("reference {name:?}"))
}

/// The series to bisect: those in both references matching --metric, the one where good and
/// bad differ most significantly (the largest change on a tie).
fn choose_series(
    args: &BisectStepArgs,
    good: Vec<RefSeries>,
    bad: Vec<RefSeries>,
) -> anyhow::Result<(RefSeries, RefSeries, usize)> {
    let mut bad: BTreeMap<SeriesName, RefSeries> =
        bad.into_iter().map(|s| (s.name.clone(), s)).collect();
    let matches = |s: &RefSeries| {
        args.metric
            .as_deref()
            .is_none_or(|g| crate::report::glob_match(g, &s.name.metric))
    };
    let pairs: Vec<(RefSeries, RefSeries)> = good
        .into_iter()
        .filter(matches)
        .filter_map(|g| bad.remove(&g.name).map(|b| (g, b)))
        .collect();
    if pairs.is_empty() {
        anyhow::bail!(
            "no series{} is in both references ({} and {})",
            args.metric
                .as_deref()
                .map_or(String::new(), |m| format!(" matching --metric {m:?}")),
            args.good,
            args.bad
        );
    }
    let count = pairs.len();
    let score = |(g, b): &(RefSeries, RefSeries)| {
        let c = check_references(&g.samples, &b.samples, args.alpha);
        (c.test.p, -c.change_pct.unwrap_or(0.0).abs())
    };
    let mut scored: Vec<((f64, f64), (RefSeries, RefSeries))> =
        pairs.into_iter().map(|p| (score(&p), p)).collect();
    scored.sort_by(|a, b| a.0.0.total_cmp(&b.0.0).then(a.0.1.total_cmp(&b.0.1)));
    let ((p, _), chosen) = scored.swap_remove(0);
    if count > 1 {
        eprintln!(
            "bisect-step: bisecting {} (of {count} series in both references, the one where good and bad differ most: p = {})",
            chosen.0.name,
            pvalue(p)
        );
    }
    Ok((chosen.0, chosen.1, count))
}

/// Runs CMD until the samples decide, CMD fails, or --max-runs is reached.
fn measure(
    args: &BisectStepArgs,
    policy: &BisectPolicy,
    good: &RefSeries,
    bad: &RefSeries,
) -> Outcome {
    let mut out = Outcome {
        verdict: StepVerdict::Undecided,
        failure: None,
        look: None,
        runs: 0,
        outputs: Vec::new(),
    };
    let mut samples = Vec::new();
    loop {
        let more = policy.more_runs(out.runs);
        if more == 0 {
            return out;
        }
        for _ in 0..more {
            match run_once(args, &good.name) {
                Ok((values, stdout)) => {
                    samples.extend(values);
                    out.outputs.push(stdout);
                    out.runs += 1;
                }
                Err(why) => {
                    out.failure = Some(why);
                    return out;
                }
            }
        }
        let look = decide(&good.samples, &bad.samples, &samples, policy);
        eprintln!(
            "bisect-step: {}: median {}, {} of the way from good to bad; p vs good {}, p vs bad {} (different below {}, same from {}): {}",
            count(out.runs, "run"),
            look.median.map_or("-".into(), |m| human(m, &good.unit)),
            look.position
                .map_or("-".into(), |t| format!("{:.0}%", t * 100.0)),
            pvalue(look.vs_good.p),
            pvalue(look.vs_bad.p),
            pvalue(look.level),
            pvalue(look.same_level),
            match look.verdict {
                StepVerdict::Undecided if policy.more_runs(out.runs) > 0 => "undecided, more runs",
                v => v.as_str(),
            }
        );
        out.verdict = look.verdict;
        out.look = Some(look);
        if out.verdict != StepVerdict::Undecided {
            return out;
        }
    }
}

/// One run of CMD: the chosen series' samples and the raw output, or why it failed.
fn run_once(args: &BisectStepArgs, name: &SeriesName) -> Result<(Vec<f64>, Vec<u8>), String> {
    let cmd = args.cmd.join(" ");
    let output = std::process::Command::new(&args.cmd[0])
        .args(&args.cmd[1..])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("cannot run {cmd:?}: {e}"))?;
    if !output.status.success() {
        return Err(format!("{cmd:?} failed ({})", output.status));
    }
    let (_, ds) = ingest::parse_bytes(
        Path::new("CMD output"),
        &output.stdout,
        args.format.as_deref(),
    )
    .map_err(|e| format!("the output of {cmd:?}: {e}"))?;
    let series = series_of(ds);
    match series.into_iter().find(|s| &s.name == name) {
        Some(s) if !s.samples.is_empty() => Ok((s.samples, output.stdout)),
        _ => Err(format!("the output of {cmd:?} has no values of {name}")),
    }
}

fn pvalue(p: f64) -> String {
    if p < 1e-4 {
        format!("{p:.1e}")
    } else {
        format!("{p:.4}")
    }
}

/// The full commit id of the checkout.
fn git_head() -> anyhow::Result<String> {
    let out = std::process::Command::new("git")
        .args(["rev-parse", "HEAD"])
        .output()
        .context("running git rev-parse HEAD")?;
    if !out.status.success() {
        anyhow::bail!(
            "git rev-parse HEAD failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "localhost".to_string())
}

/// `./bench.sh --x` -> `bench.sh`.
fn command_name(cmd: &[String]) -> String {
    Path::new(&cmd[0])
        .file_name()
        .map_or_else(|| cmd[0].clone(), |n| n.to_string_lossy().into_owned())
}

pub async fn run_log(args: BisectLogArgs) -> anyhow::Result<ExitCode> {
    if !args.db.exists() {
        anyhow::bail!("no database at {}", args.db.shown());
    }
    if let Some(c) = &args.commit
        && !c.bytes().all(|b| b.is_ascii_hexdigit())
    {
        anyhow::bail!("--commit takes hex digits of a commit id, got {c:?}");
    }
    let db = bisect_db::open(&args.db.db).await?;
    let steps = db.bisect_steps(args.commit.as_deref()).await?;
    if steps.is_empty() {
        println!("no bisection steps stored");
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = comfy_table::Table::new();
    table.load_style(comfy_table::presets::NOTHING);
    table.set_header([
        "step",
        "commit",
        "series",
        "runs",
        "median",
        "good",
        "bad",
        "p vs good",
        "p vs bad",
        "verdict",
    ]);
    let opt = |v: Option<f64>| v.map_or("-".to_string(), sig);
    for s in &steps {
        table.add_row([
            s.id.to_string(),
            s.commit.chars().take(12).collect(),
            s.series.clone(),
            s.runs.to_string(),
            opt(s.median),
            opt(s.good_median),
            opt(s.bad_median),
            s.p_good.map_or("-".into(), pvalue),
            s.p_bad.map_or("-".into(), pvalue),
            s.verdict.clone(),
        ]);
    }
    println!("{}", table.trim_fmt());
    Ok(ExitCode::SUCCESS)
}
