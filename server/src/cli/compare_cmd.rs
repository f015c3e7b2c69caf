//! `quiescent compare A B`: two builds from the database, or two files; `quiescent compare
//! MAIL`: the before/after blocks of one email, with the author's claims checked.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use compare::{Direction, Settings, Verdict};

use crate::config::DbArgs;
use crate::export;
use crate::report::{self, Report, Selection, series_of_runs};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// Exit with status 3 when any series regressed.
    Regression,
}

#[derive(Debug, clap::Args)]
pub struct CompareArgs {
    /// Base: a build label or commit id in the database, or a file.
    pub base: String,
    /// Head: a build label or commit id in the database, or a file. Without it, BASE is one
    /// email whose labelled blocks are compared with each other.
    pub head: Option<String>,
    /// With one file: the block to take as the base (a part of its label).
    #[arg(long, value_name = "TEXT")]
    pub base_block: Option<String>,
    /// With one file: the block to take as the head (a part of its label).
    #[arg(long, value_name = "TEXT")]
    pub head_block: Option<String>,
    /// Print the comparison as JSON.
    #[arg(long, group = "out")]
    pub json: bool,
    /// Print one CSV line per series.
    #[arg(long, group = "out")]
    pub csv: bool,
    /// Print a Markdown table.
    #[arg(long, group = "out")]
    pub markdown: bool,
    /// Print plain text within 72 columns, ready for an LKML reply.
    #[arg(long, group = "out")]
    pub email: bool,
    /// What "better" means; overrides the direction the parsers gave each series, before the
    /// verdicts are decided (files and builds alike).
    #[arg(long, value_name = "lower|higher|neutral", value_parser = parse_direction)]
    pub direction: Option<Direction>,
    /// Significance level (of q when several series are compared).
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Practical threshold in percent of the base median.
    #[arg(long, default_value_t = 1.0)]
    pub threshold: f64,
    /// Only this benchmark.
    #[arg(long)]
    pub benchmark: Option<String>,
    /// Only runs on this machine.
    #[arg(long)]
    pub machine: Option<String>,
    /// Only metrics matching this glob (`*.hit`, `real`).
    #[arg(long)]
    pub metric: Option<String>,
    /// Show a row for every CPU of single-run per-CPU series (trace_stat) instead of folding
    /// them into the pooled per-CPU row.
    #[arg(long)]
    pub per_cpu: bool,
    /// Force the format of file inputs.
    #[arg(long)]
    pub format: Option<String>,
    /// Exit with status 3 when any series regressed, so a rig can gate on it.
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOn>,
    #[command(flatten)]
    pub db: DbArgs,
}

/// `--direction`: the data model's own spellings (`lower`, `higher_is_better`, `neutral`...).
fn parse_direction(s: &str) -> Result<Direction, String> {
    Direction::parse(s).ok_or_else(|| format!("expected lower, higher or neutral, found {s:?}"))
}

impl CompareArgs {
    pub fn settings(&self) -> anyhow::Result<Settings> {
        if !(self.alpha > 0.0 && self.alpha < 1.0) {
            anyhow::bail!("--alpha must be between 0 and 1, got {}", self.alpha);
        }
        if !(self.threshold >= 0.0 && self.threshold.is_finite()) {
            anyhow::bail!(
                "--threshold must be a percentage >= 0, got {}",
                self.threshold
            );
        }
        Ok(Settings {
            alpha: self.alpha,
            threshold_pct: self.threshold,
            ..Settings::default()
        })
    }
}

pub async fn run(args: CompareArgs) -> anyhow::Result<ExitCode> {
    let settings = args.settings()?;
    let direction = args.direction;
    let Some(head) = args.head.clone() else {
        return run_mail(&args, settings);
    };
    if args.base_block.is_some() || args.head_block.is_some() {
        anyhow::bail!("--base-block and --head-block choose blocks of one mail: give one file");
    }
    let (a, b) = (Path::new(&args.base), Path::new(&head));
    let report = if a.is_file() || b.is_file() {
        if !(a.is_file() && b.is_file()) {
            anyhow::bail!(
                "compare either two files or two builds; {} is a file but {} is not",
                if a.is_file() { &args.base } else { &head },
                if a.is_file() { &head } else { &args.base }
            );
        }
        // The two files parse at once: with a million values a side, parsing is a third of
        // the work.
        let (format, metric) = (args.format.as_deref(), args.metric.as_deref());
        let (da, db) = std::thread::scope(|s| {
            let head = s.spawn(|| parse_filtered(b, format, metric));
            let da = parse_filtered(a, format, metric);
            (da, head.join())
        });
        let da = da?;
        let db = db.map_err(|_| anyhow::anyhow!("parsing {} panicked", b.display()))??;
        let sides = [
            (&args.base, da.metric_names(4)),
            (&head, db.metric_names(4)),
        ];
        let report = report::compare_parsed(
            (&args.base, da),
            (&head, db),
            direction,
            &settings,
            !args.per_cpu,
        );
        if report.comparisons.is_empty() {
            note_nothing_shared(true, &sides);
        }
        report
    } else {
        if !args.db.exists() {
            anyhow::bail!(
                "{:?} and {:?} are not files, and there is no database at {} to look builds up in",
                args.base,
                head,
                args.db.shown()
            );
        }
        let store = args.db.open_existing_store().await?;
        let sel = Selection {
            base: args.base.clone(),
            head: head.clone(),
            benchmark: args.benchmark.clone(),
            machine: args.machine.clone(),
            metric: args.metric.clone(),
        };
        let report = report::build(&store, &sel, &settings, direction, !args.per_cpu)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        if report.comparisons.is_empty() && !report.base.run_ids.is_empty() {
            let sides = [
                (
                    &args.base,
                    series_of_runs(&store, &report.base.run_ids, 4).await?,
                ),
                (
                    &head,
                    series_of_runs(&store, &report.head.run_ids, 4).await?,
                ),
            ];
            note_nothing_shared(false, &sides);
        }
        report
    };
    print(&args, &report).context("writing the report")?;
    Ok(exit_code(&args, &report))
}

/// Says that the two files (or builds) share no series, and what each side holds: (name,
/// (how many kinds of series, the first few in words)).
fn note_nothing_shared(files: bool, sides: &[(&String, (usize, Vec<String>)); 2]) {
    eprintln!(
        "note: the two {} share no series (series match by {}metric, parameters, statistic \
         and block label)",
        if files { "files" } else { "builds" },
        if files { "" } else { "benchmark, " }
    );
    for (name, (n, shown)) in sides {
        eprintln!("  {name} holds:");
        for s in shown {
            eprintln!("    {}", crate::export::clip(s, 96));
        }
        match n.saturating_sub(shown.len()) {
            0 if *n == 0 => eprintln!("    no series"),
            0 => {}
            more => eprintln!("    and {more} more"),
        }
    }
    if files {
        eprintln!(
            "  to compare blocks of two files, put them in one file and give --base-block and \
             --head-block"
        );
    }
}

fn exit_code(args: &CompareArgs, report: &Report) -> ExitCode {
    let regressed = report
        .comparisons
        .iter()
        .any(|r| r.cmp.verdict == Verdict::Regression);
    if args.fail_on == Some(FailOn::Regression) && regressed {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    }
}

/// `quiescent compare MAIL`: the blocks of one file paired and compared, claims checked.
fn run_mail(args: &CompareArgs, settings: Settings) -> anyhow::Result<ExitCode> {
    let path = Path::new(&args.base);
    if !path.is_file() {
        anyhow::bail!(
            "{:?} is not a file: compare one mail, two files, or two builds",
            args.base
        );
    }
    let meta = std::fs::metadata(path).with_context(|| format!("reading {}", args.base))?;
    if meta.len() > crate::mail::MAX_MAIL_BYTES as u64 {
        anyhow::bail!(
            "{}: {} bytes is not a mail (at most {} MiB)",
            args.base,
            meta.len(),
            crate::mail::MAX_MAIL_BYTES >> 20
        );
    }
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", args.base))?;
    let opts = crate::mail::Options {
        base_block: args.base_block.clone(),
        head_block: args.head_block.clone(),
        direction: args.direction,
        settings,
        format: args.format.clone(),
    };
    let mut mail = crate::mail::compare_mail(&args.base, &bytes, &opts)?;
    if let Some(glob) = &args.metric {
        mail.report
            .comparisons
            .retain(|r| report::glob_match(glob, &r.metric));
    }
    print_mail(args, &mail).context("writing the report")?;
    Ok(exit_code(args, &mail.report))
}

fn print_mail(args: &CompareArgs, mail: &crate::mail::MailReport) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.json {
        serde_json::to_writer_pretty(&mut out, mail)?;
        writeln!(out)?;
    } else if args.csv {
        write!(out, "{}", export::csv::text(&mail.report))?;
    } else if args.markdown {
        write!(out, "{}", export::markdown::text(&mail.report))?;
        write!(out, "{}", export::claims::markdown(mail))?;
    } else if args.email {
        write!(out, "{}", export::claims::email(mail))?;
    } else {
        write!(out, "{}", export::claims::pairs_text(mail))?;
        write!(
            out,
            "{}",
            export::terminal::text(&mail.report, terminal_width())
        )?;
        write!(out, "{}", export::claims::plain(mail))?;
    }
    out.flush()?;
    Ok(())
}

/// Parses a file keeping only the series whose metric matches `glob` (a 64-CPU trace_stat
/// profile holds millions of series; most comparisons want one metric of them).
fn parse_filtered(
    path: &Path,
    format: Option<&str>,
    glob: Option<&str>,
) -> anyhow::Result<report::Parsed> {
    let file = std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut sink = report::Parsed::new(glob);
    ingest::parse_reader(path, file, format, &mut sink)?;
    Ok(sink)
}

fn print(args: &CompareArgs, report: &Report) -> anyhow::Result<()> {
    use std::io::Write;
    // Buffered: stdout is line-buffered, and pretty JSON of a large profile has millions of lines.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.json {
        export::json::write(&mut out, report)?;
    } else if args.csv {
        write!(out, "{}", export::csv::text(report))?;
    } else if args.markdown {
        write!(out, "{}", export::markdown::text(report))?;
    } else if args.email {
        write!(out, "{}", export::email::text(report))?;
    } else {
        let width = terminal_width();
        write!(out, "{}", export::terminal::text(report, width))?;
    }
    out.flush()?;
    Ok(())
}

/// `$COLUMNS`, or 120.
fn terminal_width() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse::<usize>().ok())
        .unwrap_or(120)
}
