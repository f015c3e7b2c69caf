//! Import benchmark at seed 002's scale: a 64-CPU x 19,043-function trace_stat set (4.9 M
//! values) stored by `Store::import_run`, against sqlite3's own `.import` of the same values as
//! CSV (one line per value with its function, CPU and metric), both in child processes measured
//! by `/usr/bin/time -v` in the same run. Prints both times, peak RSS, and the ratios. With
//! `--ingest BIN`, also the whole `quiescent ingest` command (the import, then change-point
//! detection over the run's totals) in the same alternation.
//!
//! `cargo run --release -p quiescent-store --example bench_import [-- --scale 1.0 --dir DIR
//! --runs 3 --ingest target/release/quiescent]`
//! Targets: import time <= 2x sqlite3's, import peak RSS <= 512 MiB.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use store::{BuildMeta, InputFile, RunMeta, Store};

const CPUS: usize = 64;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("child-import") {
        return child_import(Path::new(&args[2]), Path::new(&args[3]));
    }
    let mut scale = 1.0f64;
    let mut dir = PathBuf::from("bench-out");
    let mut runs = 3usize;
    let mut ingest: Option<PathBuf> = None;
    let mut i = 1;
    while i < args.len() {
        match args[i].as_str() {
            "--scale" => scale = args.get(i + 1).ok_or("--scale needs a value")?.parse()?,
            "--dir" => dir = PathBuf::from(args.get(i + 1).ok_or("--dir needs a value")?),
            "--runs" => runs = args.get(i + 1).ok_or("--runs needs a value")?.parse()?,
            "--ingest" => {
                ingest = Some(PathBuf::from(
                    args.get(i + 1)
                        .ok_or("--ingest needs the quiescent binary")?,
                ))
            }
            other => return Err(format!("unknown argument {other}").into()),
        }
        i += 2;
    }
    let functions = ((19_043.0 * scale) as usize).max(100);
    let ts_dir = dir.join("trace_stat");
    let csv = dir.join("values.csv");
    println!(
        "generating {CPUS} CPUs x {functions} functions in {}",
        dir.display()
    );
    let values = generate(&ts_dir, &csv, functions)?;
    let text_mb = std::fs::read_dir(&ts_dir)?
        .map(|e| e.map(|e| e.metadata().map(|m| m.len()).unwrap_or(0)))
        .sum::<Result<u64, _>>()? as f64
        / 1e6;
    println!("{values} values, {text_mb:.0} MB of trace_stat text");

    let sdb = dir.join("sqlite3-import.db");
    let qdb = dir.join("quiescent-import.db");
    let import_arg = format!(".import --csv {} v", csv.display());
    // Alternating runs, medians: single runs on a shared machine vary by 15%.
    let (mut base_runs, mut our_runs, mut cli_runs) = (Vec::new(), Vec::new(), Vec::new());
    let (mut base_mb, mut our_mb) = (0.0, 0.0);
    let size = |p: &Path| p.metadata().map(|m| m.len() as f64 / 1e6).unwrap_or(0.0);
    for _ in 0..runs {
        remove_db(&sdb);
        base_runs.push(timed(Command::new("sqlite3").arg(&sdb).arg(&import_arg))?);
        base_mb = size(&sdb);
        remove_db(&sdb);
        remove_db(&qdb);
        our_runs.push(timed(
            Command::new(std::env::current_exe()?)
                .arg("child-import")
                .arg(&ts_dir)
                .arg(&qdb),
        )?);
        our_mb = size(&qdb);
        remove_db(&qdb);
        if let Some(bin) = &ingest {
            cli_runs.push(timed(
                Command::new(bin)
                    .args([
                        "ingest",
                        "--build",
                        "b",
                        "--machine",
                        "m",
                        "--benchmark",
                        "p",
                    ])
                    .arg("--db")
                    .arg(&qdb)
                    .arg(&ts_dir),
            )?);
            remove_db(&qdb);
        }
    }
    let (base, ours) = (median(&base_runs), median(&our_runs));
    println!("median of {runs} alternating runs:");
    println!(
        "sqlite3 .import:   {:>7.2} s ({:>6.2} s CPU), peak RSS {:>7.1} MiB, database {:>6.1} MB",
        base.secs,
        base.cpu,
        base.rss_kib as f64 / 1024.0,
        base_mb
    );
    println!(
        "Store::import_run: {:>7.2} s ({:>6.2} s CPU), peak RSS {:>7.1} MiB, database {:>6.1} MB",
        ours.secs,
        ours.cpu,
        ours.rss_kib as f64 / 1024.0,
        our_mb
    );
    println!(
        "ratio time import/sqlite3 = {:.2} (target <= 2), CPU {:.2}; peak RSS {:.0} MiB (target <= 512)",
        ours.secs / base.secs,
        ours.cpu / base.cpu,
        ours.rss_kib as f64 / 1024.0
    );
    if !cli_runs.is_empty() {
        // The whole command: the import, then change-point detection over the run's totals.
        let cli = median(&cli_runs);
        println!(
            "quiescent ingest:  {:>7.2} s ({:>6.2} s CPU), peak RSS {:>7.1} MiB; ratio to sqlite3 {:.2}",
            cli.secs,
            cli.cpu,
            cli.rss_kib as f64 / 1024.0,
            cli.secs / base.secs
        );
    }
    Ok(())
}

/// The median wall and CPU time of `runs`, and their highest peak RSS.
fn median(runs: &[Measured]) -> Measured {
    let mid = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    };
    Measured {
        secs: mid(runs.iter().map(|r| r.secs).collect()),
        cpu: mid(runs.iter().map(|r| r.cpu).collect()),
        rss_kib: runs.iter().map(|r| r.rss_kib).max().unwrap_or(0),
    }
}

/// Writes the per-CPU files and the CSV of the same values; returns the number of values.
fn generate(ts_dir: &Path, csv: &Path, functions: usize) -> std::io::Result<u64> {
    std::fs::create_dir_all(ts_dir)?;
    let mut c = BufWriter::new(std::fs::File::create(csv)?);
    writeln!(c, "function,cpu,metric,value")?;
    let mut n = 0u64;
    for cpu in 0..CPUS {
        let mut w = BufWriter::new(std::fs::File::create(
            ts_dir.join(format!("function{cpu}")),
        )?);
        writeln!(
            w,
            "  Function                               Hit    Time            Avg             s^2"
        )?;
        writeln!(
            w,
            "  --------                               ---    ----            ---             ---"
        )?;
        for f in 0..functions {
            let hit = 1000 + (f * 7919 + cpu * 31) % 90_000;
            let avg = 0.1 + ((f * 13 + cpu) % 1000) as f64 / 1000.0;
            let time = hit as f64 * avg;
            let name = format!("kernel_function_{f:06}");
            writeln!(
                w,
                "  {name:<30}  {hit:>10}    {time:.3} us    {avg:.3} us    {:.3} us    ",
                avg * 0.01
            )?;
            writeln!(c, "{name},{cpu},hit,{hit}")?;
            writeln!(c, "{name},{cpu},time,{time:.3}")?;
            writeln!(c, "{name},{cpu},avg,{avg:.3}")?;
            writeln!(c, "{name},{cpu},s2,{:.3}", avg * 0.01)?;
            n += 4;
        }
    }
    Ok(n)
}

struct Measured {
    secs: f64,
    /// User + system CPU seconds (the fairer figure on a shared, busy machine).
    cpu: f64,
    rss_kib: u64,
}

/// Runs `cmd` under `/usr/bin/time -v`; its wall time and peak RSS.
fn timed(cmd: &mut Command) -> Result<Measured, Box<dyn std::error::Error>> {
    let mut full = Command::new("/usr/bin/time");
    full.arg("-v").arg(cmd.get_program()).args(cmd.get_args());
    let out = full.output()?;
    let err = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(format!("{:?} failed: {err}", cmd.get_program()).into());
    }
    let field = |name: &str| {
        err.lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .map(str::trim)
            .ok_or_else(|| format!("no {name:?} in the output of /usr/bin/time"))
    };
    let wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss):")?;
    let secs = wall
        .split(':')
        .try_fold(0.0, |acc, p| p.parse::<f64>().map(|v| acc * 60.0 + v))?;
    let rss_kib = field("Maximum resident set size (kbytes):")?.parse()?;
    let cpu = field("User time (seconds):")?.parse::<f64>()?
        + field("System time (seconds):")?.parse::<f64>()?;
    Ok(Measured { secs, cpu, rss_kib })
}

fn child_import(dir: &Path, db: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let st = Store::open(&db.display().to_string()).await?;
        let files = ingest::expand_paths(&[dir.to_path_buf()])?;
        let inputs: Vec<InputFile> = files.iter().map(|f| InputFile::path(f, None)).collect();
        let meta = RunMeta {
            build: BuildMeta {
                label: "bench".into(),
                ..Default::default()
            },
            machine: "bench".into(),
            benchmark: "function-profile".into(),
            ..Default::default()
        };
        let out = st.import_run(&meta, &inputs, None).await?;
        eprintln!("stored {} series, {} samples", out.series, out.samples);
        st.close().await;
        Ok::<_, Box<dyn std::error::Error>>(())
    })
}

fn remove_db(p: &Path) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", p.display()));
    }
}
