//! `quiescent bisect-step` under a real `git bisect run`: a 40-commit repository whose
//! hackbench-style benchmark slows down by 5% at one commit, with Gaussian noise.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The benchmark: hackbench's output, 18 s before commit number $BENCH_CHANGE (counted from 1),
/// 5% slower from it on, with $BENCH_NOISE relative Gaussian noise drawn from a seed of the
/// commit and a run counter kept in $BENCH_STATE; exits 3 at the commit numbers in $BENCH_FAIL.
const BENCH: &str = r#"#!/usr/bin/env python3
import os, random, subprocess, sys
n = int(subprocess.check_output(["git", "rev-list", "--count", "HEAD"]))
counter = os.path.join(os.environ["BENCH_STATE"], "runs")
k = int(open(counter).read()) if os.path.exists(counter) else 0
open(counter, "w").write(str(k + 1))
if str(n) in os.environ.get("BENCH_FAIL", "").split(","):
    sys.stderr.write("bench: cannot build commit %d\n" % n)
    sys.exit(3)
change = int(os.environ["BENCH_CHANGE"])
noise = float(os.environ.get("BENCH_NOISE", "0.015"))
rng = random.Random(n * 1000003 + k)
t = 18.0 * (1.05 if n >= change else 1.0) * (1.0 + noise * rng.gauss(0.0, 1.0))
print("Running in process mode with 10 groups using 40 file descriptors each (== 400 tasks)")
print("Each sender will pass 100 messages of 100 bytes")
print("Time: %.3f" % t)
"#;

const COMMITS: usize = 40;

struct Repo {
    _dir: tempfile::TempDir,
    root: PathBuf,
    state: PathBuf,
    /// Commit ids, oldest first: `shas[i]` is commit number i + 1.
    shas: Vec<String>,
}

fn git(dir: &Path, args: &[&str]) -> Output {
    let out = Command::new("git")
        .args(["-c", "user.name=Test", "-c", "user.email=test@example.org"])
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success() || args[0] == "bisect",
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A repository of 40 commits, each touching `version`; bench.sh is there from the first.
fn repo() -> Repo {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path().join("linux");
    let state = dir.path().join("state");
    std::fs::create_dir_all(&root).expect("mkdir");
    std::fs::create_dir_all(&state).expect("mkdir");
    git(&root, &["init", "-q", "-b", "master"]);
    let bench = root.join("bench.sh");
    std::fs::write(&bench, BENCH).expect("write bench.sh");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&bench, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    let mut shas = Vec::new();
    for i in 1..=COMMITS {
        std::fs::write(root.join("version"), format!("{i}\n")).expect("write");
        git(&root, &["add", "-A"]);
        git(&root, &["commit", "-q", "-m", &format!("commit {i}")]);
        shas.push(
            text(&git(&root, &["rev-parse", "HEAD"]).stdout)
                .trim()
                .to_string(),
        );
    }
    Repo {
        _dir: dir,
        root,
        state,
        shas,
    }
}

impl Repo {
    /// `runs` concatenated outputs of the benchmark at commit number `n`, written to `name`
    /// beside the repository.
    fn reference(&self, n: usize, runs: usize, name: &str, env: &[(&str, &str)]) -> PathBuf {
        git(&self.root, &["checkout", "-q", &self.shas[n - 1]]);
        let mut all = String::new();
        for _ in 0..runs {
            let out = self.bench(env);
            assert!(out.status.success(), "{}", text(&out.stderr));
            all.push_str(&text(&out.stdout));
        }
        git(&self.root, &["checkout", "-q", "master"]);
        let path = self.state.parent().expect("parent").join(name);
        std::fs::write(&path, all).expect("write reference");
        path
    }

    fn bench(&self, env: &[(&str, &str)]) -> Output {
        let mut c = Command::new(self.root.join("bench.sh"));
        c.current_dir(&self.root).env("BENCH_STATE", &self.state);
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().expect("bench runs")
    }

    /// `git bisect start BAD GOOD; git bisect run quiescent bisect-step ARGS -- ./bench.sh`:
    /// the output of `bisect run` and the log.
    fn bisect(&self, step_args: &[&str], env: &[(&str, &str)]) -> (Output, String) {
        git(
            &self.root,
            &["bisect", "start", &self.shas[COMMITS - 1], &self.shas[0]],
        );
        let mut c = Command::new("git");
        c.args([
            "bisect",
            "run",
            env!("CARGO_BIN_EXE_quiescent"),
            "bisect-step",
        ])
        .args(step_args)
        .args(["--", "./bench.sh"])
        .current_dir(&self.root)
        .env("BENCH_STATE", &self.state)
        .env_remove("QUIESCENT_DB");
        for (k, v) in env {
            c.env(k, v);
        }
        let out = c.output().expect("git bisect run");
        let log = text(&git(&self.root, &["bisect", "log"]).stdout);
        git(&self.root, &["bisect", "reset"]);
        (out, log)
    }

    fn step(&self, args: &[&str], cmd: &[&str], env: &[(&str, &str)]) -> Output {
        let mut c = Command::new(env!("CARGO_BIN_EXE_quiescent"));
        c.arg("bisect-step")
            .args(args)
            .arg("--")
            .args(cmd)
            .current_dir(&self.root)
            .env("BENCH_STATE", &self.state)
            .env_remove("QUIESCENT_DB");
        for (k, v) in env {
            c.env(k, v);
        }
        c.output().expect("bisect-step runs")
    }
}

/// The commit `git bisect run` named, from its "X is the first bad commit" line.
fn first_bad(out: &Output) -> Option<String> {
    text(&out.stdout).lines().find_map(|l| {
        l.strip_suffix(" is the first bad commit")
            .map(str::to_string)
    })
}

fn paths(a: &Path, b: &Path) -> (String, String) {
    (a.display().to_string(), b.display().to_string())
}

#[test]
fn bisect_run_names_the_commit_that_slowed_down() {
    let r = repo();
    let env = [("BENCH_CHANGE", "23"), ("BENCH_NOISE", "0.015")];
    let good = r.reference(1, 10, "good.txt", &env);
    let bad = r.reference(COMMITS, 10, "bad.txt", &env);
    let (g, b) = paths(&good, &bad);
    let (out, log) = r.bisect(&["--good", &g, "--bad", &b], &env);
    let stderr = text(&out.stderr);
    assert_eq!(
        first_bad(&out).as_deref(),
        Some(r.shas[22].as_str()),
        "stdout:\n{}\nstderr:\n{stderr}\nlog:\n{log}",
        text(&out.stdout)
    );
    // Progress and the decision are on stderr, step by step.
    assert!(stderr.contains("time: good median "), "{stderr}");
    assert!(stderr.contains("runs: median"), "{stderr}");
    assert!(stderr.contains("bisect-step: bad after"), "{stderr}");
    assert!(stderr.contains("bisect-step: good after"), "{stderr}");
    assert!(!log.contains("git bisect skip"), "{log}");
}

#[test]
fn identical_references_stop_the_bisection() {
    let r = repo();
    let env = [("BENCH_CHANGE", "23")];
    let good = r.reference(1, 10, "good.txt", &env);
    let (g, _) = paths(&good, &good);
    let (out, log) = r.bisect(&["--good", &g, "--bad", &g], &env);
    let stderr = text(&out.stderr);
    assert!(first_bad(&out).is_none(), "{}", text(&out.stdout));
    assert!(
        stderr.contains("are not significantly different"),
        "{stderr}"
    );
    // Exit 255 stops `git bisect run` before it marks anything.
    assert!(
        !log.contains("git bisect good") && !log.contains("git bisect bad"),
        "{log}"
    );
    // The step itself, outside git: the status is 255, and CMD never ran.
    let before = std::fs::read_to_string(r.state.join("runs")).expect("counter");
    let step = r.step(&["--good", &g, "--bad", &g], &["./bench.sh"], &env);
    assert_eq!(step.status.code(), Some(255), "{}", text(&step.stderr));
    let after = std::fs::read_to_string(r.state.join("runs")).expect("counter");
    assert_eq!(before, after);
}

#[test]
fn commits_where_the_benchmark_fails_are_skipped() {
    let r = repo();
    let env = [("BENCH_CHANGE", "23"), ("BENCH_NOISE", "0.015")];
    let good = r.reference(1, 10, "good.txt", &env);
    let bad = r.reference(COMMITS, 10, "bad.txt", &env);
    let (g, b) = paths(&good, &bad);
    // git bisect's first midpoint of 40 commits is commit 20 or 21; fail at both, and at 30.
    let failing = [("BENCH_FAIL", "20,21,30"), env[0], env[1]];
    let (out, log) = r.bisect(&["--good", &g, "--bad", &b], &failing);
    let stderr = text(&out.stderr);
    assert!(log.contains("git bisect skip"), "{log}\n{stderr}");
    assert!(stderr.contains("bisect-step: skip:"), "{stderr}");
    assert_eq!(
        first_bad(&out).as_deref(),
        Some(r.shas[22].as_str()),
        "stdout:\n{}\nlog:\n{log}",
        text(&out.stdout)
    );
    // The step alone at a failing commit: status 125.
    git(&r.root, &["checkout", "-q", &r.shas[19]]);
    let step = r.step(&["--good", &g, "--bad", &b], &["./bench.sh"], &failing);
    assert_eq!(step.status.code(), Some(125), "{}", text(&step.stderr));
}

/// A command whose first five runs hold two good-like values among bad-like ones (too little
/// to call), and whose next five are bad-like.
const STRADDLE: &str = r#"#!/bin/sh
k=$(cat "$BENCH_STATE/runs" 2>/dev/null || echo 0)
echo $((k + 1)) > "$BENCH_STATE/runs"
set -- 18.80 18.95 18.00 17.95 19.00 18.90 18.88 18.93 18.83 18.97
shift $((k % 10))
echo "Time: $1"
"#;

#[test]
fn an_unclear_step_takes_more_runs() {
    let r = repo();
    let env = [("BENCH_CHANGE", "23"), ("BENCH_NOISE", "0.01")];
    let good = r.reference(1, 10, "good.txt", &env);
    let bad = r.reference(COMMITS, 10, "bad.txt", &env);
    let (g, b) = paths(&good, &bad);
    let script = r.state.parent().expect("parent").join("straddle.sh");
    std::fs::write(&script, STRADDLE).expect("write");
    std::fs::remove_file(r.state.join("runs")).expect("reset the counter");
    let s = script.display().to_string();
    let step = r.step(&["--good", &g, "--bad", &b], &["sh", &s], &env);
    let stderr = text(&step.stderr);
    assert_eq!(step.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("5 runs:"), "{stderr}");
    assert!(stderr.contains("undecided, more runs"), "{stderr}");
    assert!(stderr.contains("bad after 10 runs"), "{stderr}");
    let runs = std::fs::read_to_string(r.state.join("runs")).expect("counter");
    assert_eq!(runs.trim(), "10");

    // One look only (--max-runs 5) at a stricter --alpha: the same five runs cannot decide.
    std::fs::remove_file(r.state.join("runs")).expect("reset the counter");
    let step = r.step(
        &[
            "--good",
            &g,
            "--bad",
            &b,
            "--max-runs",
            "5",
            "--alpha",
            "0.01",
        ],
        &["sh", &s],
        &env,
    );
    assert_eq!(step.status.code(), Some(125), "{}", text(&step.stderr));
    assert!(text(&step.stderr).contains("still undecided after 5 runs"));
}

#[test]
fn steps_are_stored_and_listed_with_build_references() {
    let r = repo();
    let env = [("BENCH_CHANGE", "23"), ("BENCH_NOISE", "0.015")];
    let good = r.reference(1, 10, "good.txt", &env);
    let bad = r.reference(COMMITS, 10, "bad.txt", &env);
    let db = r.state.parent().expect("parent").join("q.db");
    let d = db.display().to_string();
    for (file, label, sha) in [(&good, "v1", &r.shas[0]), (&bad, "v40", &r.shas[39])] {
        let out = Command::new(env!("CARGO_BIN_EXE_quiescent"))
            .args(["ingest", &file.display().to_string(), "--build", label])
            .args([
                "--commit",
                sha,
                "--machine",
                "rig1",
                "--benchmark",
                "hackbench",
            ])
            .args(["--db", &d])
            .output()
            .expect("ingest");
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let (out, _log) = r.bisect(
        &[
            "--good",
            "v1",
            "--bad",
            "v40",
            "--db",
            &d,
            "--machine",
            "rig1",
        ],
        &env,
    );
    let stderr = text(&out.stderr);
    assert_eq!(
        first_bad(&out).as_deref(),
        Some(r.shas[22].as_str()),
        "{stderr}"
    );
    assert!(stderr.contains("stored as step"), "{stderr}");
    let steps = stderr.matches("stored as step").count();

    let log = Command::new(env!("CARGO_BIN_EXE_quiescent"))
        .args(["bisect-log", "--db", &d])
        .output()
        .expect("bisect-log");
    let listing = text(&log.stdout);
    assert!(log.status.success(), "{}", text(&log.stderr));
    // One line per step plus the header; the named commit's step is there, as bad.
    assert_eq!(listing.lines().count(), steps + 1, "{listing}");
    let first_bad_line = listing
        .lines()
        .find(|l| l.contains(&r.shas[22][..12]))
        .unwrap_or_else(|| panic!("no step at the first bad commit:\n{listing}"));
    assert!(
        first_bad_line.trim_end().ends_with("bad"),
        "{first_bad_line}"
    );

    // The runs are stored under build bisect-<commit>, and compare against the references.
    let label = format!("bisect-{}", &r.shas[22][..12]);
    let cmp = Command::new(env!("CARGO_BIN_EXE_quiescent"))
        .args(["compare", "v1", &label, "--db", &d, "--json"])
        .output()
        .expect("compare");
    assert!(cmp.status.success(), "{}", text(&cmp.stderr));
    let json: serde_json::Value = serde_json::from_slice(&cmp.stdout).expect("JSON");
    let row = &json["comparisons"][0];
    assert_eq!(row["metric"], "time");
    assert!(row["head"]["n"].as_u64().unwrap_or(0) >= 5, "{row}");
    assert!(row["change_pct"].as_f64().unwrap_or(0.0) > 3.0, "{row}");
}

/// `metric,value` lines: `lat` values around `lat`, `thr` around 5 whatever the side.
fn csv(lat: f64, n: usize, offset: usize) -> String {
    let mut s = String::from("metric,value\n");
    for i in 0..n {
        // A deterministic spread of +-1% around each centre.
        let d = ((i * 7 + offset) % 11) as f64 / 10.0 - 0.5;
        s.push_str(&format!(
            "lat,{:.4}\nthr,{:.4}\n",
            lat * (1.0 + d / 50.0),
            5.0 + d / 10.0
        ));
    }
    s
}

#[test]
fn the_most_different_series_is_bisected_unless_metric_says_otherwise() {
    let dir = tempfile::tempdir().expect("temp dir");
    let write = |name: &str, text: String| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).expect("write");
        p.display().to_string()
    };
    let good = write("good.csv", csv(10.0, 10, 0));
    let bad = write("bad.csv", csv(11.0, 10, 3));
    let now = write("now.csv", csv(11.0, 1, 5));
    let step = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_quiescent"))
            .args(["bisect-step", "--good", &good, "--bad", &bad])
            .args(extra)
            .args(["--", "cat", &now])
            .env_remove("QUIESCENT_DB")
            .output()
            .expect("bisect-step runs")
    };
    let out = step(&[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("bisecting lat (of 2 series in both references"),
        "{stderr}"
    );
    // thr does not differ between the references: asked for, it stops the bisection.
    let out = step(&["--metric", "thr"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(255), "{stderr}");
    assert!(
        stderr.contains("not significantly different on thr"),
        "{stderr}"
    );
    // A mistyped flag stops the bisection too (clap's own status, 2, would mean "bad").
    let out = step(&["--runz", "3"]);
    assert_eq!(out.status.code(), Some(255), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("--runz"));
    // A metric neither reference has: a clear error, and 255, never "bad".
    let out = step(&["--metric", "nope"]);
    assert_eq!(out.status.code(), Some(255));
    assert!(
        text(&out.stderr).contains("no series matching --metric \"nope\""),
        "{}",
        text(&out.stderr)
    );
}

/// `/bisect` lists a recorded bisection; `/bisect/ID` shows every step of it, in order, with
/// the verdicts and p-values as stored; `/api/v1/bisect/ID` gives the same steps.
#[tokio::test]
async fn bisection_pages_show_each_step() {
    let t = crate::common::app().await;
    let store = store::Store::from_sqlite_pool(t.pool.clone());
    let step =
        |commit: &'static str, verdict: &'static str, median: f64, p_good: f64| store::NewStep {
            commit,
            build_label: commit,
            machine: "<b>rig</b>",
            benchmark: "hackbench",
            series: "time",
            good_ref: "good.txt",
            bad_ref: "bad.txt",
            runs: 5,
            samples: 5,
            median: Some(median),
            good_median: Some(10.0),
            bad_median: Some(10.5),
            p_good: Some(p_good),
            p_bad: Some(0.0079),
            level: Some(0.0083),
            verdict,
            run_id: None,
        };
    let first = store
        .insert_bisect_step(&step("aaaaaaaaaaaaaaaa", "bad", 10.49, 0.0079))
        .await
        .unwrap();
    store
        .insert_bisect_step(&step("bbbbbbbbbbbbbbbb", "good", 10.01, 0.69))
        .await
        .unwrap();
    let list = t.page("/bisect").await;
    assert!(
        list.contains(&format!("href=\"/bisect/{first}\"")),
        "{list}"
    );
    assert!(list.contains("&#60;b&#62;rig&#60;/b&#62;"), "{list}");
    let page = t.page(&format!("/bisect/{first}")).await;
    let a = page.find("aaaaaaaaaaaa").expect("first step");
    let b = page.find("bbbbbbbbbbbb").expect("second step");
    assert!(a < b, "steps out of order");
    assert!(page.contains("data-verdict=\"bad\"") && page.contains("data-verdict=\"good\""));
    assert!(page.contains("10.49") && page.contains("0.69"), "{page}");
    let json = t.get(&format!("/api/v1/bisect/{first}")).await.json();
    assert_eq!(json["steps"].as_array().unwrap().len(), 2);
    assert_eq!(json["steps"][1]["verdict"], "good");
    assert_eq!(t.get("/bisect/999999").await.status, 404);
    assert_eq!(t.get("/bisect/x").await.status, 400);
}
