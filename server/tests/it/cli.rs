//! The command line end to end: `parse`, `ingest`, `runs`, `artifact`, `compare`, `demo`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_quiescent"));
    c.env_remove("QUIESCENT_DB").env("QUIESCENT_LOG", "error");
    c
}

fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../ingest/tests/fixtures")
        .join(rel)
}

fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run quiescent")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn parse_json_has_the_documented_shape() {
    let o = run(&[
        "parse",
        "--json",
        fixture("time/seed000_bash_time_3runs_ftrace_switch.txt")
            .to_str()
            .unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let f = &v.as_array().unwrap()[0];
    assert_eq!(f["format"], "time");
    assert!(
        f["path"]
            .as_str()
            .unwrap()
            .ends_with("seed000_bash_time_3runs_ftrace_switch.txt")
    );
    assert!(f["meta"].is_object());
    assert!(f["warnings"].is_array());
    let series = f["series"].as_array().unwrap();
    let real = series
        .iter()
        .find(|s| {
            s["metric"] == "real"
                && s["label"]
                    .as_str()
                    .unwrap()
                    .contains("with reverted c229828ca6bc62d")
                && s["label"].as_str().unwrap().contains("no load")
        })
        .expect("the idle reverted real series");
    assert_eq!(real["unit"], "s");
    assert_eq!(real["direction"], "lower_is_better");
    assert_eq!(real["scope"], "all");
    let samples: Vec<f64> = real["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert_eq!(samples, vec![35.320, 35.687, 35.920]);
}

#[test]
fn parse_plain_summarises_and_fails_on_bad_input() {
    let o = run(&[
        "parse",
        fixture("latency/doc54_irqsoff_3.8.0_259us.txt")
            .to_str()
            .unwrap(),
    ]);
    assert!(o.status.success());
    let out = stdout(&o);
    assert!(out.contains("latency"), "{out}");
    assert!(out.contains("259 us"), "{out}");
    // Tables end their lines at their last character: pasted into a mail, no trailing blanks.
    assert!(out.lines().all(|l| l == l.trim_end()), "{out:?}");

    let dir = tempfile::tempdir().unwrap();
    let empty = write(dir.path(), "empty.txt", "");
    let o = run(&["parse", &empty]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("empty.txt") && stderr(&o).contains("empty"),
        "{}",
        stderr(&o)
    );

    let prose = write(dir.path(), "prose.txt", "Hello,\nthis is just a mail.\n");
    let o = run(&["parse", &prose]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("supported formats: "), "{}", stderr(&o));

    let neg = write(dir.path(), "neg.txt", "Time: 1.5\nTime: -2.0\n");
    let o = run(&["parse", "--format", "hackbench", &neg]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("neg.txt: line 2"), "{}", stderr(&o));
}

#[test]
fn ingest_runs_artifact_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("q.db").display().to_string();
    let file = fixture("trace_stat/lkml_2024_call_rcu_tasks_iw_wakeup_head_4cpu_before_after.txt");
    let args = [
        "ingest",
        file.to_str().unwrap(),
        "--build",
        "base",
        "--machine",
        "qemu",
        "--benchmark",
        "tasks",
        "--block",
        "original",
        "--param",
        "cpus=4",
        "--db",
        &db,
    ];
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("stored run 1"), "{}", stdout(&o));
    let o = run(&args);
    assert!(stdout(&o).contains("already stored"), "{}", stdout(&o));

    let o = run(&["runs", "--db", &db]);
    let out = stdout(&o);
    assert!(
        out.contains("tasks") && out.contains("cpus=4") && out.contains("base"),
        "{out}"
    );
    assert!(out.lines().all(|l| l == l.trim_end()), "{out:?}");

    let outdir = dir.path().join("out");
    let o = run(&[
        "artifact",
        "1",
        "--out",
        outdir.to_str().unwrap(),
        "--db",
        &db,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let back = std::fs::read(outdir.join(file.file_name().unwrap())).unwrap();
    assert_eq!(back, std::fs::read(&file).unwrap());

    // A bad file leaves nothing behind.
    let bad = write(dir.path(), "bad.txt", "real\t0m1.000s\nreal\t-0m2.000s\n");
    let o = run(&[
        "ingest",
        &bad,
        "--build",
        "b2",
        "--machine",
        "m",
        "--benchmark",
        "t",
        "--format",
        "time",
        "--db",
        &db,
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("bad.txt: line 2"), "{}", stderr(&o));
    let o = run(&["runs", "--db", &db, "--build", "b2"]);
    assert!(stdout(&o).contains("no runs"), "{}", stdout(&o));
}

#[test]
fn two_files_sharing_no_series_say_what_each_holds() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(
        dir.path(),
        "a.txt",
        "without the patch\n\nreal 0m1.5s\nuser 0m0.1s\nsys 0m0.2s\n",
    );
    let b = write(dir.path(), "b.txt", "with it\n\nreal 0m1.4s\n");
    let o = run(&["compare", &a, &b]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(err.contains("note: the two files share no series"), "{err}");
    assert!(
        err.contains(&format!(
            "  {a} holds:\n    real in block \"without the patch\"\n"
        )),
        "{err}"
    );
    assert!(
        err.contains("    sys in block \"without the patch\"\n"),
        "{err}"
    );
    assert!(
        err.contains(&format!("  {b} holds:\n    real in block \"with it\"\n")),
        "{err}"
    );
    assert!(err.contains("--base-block and --head-block"), "{err}");
    assert!(!err.contains("0 runs"), "{err}");

    // The same files stored as two builds: the note names the benchmark as well.
    let db = dir.path().join("q.db").display().to_string();
    for (file, build) in [(&a, "x"), (&b, "y")] {
        let o = run(&[
            "ingest",
            file,
            "--build",
            build,
            "--machine",
            "m",
            "--benchmark",
            "tc",
            "--db",
            &db,
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let o = run(&["compare", "x", "y", "--db", &db]);
    assert!(o.status.success(), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("note: the two builds share no series"),
        "{err}"
    );
    assert!(
        err.contains("  x holds:\n    tc: real in block \"without the patch\"\n"),
        "{err}"
    );
    assert!(
        err.contains("  y holds:\n    tc: real in block \"with it\"\n"),
        "{err}"
    );
    assert!(!err.contains("--base-block"), "{err}");
}

#[test]
fn compare_two_files_of_plain_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.txt", "35.320\n35.687\n35.920\n");
    let b = write(dir.path(), "b.txt", "49.393\n49.632\n49.359\n");
    let o = run(&["compare", &a, &b, "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let c = &v["comparisons"][0];
    assert_eq!(c["verdict"], "regression");
    assert_eq!(c["test"], "welch");
    assert_eq!(c["base"]["n"], 3);
    assert!((c["base"]["median"].as_f64().unwrap() - 35.687).abs() < 1e-12);
    assert!(c["welch"]["p"].as_f64().unwrap() < 0.001);
    assert!(c["mann_whitney"].is_object());
    for k in [
        "change_pct",
        "ratio",
        "ci",
        "hodges_lehmann",
        "cliffs_delta",
        "q",
        "flags",
    ] {
        assert!(c.get(k).is_some(), "missing {k}");
    }
    assert!(v["summary"].is_object());

    // On the terminal: plain numbers without a unit, and no run count for files.
    let o = run(&["compare", &a, &b]);
    let text = stdout(&o);
    assert!(
        text.starts_with(&format!("base: {a}   head: {b}\n")),
        "{text}"
    );
    assert!(
        text.contains("  35.687  ") && text.contains("  49.393  "),
        "{text}"
    );

    // Gate: exit 3 on a regression only with --fail-on.
    assert_eq!(
        run(&["compare", &a, &b, "--fail-on", "regression"])
            .status
            .code(),
        Some(3)
    );
    assert_eq!(
        run(&["compare", &b, &a, "--fail-on", "regression"])
            .status
            .code(),
        Some(0)
    );
    // Higher is better turns the same change into an improvement.
    let o = run(&["compare", &a, &b, "--json", "--direction", "higher"]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["comparisons"][0]["verdict"], "improvement");
}

#[test]
fn compare_builds_from_the_demo_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("demo.db").display().to_string();
    let o = run(&["demo", "--no-serve", "--db", &db]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("runs"), "{}", stdout(&o));

    let o = run(&[
        "compare",
        "c229828ca6bc-reverted",
        "c229828ca6bc",
        "--json",
        "--db",
        &db,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = v["comparisons"].as_array().unwrap();
    let idle = rows
        .iter()
        .find(|r| r["metric"] == "real" && r["params"]["load"] == "idle")
        .expect("idle real");
    assert_eq!(idle["verdict"], "regression");
    assert!(
        idle["flags"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["flag"] == "welch_fallback")
    );
    assert!((idle["change_pct"].as_f64().unwrap() - (49.393 / 35.687 - 1.0) * 100.0).abs() < 1e-9);
    // Regressions come first.
    assert_eq!(rows[0]["verdict"], "regression");

    // `--direction` is what the verdicts and `--fail-on` are decided by, not a relabelling:
    // the time the commit adds is a regression when lower is better, an improvement when
    // higher is.
    let real = |direction: &str| {
        let o = run(&[
            "compare",
            "c229828ca6bc-reverted",
            "c229828ca6bc",
            "--json",
            "--metric",
            "real",
            "--direction",
            direction,
            "--fail-on",
            "regression",
            "--db",
            &db,
        ]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let idle = v["comparisons"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["params"]["load"] == "idle")
            .cloned()
            .expect("idle real");
        (o.status.code(), idle)
    };
    let (code, idle) = real("lower");
    assert_eq!(code, Some(3));
    assert_eq!(idle["verdict"], "regression");
    assert_eq!(idle["direction"], "lower_is_better");
    let (code, idle) = real("higher");
    assert_eq!(code, Some(0), "no regression when higher is better");
    assert_eq!(idle["verdict"], "improvement");
    assert_eq!(idle["direction"], "higher_is_better");

    // Seed 004: per-CPU hits fall 2.9x; a decrease with the per-CPU flag.
    let o = run(&[
        "compare",
        "1e5aa3d5d53a-parent",
        "1e5aa3d5d53a",
        "--json",
        "--metric",
        "*.hit",
        "--db",
        &db,
    ]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let cpus = v["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["scope"] == "cpus")
        .expect("per-CPU pooled row");
    assert_eq!(cpus["verdict"], "decrease");
    assert!(
        cpus["flags"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["flag"] == "per_cpu")
    );

    // The email text stays within 72 columns.
    let o = run(&[
        "compare",
        "c229828ca6bc-reverted",
        "c229828ca6bc",
        "--email",
        "--db",
        &db,
    ]);
    let text = stdout(&o);
    assert!(text.contains("%change"));
    for line in text.lines() {
        assert!(line.chars().count() <= 72, "too wide: {line:?}");
    }
    // CSV and Markdown.
    let o = run(&["compare", "v4.19", "v5.1", "--csv", "--db", &db]);
    let csv = stdout(&o);
    assert!(csv.starts_with("benchmark,params,metric"), "{csv}");
    assert_eq!(csv.lines().count(), 5, "{csv}");
    assert!(csv.contains("preempt_off_ms=50"));
    let o = run(&["compare", "v4.19", "v5.1", "--markdown", "--db", &db]);
    assert!(stdout(&o).contains("| rcuperf-preempt-off |"));
    // The terminal output shows the sweep as a matrix.
    let o = run(&["compare", "v4.19", "v5.1", "--db", &db]);
    assert!(stdout(&o).contains("by preempt_off_ms"), "{}", stdout(&o));

    // Unknown builds: a clear error with a hint.
    let o = run(&["compare", "v4.19", "v9.9", "--db", &db]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("no build \"v9.9\"") && stderr(&o).contains("known builds"),
        "{}",
        stderr(&o)
    );
}

/// A `perf stat` counter that was multiplexed (`(50.00%)`) is flagged in the comparison; one
/// counted all the time (`(100.00%)`) is not.
#[test]
fn multiplexed_counters_are_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let stat = |cycles: &str| {
        format!(
            "\n Performance counter stats for './bench':\n\n     {cycles}      cpu-cycles                #    1.087 GHz                      (50.00%)\n         8,578,591      instructions                                                  (100.00%)\n\n       1.900 seconds time elapsed\n\n"
        )
    };
    let a = write(dir.path(), "a.txt", &stat("2,064,476,092"));
    let b = write(dir.path(), "b.txt", &stat("2,164,476,092"));
    let out = run(&["compare", &a, &b, "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let flags_of = |metric: &str| -> Vec<String> {
        let row = json["comparisons"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["metric"] == metric)
            .unwrap_or_else(|| panic!("no {metric} row"));
        row["flags"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["flag"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(flags_of("cpu-cycles").contains(&"multiplexed".to_string()));
    assert!(!flags_of("instructions").contains(&"multiplexed".to_string()));
    let text = stdout(&run(&["compare", &a, &b]));
    assert!(text.contains("counter multiplexed"), "{text}");
}
