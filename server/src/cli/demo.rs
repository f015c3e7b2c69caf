//! `quiescent demo`: builds a fresh database from the bundled real datasets (the LKML threads
//! and kernel documentation quiescent was designed from) and serves the dashboard.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use store::{BuildMeta, InputFile, RunMeta};

use crate::config::ServeArgs;

#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    /// Where to build the demo database (replaced if it exists).
    #[arg(long, env = "QUIESCENT_DEMO_DB", default_value = "quiescent-demo.db")]
    pub db: PathBuf,
    /// Build the database, print what it holds, and exit without serving.
    #[arg(long)]
    pub no_serve: bool,
    #[command(flatten)]
    pub serve: ServeArgs,
}

/// A build of the demo data.
struct Build {
    label: &'static str,
    commit: Option<&'static str>,
    kernel_version: Option<&'static str>,
    config: Option<&'static str>,
    cmdline: Option<&'static str>,
}

/// One import of the demo: a bundled file (or one labelled block of it) as a run.
struct Entry {
    benchmark: &'static str,
    file: &'static str,
    bytes: &'static [u8],
    block: Option<&'static str>,
    build: &'static Build,
    machine: &'static str,
    facts: &'static [(&'static str, &'static str)],
    params: &'static [(&'static str, &'static str)],
}

macro_rules! fixture {
    ($rel:literal) => {
        (
            $rel,
            include_bytes!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../ingest/tests/fixtures/",
                $rel
            )) as &'static [u8],
        )
    };
}

const RCU_FAST_NO_HZ: &str = "CONFIG_RCU_FAST_NO_HZ=y\n";
const STRICT_GP: &str = "CONFIG_PREEMPT_RCU=y\nCONFIG_RCU_STRICT_GRACE_PERIOD=y\n";

static C2298_REVERTED: Build = Build {
    label: "c229828ca6bc-reverted",
    commit: None,
    kernel_version: None,
    config: Some(RCU_FAST_NO_HZ),
    cmdline: None,
};
static C2298: Build = Build {
    label: "c229828ca6bc",
    commit: Some("c229828ca6bc62d6c654"),
    kernel_version: None,
    config: Some(RCU_FAST_NO_HZ),
    cmdline: None,
};
static V4_19: Build = Build {
    label: "v4.19",
    commit: None,
    kernel_version: Some("4.19"),
    config: None,
    cmdline: None,
};
static V5_1: Build = Build {
    label: "v5.1",
    commit: None,
    kernel_version: Some("5.1"),
    config: None,
    cmdline: None,
};
static QS_PARENT: Build = Build {
    label: "1e5aa3d5d53a-parent",
    commit: None,
    kernel_version: None,
    config: Some(STRICT_GP),
    cmdline: None,
};
static QS: Build = Build {
    label: "1e5aa3d5d53a",
    commit: Some("1e5aa3d5d53a6b38718510cce2b91a8199303891"),
    kernel_version: None,
    config: Some(STRICT_GP),
    cmdline: None,
};
static FTRACE_DISABLE: Build = Build {
    label: "v2.6.28-ftrace-disable",
    commit: None,
    kernel_version: Some("2.6.28"),
    config: None,
    cmdline: None,
};
static FTRACE_ENABLE: Build = Build {
    label: "v2.6.28-ftrace-enable",
    commit: None,
    kernel_version: Some("2.6.28"),
    config: None,
    cmdline: None,
};
static HZ_BASE: Build = Build {
    label: "v3.8-qs-fqs-jiffies",
    commit: None,
    kernel_version: Some("3.8.0"),
    config: Some("CONFIG_HZ=100\nCONFIG_NR_CPUS=1024\n"),
    cmdline: None,
};
static HZ_PATCH: Build = Build {
    label: "v3.8-qs-fqs-from-HZ",
    commit: None,
    kernel_version: Some("3.8.0"),
    config: Some("CONFIG_HZ=100\nCONFIG_NR_CPUS=1024\n"),
    cmdline: None,
};

macro_rules! build {
    ($name:ident, $label:literal) => {
        static $name: Build = Build {
            label: $label,
            commit: None,
            kernel_version: None,
            config: None,
            cmdline: None,
        };
    };
}
build!(KFREE_BASE, "kvfree-rcu-baseline");
build!(KFREE_POLL, "kvfree-rcu-polling");
build!(TASKS_BASE, "rcu-tasks-irq-work-baseline");
build!(TASKS_PATCH, "rcu-tasks-avoid-irq-work");
build!(VMALLOC_BASE, "vmalloc-before");
build!(VMALLOC_PATCH, "vmalloc-fix-exhaustion");
build!(SHAZPTR_BASE, "lockdep-rcu");
build!(SHAZPTR_PATCH, "lockdep-shazptr");
build!(SWAP_VANILLA, "2.6.18-vanilla");
build!(SWAP_TOKEN, "2.6.18-swap-token");
build!(SLUB_BASE, "slub-count-partial-original");
build!(SLUB_PATCH, "slub-count-partial-patched");
build!(SLOB_BASE, "slob-current");
build!(SLOB_PATCH, "slob-segregated-free-list");
build!(CLUSTER_BASE, "sched-without-cluster");
build!(CLUSTER_PATCH, "sched-cluster-level");
build!(REF_BASE, "rcu-nesting-unmarked");
build!(REF_PATCH, "rcu-nesting-marked");
build!(GIT_BEFORE, "git-xdiff-before-strbuf");
build!(GIT_AFTER, "git-xdiff-strbuf");
build!(RCUSCALE_OLD, "rcuscale-gps-count-old");
build!(RCUSCALE_NEW, "rcuscale-gps-count-fixed");
build!(IRQSOFF_2626, "v2.6.26");
build!(IRQSOFF_38, "v3.8.0-test");

const E8400: &[(&str, &str)] = &[("cpu_model", "Intel Core2 Duo E8400"), ("cpus", "2")];

/// Every import of the demo, in order.
fn entries() -> Vec<Entry> {
    let mut v = Vec::new();
    let mut add = |benchmark: &'static str,
                   (file, bytes): (&'static str, &'static [u8]),
                   block: Option<&'static str>,
                   build: &'static Build,
                   machine: &'static str,
                   facts: &'static [(&'static str, &'static str)],
                   params: &'static [(&'static str, &'static str)]| {
        v.push(Entry {
            benchmark,
            file,
            bytes,
            block,
            build,
            machine,
            facts,
            params,
        })
    };
    // Seed 001: rcuperf median GP duration per preempt-off duration (medians only).
    let seed001 = fixture!("rcuscale/seed001_rcuperf_median_table.txt");
    add(
        "rcuperf-preempt-off",
        seed001,
        Some("v4.19"),
        &V4_19,
        "rcuperf-10r10w",
        &[],
        &[],
    );
    add(
        "rcuperf-preempt-off",
        seed001,
        Some("v5.1 (deferred)"),
        &V5_1,
        "rcuperf-10r10w",
        &[],
        &[],
    );
    // Seed 004: trace_stat of rcu_preempt_deferred_qs_handler on 4 CPUs.
    let seed004 = fixture!("trace_stat/seed004_head_function_star_4cpu_collapsed_ws.txt");
    add(
        "rcu-deferred-qs-profile",
        seed004,
        Some("original"),
        &QS_PARENT,
        "rcutorture-4cpu",
        &[("cpus", "4")],
        &[],
    );
    add(
        "rcu-deferred-qs-profile",
        seed004,
        Some("apply patch"),
        &QS,
        "rcutorture-4cpu",
        &[("cpus", "4")],
        &[],
    );
    // Seed 002: irqsoff max latency of disabling/enabling N ftrace call sites.
    let seed002 = fixture!("latency/seed002_irqsoff_latency_summary_list.txt");
    for (n, dis, en) in [
        ("1", "one-disable", "one-enable"),
        ("10", "ten-disable", "ten-enable"),
        ("100", "hundred-disable", "hundred-enable"),
        ("19043", "full-disable", "full-enable"),
    ] {
        let params: &'static [(&str, &str)] = match n {
            "1" => &[("functions", "1")],
            "10" => &[("functions", "10")],
            "100" => &[("functions", "100")],
            _ => &[("functions", "19043")],
        };
        add(
            "ftrace-enable-latency",
            seed002,
            Some(dis),
            &FTRACE_DISABLE,
            "rostedt-test-box",
            &[],
            params,
        );
        add(
            "ftrace-enable-latency",
            seed002,
            Some(en),
            &FTRACE_ENABLE,
            "rostedt-test-box",
            &[],
            params,
        );
    }
    // Seed 003: total time of the 202 synchronize_sched() calls at boot.
    let seed003 = fixture!("samples/seed003_boot_synchronize_sched.csv");
    add(
        "boot-synchronize-sched",
        seed003,
        Some("without this patch"),
        &HZ_BASE,
        "power7-kvm-4cpu",
        &[("cpus", "4")],
        &[],
    );
    add(
        "boot-synchronize-sched",
        seed003,
        Some("with this patch"),
        &HZ_PATCH,
        "power7-kvm-4cpu",
        &[("cpus", "4")],
        &[],
    );
    // Other before/after pairs among the samples.
    let kfree = fixture!("rcuscale/lkml_2022_kfree_rcu_test_total_time_lines.txt");
    add(
        "rcuscale-kfree",
        kfree,
        Some(""),
        &KFREE_BASE,
        "kvm-64cpu",
        &[("cpus", "64")],
        &[],
    );
    add(
        "rcuscale-kfree",
        kfree,
        Some("with a patch"),
        &KFREE_POLL,
        "kvm-64cpu",
        &[("cpus", "64")],
        &[],
    );
    let tasks =
        fixture!("trace_stat/lkml_2024_call_rcu_tasks_iw_wakeup_head_4cpu_before_after.txt");
    add(
        "rcu-tasks-irq-work-profile",
        tasks,
        Some("original"),
        &TASKS_BASE,
        "qemu-4cpu",
        &[("cpus", "4")],
        &[],
    );
    add(
        "rcu-tasks-irq-work-profile",
        tasks,
        Some("apply patch"),
        &TASKS_PATCH,
        "qemu-4cpu",
        &[("cpus", "4")],
        &[],
    );
    let vmalloc = fixture!("trace_stat/lkml_2015_vmalloc_before_after_function0_scenario1.txt");
    add(
        "vmalloc-profile",
        vmalloc,
        Some("BEFORE"),
        &VMALLOC_BASE,
        "vmalloc-test-box",
        &[],
        &[],
    );
    add(
        "vmalloc-profile",
        vmalloc,
        Some("AFTER"),
        &VMALLOC_PATCH,
        "vmalloc-test-box",
        &[],
        &[],
    );
    let tc = fixture!("time/lkml_2025_bash_time_tc_qdisc_tab_indented.txt");
    add(
        "tc-qdisc-replace",
        tc,
        Some("without the patchset"),
        &SHAZPTR_BASE,
        "vm-96cpu",
        &[("cpus", "96")],
        &[],
    );
    add(
        "tc-qdisc-replace",
        tc,
        Some("with the patchset"),
        &SHAZPTR_PATCH,
        "vm-96cpu",
        &[("cpus", "96")],
        &[],
    );
    let shaz = fixture!("rcuscale/lkml_2025_shazptr_kvm_recheck_summaries_tab_indented.txt");
    add(
        "synchronize-latency",
        shaz,
        Some("RCU"),
        &SHAZPTR_BASE,
        "vm-96cpu",
        &[("cpus", "96")],
        &[],
    );
    add(
        "synchronize-latency",
        shaz,
        Some("shazptr"),
        &SHAZPTR_PATCH,
        "vm-96cpu",
        &[("cpus", "96")],
        &[],
    );
    let make = fixture!("time/lkml_2006_gnu_time_-v_make_-j5_two_runs.txt");
    add(
        "kernel-make-j5",
        make,
        Some("-vanilla"),
        &SWAP_VANILLA,
        "swap-token-laptop",
        &[],
        &[],
    );
    add(
        "kernel-make-j5",
        make,
        Some("-swap-token"),
        &SWAP_TOKEN,
        "swap-token-laptop",
        &[],
        &[],
    );
    let slub = fixture!("perf_stat/lkml_2021_perf_stat_null_repeat10_hackbench_8blocks.txt");
    add(
        "hackbench-slub",
        slub,
        Some("original, no patched"),
        &SLUB_BASE,
        "xeon-e5-2650v2-32cpu",
        &[("cpus", "32")],
        &[],
    );
    add(
        "hackbench-slub",
        slub,
        Some("patched with patch1~4"),
        &SLUB_PATCH,
        "xeon-e5-2650v2-32cpu",
        &[("cpus", "32")],
        &[],
    );
    let slob = fixture!("perf_stat/lkml_2021_perf_stat_hackbench_slob_cpu-clock_msec_tabs.txt");
    add(
        "hackbench-slob",
        slob,
        Some("current SLOB"),
        &SLOB_BASE,
        "kvm-2cpu",
        &[("cpus", "2")],
        &[],
    );
    add(
        "hackbench-slob",
        slob,
        Some("SLOB with segregated free list"),
        &SLOB_PATCH,
        "kvm-2cpu",
        &[("cpus", "2")],
        &[],
    );
    let cluster = fixture!("hackbench/lkml_2021_hackbench_threaded_pipe_header_and_avg_table.txt");
    add(
        "hackbench-threaded-pipe",
        cluster,
        Some("w/o"),
        &CLUSTER_BASE,
        "kunpeng920-24core-numa",
        &[],
        &[],
    );
    add(
        "hackbench-threaded-pipe",
        cluster,
        Some("w/"),
        &CLUSTER_PATCH,
        "kunpeng920-24core-numa",
        &[],
        &[],
    );
    let refscale = fixture!("refscale/lkml_2021_refscale_min_median_max_3runs_table.txt");
    add(
        "refscale-rcu",
        refscale,
        Some("Unmarked accesses (status quo), measured by three refscale runs"),
        &REF_BASE,
        "i9-10885h-laptop",
        &[("cpus", "8")],
        &[],
    );
    add(
        "refscale-rcu",
        refscale,
        Some("Marked accesses, also measured by three refscale runs"),
        &REF_PATCH,
        "i9-10885h-laptop",
        &[("cpus", "8")],
        &[],
    );
    let blame = fixture!("time/git_list_2008_gnu_time_default_format_blame.txt");
    add(
        "git-blame",
        blame,
        Some("For example, before this commit"),
        &GIT_BEFORE,
        "git-dev-box",
        &[],
        &[],
    );
    add(
        "git-blame",
        blame,
        Some("With this commit"),
        &GIT_AFTER,
        "git-dev-box",
        &[],
        &[],
    );
    let console = fixture!("rcuscale/lkml_2021_rcuscale_writer_duration_console_sample.txt");
    add(
        "rcuscale-writer-duration",
        console,
        Some("Sample of old console output"),
        &RCUSCALE_OLD,
        "rcuscale-vm",
        &[],
        &[],
    );
    add(
        "rcuscale-writer-duration",
        console,
        Some("Sample of new console output"),
        &RCUSCALE_NEW,
        "rcuscale-vm",
        &[],
        &[],
    );
    // Latency traces, for the drill-down (different kernels; shown as what they are).
    add(
        "irqsoff-trace",
        fixture!("latency/doc2635_irqsoff_2.6.26_12us.txt"),
        None,
        &IRQSOFF_2626,
        "doc-example-box",
        &[],
        &[],
    );
    for f in [
        fixture!("latency/doc54_irqsoff_3.8.0_16us.txt"),
        fixture!("latency/doc54_irqsoff_3.8.0_259us.txt"),
        fixture!("latency/doc54_irqsoff_3.8.0_71us_function-trace.txt"),
    ] {
        add(
            "irqsoff-trace",
            f,
            None,
            &IRQSOFF_38,
            "doc-example-box",
            &[],
            &[],
        );
    }
    // Seed 000 last: the newest builds are what the home page offers to compare first.
    // Seed 000: `time ./test-ftrace`, 3 runs per load level, with and without c229828ca6bc.
    let seed000 = fixture!("time/seed000_bash_time_3runs_ftrace_switch.txt");
    for (load, with_block, reverted_block) in [
        (
            "idle",
            "Now, results with no load on the system; with the commit c229828ca6bc62d",
            "Now, results with no load on the system; with reverted c229828ca6bc62d",
        ),
        (
            "one-cpu",
            "Results with 100% load on one CPU and no load on 2nd CPU with c229828ca6bc62d",
            "Results with 100% load on one CPU and no load on 2nd CPU with reverted c229828ca6bc62d",
        ),
        (
            "all-cpus",
            "Results with 100% load on both CPUs with c229828ca6bc62d",
            "Results with 100% load on both CPUs with reverted c229828ca6bc62d",
        ),
    ] {
        let params: &'static [(&str, &str)] = match load {
            "idle" => &[("load", "idle")],
            "one-cpu" => &[("load", "one-cpu")],
            _ => &[("load", "all-cpus")],
        };
        add(
            "ftrace-tracer-switch",
            seed000,
            Some(reverted_block),
            &C2298_REVERTED,
            "core2-duo-e8400",
            E8400,
            params,
        );
        add(
            "ftrace-tracer-switch",
            seed000,
            Some(with_block),
            &C2298,
            "core2-duo-e8400",
            E8400,
            params,
        );
    }
    v
}

pub async fn run(args: DemoArgs) -> anyhow::Result<ExitCode> {
    let db_args = crate::config::DbArgs {
        db: args.db.clone(),
    };
    if !db_args.is_postgres() {
        remove_db(&args.db)?;
    }
    let store = crate::cli::open_store(&db_args).await?;
    // A shared PostgreSQL database is not ours to empty: the demo goes into an empty one.
    if db_args.is_postgres() && store.generation().await? != 0 {
        anyhow::bail!(
            "database {} already holds runs; the demo needs an empty database",
            db_args.shown()
        );
    }
    let stored = build_demo(&store, true).await?;
    println!(
        "demo database {}: {} runs, {} series, {} samples from {} bundled files",
        db_args.shown(),
        stored.runs,
        stored.series,
        stored.samples,
        stored.files
    );
    let (runs, groups) = super::demo_history::build_history(&store).await?;
    println!(
        "generated history: {runs} runs over {} builds on {}, {groups} alert groups (see /alerts and /benchmarks/NAME)",
        super::demo_history::BUILDS,
        super::demo_history::MACHINE
    );
    if args.no_serve {
        store.close().await;
        return Ok(ExitCode::SUCCESS);
    }
    crate::web::serve_pool(store, args.serve, |addr| {
        println!("quiescent is serving http://{addr}/");
        println!("  try http://{addr}/compare?base=c229828ca6bc-reverted&head=c229828ca6bc");
        println!("  press Ctrl-C to stop");
    })
    .await?;
    Ok(ExitCode::SUCCESS)
}

fn remove_db(path: &Path) -> anyhow::Result<()> {
    for suffix in ["", "-wal", "-shm"] {
        let p = PathBuf::from(format!("{}{suffix}", path.display()));
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("removing old {}", p.display())),
        }
    }
    Ok(())
}

/// What the demo stored.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct DemoStats {
    pub files: usize,
    pub runs: usize,
    pub series: u64,
    pub samples: u64,
}

/// Imports every demo entry into `store`.
pub async fn build_demo(store: &store::Store, progress: bool) -> anyhow::Result<DemoStats> {
    let entries = entries();
    let bar = if progress {
        let bar = indicatif::ProgressBar::new(entries.len() as u64);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} importing [{bar:30}] {pos}/{len} {msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        bar
    } else {
        indicatif::ProgressBar::hidden()
    };
    let mut stats = DemoStats::default();
    let mut files = std::collections::BTreeSet::new();
    for e in &entries {
        bar.set_message(format!("{} {}", e.benchmark, e.build.label));
        let meta = RunMeta {
            build: BuildMeta {
                label: e.build.label.into(),
                commit: e.build.commit.map(Into::into),
                kernel_version: e.build.kernel_version.map(Into::into),
                config: e.build.config.map(Into::into),
                cmdline: e.build.cmdline.map(Into::into),
            },
            machine: e.machine.into(),
            machine_facts: e
                .facts
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            benchmark: e.benchmark.into(),
            params: e
                .params
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            token_id: None,
            block: e.block.map(Into::into),
        };
        let name = Path::new(e.file)
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| e.file.to_string());
        let file = InputFile::bytes(name, e.bytes.to_vec(), None);
        let out = store
            .import_run(&meta, &[file], None)
            .await
            .with_context(|| {
                format!(
                    "demo: importing {} (block {:?}) as {} of {}",
                    e.file, e.block, e.benchmark, e.build.label
                )
            })?;
        files.insert(e.file);
        stats.runs += out.run_ids.len();
        stats.series += out.series;
        stats.samples += out.samples;
        bar.inc(1);
    }
    bar.finish_and_clear();
    stats.files = files.len();
    Ok(stats)
}
