//! `quiescent ingest`: store files as one run, in one transaction.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::Context;
use store::{BuildMeta, InputFile, RunMeta};

use crate::config::DbArgs;
use crate::format::count;

#[derive(Debug, clap::Args)]
pub struct IngestArgs {
    /// Files or directories (a directory of trace_stat/function* files is one run).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub run: RunFlags,
    /// Largest file (or standard input, `-`) read, in MiB.
    #[arg(long, default_value_t = 16384)]
    pub max_file_mib: u64,
    #[command(flatten)]
    pub db: DbArgs,
}

/// Standard input, at most `cap` bytes.
fn read_stdin(cap: u64) -> anyhow::Result<Vec<u8>> {
    use std::io::Read;
    let mut buf = Vec::new();
    std::io::stdin()
        .lock()
        .take(cap + 1)
        .read_to_end(&mut buf)
        .context("reading standard input")?;
    if buf.len() as u64 > cap {
        anyhow::bail!("standard input: more than --max-file-mib allows ({cap} bytes)");
    }
    Ok(buf)
}

/// What a run is: shared by `ingest` and `upload`.
#[derive(Debug, Clone, clap::Args)]
pub struct RunFlags {
    /// Label of the kernel build under test (e.g. v5.1, c229828ca6bc-reverted).
    #[arg(long)]
    pub build: String,
    /// Git commit id of the build.
    #[arg(long)]
    pub commit: Option<String>,
    /// `uname -r` of the build.
    #[arg(long)]
    pub kernel_version: Option<String>,
    /// Kernel .config (or the CONFIG_* lines that matter) of the build.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Boot command line of the build.
    #[arg(long)]
    pub cmdline: Option<String>,
    /// Name of the machine (rig) the run executed on.
    #[arg(long)]
    pub machine: String,
    /// A fact about the machine, KEY=VALUE (repeatable): cpu_model=..., cpus=4.
    #[arg(long = "machine-fact", value_parser = super::parse_kv)]
    pub machine_facts: Vec<(String, String)>,
    /// Benchmark name (e.g. ftrace-tracer-switch).
    #[arg(long)]
    pub benchmark: String,
    /// A scenario parameter, KEY=VALUE (repeatable): load=idle, preempt_off_ms=20.
    #[arg(long = "param", value_parser = super::parse_kv)]
    pub params: Vec<(String, String)>,
    /// Import only the block with this label from files that hold several labelled blocks
    /// (e.g. `original` / `apply patch`; `quiescent parse` shows the labels); `--block ''`
    /// takes the results before the first label.
    #[arg(long)]
    pub block: Option<String>,
    /// Force a format instead of sniffing each file.
    #[arg(long)]
    pub format: Option<String>,
    /// Branch whose history the build belongs to.
    #[arg(long, default_value = "main")]
    pub branch: String,
    /// Commit (or build label) the build follows on its branch.
    #[arg(long)]
    pub parent: Option<String>,
    /// Commit time of the build, unix seconds: orders it among builds that have one.
    #[arg(long)]
    pub commit_time: Option<i64>,
}

impl RunFlags {
    /// Where the build goes in its branch's history.
    pub fn placement(&self) -> store::Placement {
        store::Placement {
            branch: self.branch.clone(),
            parent: self.parent.clone(),
            commit_time: self.commit_time,
        }
    }

    /// The run metadata these flags describe.
    pub fn run_meta(&self) -> anyhow::Result<RunMeta> {
        let config = match &self.config {
            Some(p) => Some(
                std::fs::read_to_string(p)
                    .with_context(|| format!("reading kernel config {}", p.display()))?,
            ),
            None => None,
        };
        Ok(RunMeta {
            build: BuildMeta {
                label: self.build.clone(),
                commit: self.commit.clone(),
                kernel_version: self.kernel_version.clone(),
                config,
                cmdline: self.cmdline.clone(),
            },
            machine: self.machine.clone(),
            machine_facts: self
                .machine_facts
                .iter()
                .cloned()
                .collect::<BTreeMap<_, _>>(),
            benchmark: self.benchmark.clone(),
            params: self.params.iter().cloned().collect::<BTreeMap<_, _>>(),
            token_id: None,
            block: self.block.clone(),
        })
    }
}

pub async fn run(args: IngestArgs) -> anyhow::Result<ExitCode> {
    let meta = args.run.run_meta()?;
    let paths = ingest::expand_paths(&args.files)?;
    let cap = args.max_file_mib.saturating_mul(1 << 20);
    let mut total = 0u64;
    let mut files: Vec<InputFile> = Vec::with_capacity(paths.len());
    for p in &paths {
        if p.as_os_str() == "-" {
            let bytes = read_stdin(cap)?;
            total += bytes.len() as u64;
            files.push(InputFile {
                name: "stdin".into(),
                source: store::Source::Bytes(Arc::from(bytes)),
                format: args.run.format.clone(),
            });
            continue;
        }
        let len = std::fs::metadata(p)
            .with_context(|| format!("reading {}", p.display()))?
            .len();
        if len > cap {
            anyhow::bail!(
                "{}: {len} bytes, more than --max-file-mib {} allows",
                p.display(),
                args.max_file_mib
            );
        }
        total += len;
        files.push(InputFile::path(p, args.run.format.clone()));
    }
    let store = super::open_store(&args.db).await?;

    // Progress: bytes parsed, shown for directories and large files on a terminal.
    let counter = Arc::new(AtomicU64::new(0));
    let show = paths.len() > 1 || total > 8 << 20;
    let bar = if show {
        let bar = indicatif::ProgressBar::new(total);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} parsing [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        Some(bar)
    } else {
        None
    };
    let ticker = bar.clone().map(|bar| {
        let counter = counter.clone();
        tokio::spawn(async move {
            loop {
                bar.set_position(counter.load(Ordering::Relaxed));
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
    });
    let result = store.import_run(&meta, &files, Some(counter.clone())).await;
    if let Some(t) = ticker {
        t.abort();
    }
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    let outcome = result?;
    let ids = outcome
        .run_ids
        .iter()
        .map(|i| i.to_string())
        .collect::<Vec<_>>()
        .join(", ");
    if !outcome.created {
        println!(
            "already stored: the same content with the same metadata is run {ids} ({} series, {}); nothing stored",
            outcome.series,
            count(outcome.samples, "sample")
        );
        return Ok(ExitCode::SUCCESS);
    }
    for (name, format) in &outcome.formats {
        println!("{name}: {format}");
    }
    for (name, w) in &outcome.warnings {
        println!("warning: {name}: line {}: {}", w.line, w.message);
    }
    if outcome.warning_count > outcome.warnings.len() as u64 {
        println!(
            "({} more warnings not shown)",
            outcome.warning_count - outcome.warnings.len() as u64
        );
    }
    println!(
        "stored run {ids}: {} series, {}, {}",
        outcome.series,
        count(outcome.samples, "sample"),
        count(outcome.warning_count, "warning")
    );
    let groups = crate::history::after_stored(&store, &outcome, &args.run.placement()).await?;
    for g in groups {
        if let Some(g) = crate::history::notify::group(&store, g).await? {
            println!(
                "alerts at build {} ({}): {}",
                g.build,
                g.branch,
                g.alerts.len()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
