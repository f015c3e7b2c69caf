//! Ingest benchmark: parse and parse+store throughput on generated large inputs, against two
//! baselines measured in the same run (counting the lines of the same bytes; inserting the
//! same rows with a bare prepared-statement loop), and peak memory of parsing a file and a
//! file 10x larger (it must stay flat).
//!
//! `cargo run --release -p quiescent-store --example bench_ingest [-- --scale 1.0 --dir DIR]`
//! `--scale` shrinks or grows every generated input (1.0: a 19,043-function x 64-CPU trace_stat
//! set, a 10-million-grace-period rcuscale log, a 1 GB function_graph trace).

use std::collections::BTreeMap;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use store::{InputFile, RunMeta, Store};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("child-parse") {
        return child_parse(&args[2..]);
    }
    let mut scale = 1.0f64;
    let mut dir = PathBuf::from("bench-out");
    let mut i = 1;
    while i < args.len() {
        match args[i].as_str() {
            "--scale" => {
                scale = args[i + 1].parse()?;
                i += 2;
            }
            "--dir" => {
                dir = PathBuf::from(&args[i + 1]);
                i += 2;
            }
            other => return Err(format!("unknown argument {other}").into()),
        }
    }
    std::fs::create_dir_all(&dir)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;

    println!("generating inputs in {} (scale {scale})", dir.display());
    let ts_dir = dir.join("trace_stat");
    let ts_functions = ((19_043.0 * scale) as usize).max(100);
    gen_trace_stat(&ts_dir, ts_functions, 64)?;
    let rcu = dir.join("rcuscale.log");
    gen_rcuscale(&rcu, ((10_000_000.0 * scale) as usize).max(10_000))?;
    let fg = dir.join("function_graph.txt");
    let fg_bytes = ((1u64 << 30) as f64 * scale) as u64;
    gen_function_graph(&fg, fg_bytes.max(1 << 20))?;
    let fg_small = dir.join("function_graph_small.txt");
    gen_function_graph(&fg_small, (fg_bytes / 10).max(1 << 20))?;

    println!();
    println!("== parse throughput (baseline: counting lines of the same bytes, same run)");
    println!(
        "{:<28} {:>10} {:>12} {:>14} {:>12} {:>8}",
        "input", "MB", "parse MB/s", "samples/s", "lines MB/s", "ratio"
    );
    let ts_files: Vec<PathBuf> = ingest::expand_paths(std::slice::from_ref(&ts_dir))?;
    for (name, files) in [
        ("trace_stat 64 CPUs", ts_files.clone()),
        ("rcuscale log", vec![rcu.clone()]),
        ("function_graph", vec![fg.clone()]),
    ] {
        let bytes: u64 = files
            .iter()
            .map(|f| f.metadata().map(|m| m.len()).unwrap_or(0))
            .sum();
        let t = Instant::now();
        let mut lines = 0u64;
        for f in &files {
            lines += count_lines(f)?;
        }
        let line_secs = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let mut samples = 0u64;
        for f in &files {
            let mut sink = CountSink::default();
            let file = std::fs::File::open(f)?;
            let s = ingest::parse_reader(f, file, None, &mut sink)?;
            samples += s.samples;
        }
        let parse_secs = t.elapsed().as_secs_f64();
        let mb = bytes as f64 / 1e6;
        println!(
            "{:<28} {:>10.1} {:>12.1} {:>14.0} {:>12.1} {:>8.2}",
            name,
            mb,
            mb / parse_secs,
            samples as f64 / parse_secs,
            mb / line_secs,
            line_secs / parse_secs
        );
        let _ = lines;
    }
    println!("(ratio = parse speed / line-count speed; the target is at least 0.33)");

    println!();
    println!(
        "== parse + store (baseline: the same rows through a bare prepared-statement loop, same SQLite settings)"
    );
    for (name, files) in [
        ("trace_stat 64 CPUs", ts_files.clone()),
        ("rcuscale log", vec![rcu.clone()]),
    ] {
        let db = dir.join(format!("bench-{}.db", name.replace(' ', "_")));
        remove_db(&db);
        let (secs, series, samples) = rt.block_on(async {
            let st = Store::open(&db.display().to_string()).await?;
            let meta = RunMeta {
                build: store::BuildMeta {
                    label: "bench".into(),
                    ..Default::default()
                },
                machine: "bench".into(),
                benchmark: name.into(),
                ..Default::default()
            };
            let inputs: Vec<InputFile> = files.iter().map(|f| InputFile::path(f, None)).collect();
            let t = Instant::now();
            let out = st.import_run(&meta, &inputs, None).await?;
            let secs = t.elapsed().as_secs_f64();
            st.close().await;
            Ok::<_, Box<dyn std::error::Error>>((secs, out.series, out.samples))
        })?;
        let bdb = dir.join(format!("bench-{}-baseline.db", name.replace(' ', "_")));
        remove_db(&bdb);
        let base_secs = rt.block_on(baseline_insert(&bdb, series, samples))?;
        let rows = (series + samples) as f64;
        println!(
            "{:<20} {:>9} series {:>10} samples: store {:>9.0} rows/s, bare loop {:>9.0} rows/s, ratio {:.2} (target >= 0.5)",
            name,
            series,
            samples,
            rows / secs,
            rows / base_secs,
            base_secs / secs
        );
        remove_db(&db);
        remove_db(&bdb);
    }

    println!();
    println!("== parse memory (peak RSS of a child process; must not grow with the file size)");
    let exe = std::env::current_exe()?;
    let small = child_rss(&exe, &fg_small)?;
    let large = child_rss(&exe, &fg)?;
    let s_mb = fg_small.metadata()?.len() as f64 / 1e6;
    let l_mb = fg.metadata()?.len() as f64 / 1e6;
    println!(
        "function_graph {s_mb:.0} MB: {:.1} MiB peak; {l_mb:.0} MB: {:.1} MiB peak; ratio {:.2} for a {:.0}x larger file",
        small as f64 / 1024.0,
        large as f64 / 1024.0,
        large as f64 / small as f64,
        l_mb / s_mb
    );
    Ok(())
}

fn remove_db(p: &Path) {
    for s in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{s}", p.display()));
    }
}

/// Counts what a parser emits without keeping the samples; series are looked up by key as
/// the store's sink does.
#[derive(Default)]
struct CountSink {
    index: ingest::model::FastMap<ingest::SeriesKey, usize>,
    samples: u64,
}

impl ingest::Sink for CountSink {
    fn series(&mut self, spec: &ingest::SeriesSpec) -> usize {
        if let Some(&id) = self.index.get(&spec.key) {
            return id;
        }
        let id = self.index.len();
        self.index.insert(spec.key.clone(), id);
        id
    }
    fn sample(&mut self, _id: usize, _value: f64) {
        self.samples += 1;
    }
    fn meta(&mut self, _key: &str, _value: String) {}
    fn warning(&mut self, _w: ingest::Warning) {}
    fn extra(&mut self, _key: &str, _value: serde_json::Value) {}
}

fn count_lines(path: &Path) -> std::io::Result<u64> {
    let mut f = std::fs::File::open(path)?;
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    loop {
        let k = f.read(&mut buf)?;
        if k == 0 {
            break;
        }
        n += memchr::memchr_iter(b'\n', &buf[..k]).count() as u64;
    }
    Ok(n)
}

/// Parses a file with a sink that keeps series declarations (as the store does) and reports
/// the peak RSS (VmHWM, KiB) on stdout.
fn child_parse(args: &[String]) -> Result<(), Box<dyn std::error::Error>> {
    let path = PathBuf::from(&args[0]);
    let mut sink = CountSink::default();
    let file = std::fs::File::open(&path)?;
    ingest::parse_reader(&path, file, None, &mut sink)?;
    let status = std::fs::read_to_string("/proc/self/status")?;
    let hwm = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0);
    println!("{hwm}");
    Ok(())
}

fn child_rss(exe: &Path, file: &Path) -> Result<u64, Box<dyn std::error::Error>> {
    let out = std::process::Command::new(exe)
        .arg("child-parse")
        .arg(file)
        .output()?;
    if !out.status.success() {
        return Err(format!("child failed: {}", String::from_utf8_lossy(&out.stderr)).into());
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().parse()?)
}

/// The same number of series rows, each with its samples packed, through one prepared INSERT
/// per row.
async fn baseline_insert(
    db: &Path,
    series: u64,
    samples: u64,
) -> Result<f64, Box<dyn std::error::Error>> {
    let pool = Store::open(&db.display().to_string())
        .await?
        .sqlite_pool()
        .clone();
    let t = Instant::now();
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await?;
    sqlx::query("INSERT INTO builds (label, created_at) VALUES ('b', 0)")
        .execute(&mut *tx)
        .await?;
    sqlx::query("INSERT INTO machines (name, created_at) VALUES ('m', 0)")
        .execute(&mut *tx)
        .await?;
    sqlx::query("INSERT INTO runs (build_id, machine_id, benchmark, content_hash, import_hash, created_at) VALUES (1, 1, 'b', 'h', 'h', 0)")
        .execute(&mut *tx)
        .await?;
    sqlx::query(
        "INSERT INTO names (id, name) VALUES (1, 'm'), (2, 's'), (3, 'neutral'), (4, 'all')",
    )
    .execute(&mut *tx)
    .await?;
    let per = samples.div_ceil(series.max(1));
    let mut left = samples;
    for _ in 0..series {
        let k = per.min(left);
        left -= k;
        sqlx::query(
            "INSERT INTO series_block (run_id, metric_id, unit_id, direction_id, series, n, vals) \
             VALUES (1, 1, 2, 3, json_array(json_array(4, ?)), ?, ?)",
        )
        .bind(k as i64)
        .bind(k as i64)
        .bind(store::pack(&vec![1.5; k as usize]))
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    let secs = t.elapsed().as_secs_f64();
    pool.close().await;
    Ok(secs)
}

fn gen_trace_stat(dir: &Path, functions: usize, cpus: usize) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for cpu in 0..cpus {
        let mut w = BufWriter::new(std::fs::File::create(dir.join(format!("function{cpu}")))?);
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
            writeln!(
                w,
                "  {:<30}  {:>10}    {:.3} us    {:.3} us    {:.3} us    ",
                format!("kernel_function_{f:06}"),
                hit,
                time,
                avg,
                avg * 0.01
            )?;
        }
    }
    Ok(())
}

fn gen_rcuscale(path: &Path, gps: usize) -> std::io::Result<()> {
    let mut w = BufWriter::new(std::fs::File::create(path)?);
    writeln!(
        w,
        "[    0.000000] rcu-scale:--- Start of test: nreaders=16 nwriters=16 verbose=1 shutdown=1"
    )?;
    let writers = 16;
    for i in 0..gps {
        let ts = i as f64 * 0.0001;
        writeln!(
            w,
            "[{:>12.6}] rcu-scale: {:>4} writer-duration: {:>5} {}",
            ts,
            i % writers,
            i / writers,
            20_000_000 + (i * 7919) % 9_000_000
        )?;
    }
    for wr in 0..writers {
        writeln!(w, "rcu-scale: writer {wr} gps: {}", gps / writers)?;
    }
    Ok(())
}

fn gen_function_graph(path: &Path, bytes: u64) -> std::io::Result<()> {
    let mut w = BufWriter::new(std::fs::File::create(path)?);
    writeln!(
        w,
        "# tracer: function_graph\n#\n# CPU  DURATION                  FUNCTION CALLS\n# |     |   |                     |   |   |   |\n"
    )?;
    let mut written = 0u64;
    let mut i = 0u64;
    let mut names = BTreeMap::new();
    while written < bytes {
        let cpu = i % 4;
        let name = names
            .entry(i % 97)
            .or_insert_with(|| format!("kernel_fn_{}", i % 97))
            .clone();
        let block = format!(
            " {cpu})               |  {name}() {{\n {cpu})   0.{:03} us    |    _raw_spin_lock();\n {cpu})   1.{:03} us    |    update_curr();\n {cpu})   2.{:03} us    |  }}\n",
            i % 1000,
            (i * 7) % 1000,
            (i * 13) % 1000
        );
        w.write_all(block.as_bytes())?;
        written += block.len() as u64;
        i += 1;
    }
    Ok(())
}
