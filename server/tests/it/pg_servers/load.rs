//! Four `quiescent serve` processes on one PostgreSQL database under concurrent uploads,
//! duplicate uploads spread over them, and one of them killed with SIGKILL mid-stream.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::{Answer, assert_runs_whole, cli, count, form_of, rcuscale_file, start_servers, upload};

const SERVERS: usize = 4;
const CLIENTS: usize = 16;
const PER_CLIENT: usize = 50;
const DUPLICATES: usize = 100;

/// Uploads `make()` until it is not a 503 (the documented answer of a full upload budget,
/// with Retry-After); the answer and the 503s seen on the way.
async fn upload_retrying(
    client: &reqwest::Client,
    base: &str,
    token: &str,
    make: impl Fn() -> reqwest::multipart::Form,
) -> (Answer, usize) {
    let mut busy = 0;
    loop {
        let a = upload(client, base, token, None, make()).await;
        if a.status == 503 && busy < 10 {
            assert!(
                a.retry_after.is_some(),
                "503 without Retry-After: {}",
                a.body
            );
            busy += 1;
            tokio::time::sleep(Duration::from_millis(200)).await;
            continue;
        }
        return (a, busy);
    }
}

/// A `trace_stat` function profile of 4 CPUs and 40 functions each: several times the work of
/// a `time` file, so that a kill lands inside an import now and then. (Each upload also
/// re-analyses the history of every series it adds to, after its import, which is most of its
/// time: more functions would leave few uploads acknowledged before the kill.)
fn profile(seed: u64) -> Vec<(String, Vec<u8>)> {
    (0..4u64)
        .map(|cpu| {
            let mut s = String::from(
                "  Function                               Hit    Time            Avg             s^2\n  --------                               ---    ----            ---             ---\n",
            );
            for r in 0..40u64 {
                let hit = 1000 + (seed * 4 + cpu) * 7 + r * 13;
                let time = hit as f64 * 0.25 + r as f64;
                s.push_str(&format!(
                    "  func_{r:<32} {hit:>8}    {time:.1} us     {:.3} us        0.004 us\n",
                    time / hit as f64
                ));
            }
            (format!("trace_stat/function{cpu}"), s.into_bytes())
        })
        .collect()
}

fn profile_form(seed: u64) -> reqwest::multipart::Form {
    let mut form = reqwest::multipart::Form::new()
        .text("build", "kill")
        .text("machine", "rig-1")
        .text("benchmark", "function-profile");
    for (name, bytes) in profile(seed) {
        form = form.part(
            "file",
            reqwest::multipart::Part::bytes(bytes).file_name(name),
        );
    }
    form
}

fn runs_of(build: &str) -> String {
    format!(
        "SELECT COUNT(*) FROM runs r JOIN builds b ON b.id = r.build_id WHERE b.label = '{build}'"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn four_servers_take_concurrent_and_duplicate_uploads_and_survive_a_killed_peer() {
    let Some(db) = store::testing::fresh_pg_url().await else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let mut servers = start_servers(&db, tmp.path(), SERVERS, &[]);
    eprintln!(
        "{SERVERS} servers started together (migrating one database) in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    let check = store::Store::open(&db).await.unwrap();
    let pool = check.pg_pool().clone();
    let token = quiescent::tokens::create(&check, "rig-load").await.unwrap();
    let bases: Arc<Vec<String>> = Arc::new(servers.iter().map(|s| s.url("")).collect());
    let client = reqwest::Client::new();
    let file = rcuscale_file();

    // The connections to the database while the load runs: each server's pool holds 8 at most,
    // and its history passes' pool 2 (`Store::with_own_connections`).
    let watching = Arc::new(AtomicBool::new(true));
    let watcher = {
        let (pool, watching) = (pool.clone(), watching.clone());
        tokio::spawn(async move {
            let mut most = 0;
            while watching.load(Ordering::Relaxed) {
                let n = count(
                    &pool,
                    "SELECT COUNT(*) FROM pg_stat_activity \
                     WHERE datname = current_database() AND application_name = 'quiescent'",
                )
                .await;
                most = most.max(n);
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            most
        })
    };

    // 16 clients x 50 distinct uploads, each client going round the servers.
    let t = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..CLIENTS {
        let (client, bases, token, file) =
            (client.clone(), bases.clone(), token.clone(), file.clone());
        tasks.push(tokio::spawn(async move {
            let mut got = Vec::new();
            for i in 0..PER_CLIENT {
                let base = &bases[(c + i) % SERVERS];
                let params = [("client", c.to_string()), ("i", i.to_string())];
                let (a, busy) = upload_retrying(&client, base, &token, || {
                    form_of("rcuscale", "load", &params, file.clone())
                })
                .await;
                got.push((c, i, a, busy));
            }
            got
        }));
    }
    let mut acked: HashMap<i64, String> = HashMap::new();
    let mut busy = 0;
    for task in tasks {
        for (c, i, a, b) in task.await.unwrap() {
            busy += b;
            assert_eq!(a.status, 201, "client {c} upload {i}: {}", a.body);
            let before = acked.insert(a.run_id(), format!("client={c}&i={i}"));
            assert!(before.is_none(), "run {} acknowledged twice", a.run_id());
        }
    }
    let took = t.elapsed();
    watching.store(false, Ordering::Relaxed);
    let connections = watcher.await.unwrap();
    // This test's own pool counts too (and holds 8 at most).
    assert!(
        connections <= SERVERS as i64 * (8 + 2) + 8,
        "{connections} connections"
    );
    assert_eq!(acked.len(), CLIENTS * PER_CLIENT);
    let stored: Vec<(i64, String)> = sqlx::query_as(
        "SELECT r.id, r.params_key FROM runs r JOIN builds b ON b.id = r.build_id WHERE b.label = 'load'",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(stored.len(), acked.len(), "runs stored vs acknowledged");
    for (id, key) in &stored {
        assert_eq!(acked.get(id), Some(key), "run {id}");
    }
    let keys: HashSet<&String> = stored.iter().map(|(_, k)| k).collect();
    assert_eq!(keys.len(), stored.len(), "one upload stored twice");
    let listed = cli(tmp.path(), &["runs", "--build", "load", "--db", &db]);
    assert_eq!(listed.lines().count(), acked.len() + 1, "quiescent runs");
    eprintln!(
        "{} uploads by {CLIENTS} clients over {SERVERS} servers in {:.1} s ({:.0}/s), {busy} answered 503 first, \
         {connections} database connections at most",
        acked.len(),
        took.as_secs_f64(),
        acked.len() as f64 / took.as_secs_f64()
    );

    // 100 uploads of one file, all at once, spread over the servers: one run.
    let t = Instant::now();
    let mut tasks = Vec::new();
    for k in 0..DUPLICATES {
        let (client, bases, token, file) =
            (client.clone(), bases.clone(), token.clone(), file.clone());
        tasks.push(tokio::spawn(async move {
            upload_retrying(&client, &bases[k % SERVERS], &token, || {
                form_of("rcuscale", "dup", &[], file.clone())
            })
            .await
        }));
    }
    let mut created = 0;
    let mut ids = HashSet::new();
    for task in tasks {
        let (a, _) = task.await.unwrap();
        assert!(
            a.status == 201 || a.status == 200,
            "{}: {}",
            a.status,
            a.body
        );
        created += usize::from(a.status == 201);
        ids.insert(a.run_id());
    }
    assert_eq!((created, ids.len()), (1, 1), "{ids:?}");
    assert_eq!(count(&pool, &runs_of("dup")).await, 1);
    eprintln!(
        "{DUPLICATES} duplicate uploads over {SERVERS} servers in {:.1} s: one run",
        t.elapsed().as_secs_f64()
    );

    // SIGKILL one server while uploads to it are in flight; the others keep serving.
    let stop = Arc::new(AtomicBool::new(false));
    let killed = Arc::new(AtomicBool::new(false));
    let victim_acks = Arc::new(Mutex::new(Vec::<(i64, u64)>::new()));
    let mut victims = Vec::new();
    for c in 0..4u64 {
        let (client, base, token, acks, stop) = (
            client.clone(),
            bases[0].clone(),
            token.clone(),
            victim_acks.clone(),
            stop.clone(),
        );
        victims.push(tokio::spawn(async move {
            for i in 0..100_000u64 {
                if stop.load(Ordering::Relaxed) {
                    return 0;
                }
                let sent = client
                    .post(format!("{base}/api/v1/runs"))
                    .bearer_auth(&token)
                    .multipart(profile_form(c * 1_000_000 + i))
                    .send()
                    .await;
                let Ok(resp) = sent else { return 1 };
                let status = resp.status().as_u16();
                let Ok(text) = resp.text().await else {
                    return 1;
                };
                assert_eq!(status, 201, "{text}");
                let body: serde_json::Value = serde_json::from_str(&text).unwrap();
                acks.lock().unwrap().push((
                    body["run_id"].as_i64().unwrap(),
                    body["samples"].as_u64().unwrap(),
                ));
            }
            0
        }));
    }
    let mut survivors = Vec::new();
    for c in 0..6usize {
        let (client, base, token, file, stop, killed) = (
            client.clone(),
            bases[1 + c % 3].clone(),
            token.clone(),
            file.clone(),
            stop.clone(),
            killed.clone(),
        );
        survivors.push(tokio::spawn(async move {
            let (mut before, mut after) = (0, 0);
            for i in 0.. {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let was_killed = killed.load(Ordering::Relaxed);
                let params = [("survivor", c.to_string()), ("i", i.to_string())];
                let (a, _) = upload_retrying(&client, &base, &token, || {
                    form_of("rcuscale", "after", &params, file.clone())
                })
                .await;
                assert_eq!(a.status, 201, "{base}: {}", a.body);
                if was_killed { after += 1 } else { before += 1 }
            }
            (before, after)
        }));
    }
    let t = Instant::now();
    while victim_acks.lock().unwrap().len() < 12 && t.elapsed() < Duration::from_secs(20) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let victim_spool = servers[0].spool(tmp.path());
    assert!(victim_spool.is_dir(), "{}", victim_spool.display());
    assert!(servers[0].kill9(), "the server died before the kill");
    killed.store(true, Ordering::Relaxed);
    let killed_at = Instant::now();
    // The victim's uploaders see their connections cut.
    let mut cut = 0;
    for v in victims {
        cut += v.await.unwrap();
    }
    // The survivors keep taking uploads for a while after the kill.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    stop.store(true, Ordering::Relaxed);
    let (mut before, mut after) = (0, 0);
    for s in survivors {
        let (b, a) = s.await.unwrap();
        before += b;
        after += a;
    }
    assert_eq!(cut, 4, "every uploader to the killed server was cut off");
    assert!(after > 0, "no upload to the other servers after the kill");
    for base in &bases[1..] {
        let r = client.get(format!("{base}/healthz")).send().await.unwrap();
        assert_eq!(r.status(), 200);
        assert_eq!(r.text().await.unwrap(), "ok");
        // And each takes an upload at once: no lock was left behind by the dead server.
        let started = Instant::now();
        let params = [("last", base.clone())];
        let a = upload(
            &client,
            base,
            &token,
            None,
            form_of("rcuscale", "after", &params, file.clone()),
        )
        .await;
        assert_eq!(a.status, 201, "{}", a.body);
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "an upload after the kill took {:?}",
            started.elapsed()
        );
    }
    let acks = victim_acks.lock().unwrap().clone();
    assert!(
        acks.len() >= 4,
        "only {} uploads before the kill",
        acks.len()
    );
    assert_runs_whole(&pool).await;
    let samples = acks[0].1;
    for (id, n) in &acks {
        assert_eq!(*n, samples, "run {id} acknowledged another sample count");
        let stored = count(
            &pool,
            &format!("SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM series WHERE run_id = {id}"),
        )
        .await;
        assert_eq!(stored as u64, *n, "run {id}");
    }
    let kill_runs = count(&pool, &runs_of("kill")).await as usize;
    // A run may have committed with its answer lost in the kill: at most one per uploader.
    assert!(
        kill_runs >= acks.len() && kill_runs <= acks.len() + 4,
        "{kill_runs} runs, {} acknowledged",
        acks.len()
    );
    let partial = count(
        &pool,
        &format!(
            "SELECT COUNT(*) FROM runs r JOIN builds b ON b.id = r.build_id WHERE b.label = 'kill' \
             AND (SELECT SUM(n) FROM series s WHERE s.run_id = r.id) != {samples}"
        ),
    )
    .await;
    assert_eq!(partial, 0, "runs with part of their samples");
    eprintln!(
        "SIGKILL: {} uploads acknowledged by the killed server, {cut} cut, {kill_runs} stored; \
         the others took {before} uploads before and {after} in the {:.1} s after",
        acks.len(),
        killed_at.elapsed().as_secs_f64()
    );
    // The killed server could not remove its spool directory: the next server to start does,
    // and leaves the running servers' alone.
    assert!(victim_spool.is_dir());
    let next = start_servers(&db, tmp.path(), 1, &[]);
    assert!(
        !victim_spool.exists(),
        "{} is still there",
        victim_spool.display()
    );
    for s in servers[1..].iter().chain(&next) {
        assert!(s.spool(tmp.path()).is_dir());
    }
    drop(servers);
}
