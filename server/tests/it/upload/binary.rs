//! The binary: token CLI, upload CLI with retries, SIGKILL mid-upload.

use super::*;

fn bin() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_quiescent"));
    c.env("QUIESCENT_LOG", "warn")
        .env_remove("QUIESCENT_TOKEN")
        .env_remove("QUIESCENT_DB");
    c
}

fn create_token_with_cli(db: &str, name: &str) -> String {
    let out = bin()
        .args(["token", "create", name, "--db", db])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let token = String::from_utf8(out.stdout).unwrap().trim().to_string();
    assert_eq!(token.len(), 64, "{token}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("shown only now"));
    token
}

/// Starts `quiescent serve` on an ephemeral port; its log goes to `log` (at trace level) when
/// given.
fn start_server(db: &str, log: Option<&Path>) -> (std::process::Child, SocketAddr) {
    let mut cmd = bin();
    cmd.args(["serve", "--db", db, "--bind", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped());
    match log {
        Some(p) => {
            cmd.env("QUIESCENT_LOG", "trace")
                .stderr(std::fs::File::create(p).unwrap());
        }
        None => {
            cmd.stderr(std::process::Stdio::null());
        }
    }
    let mut child = cmd.spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .split("http://")
        .nth(1)
        .and_then(|s| s.split('/').next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .parse()
        .unwrap();
    (child, addr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn killed_server_keeps_every_acknowledged_upload_and_no_partial_run() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_path(dir.path());
    let token = create_token_with_cli(&db, "rig-crash");
    let (mut child, addr) = start_server(&db, None);
    let client = reqwest::Client::new();
    healthz(&client, addr).await;

    let acked = std::sync::Arc::new(std::sync::Mutex::new(Vec::<(i64, u64)>::new()));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let mut tasks = Vec::new();
    for c in 0..8u64 {
        let (client, token, acked, stop) =
            (client.clone(), token.clone(), acked.clone(), stop.clone());
        tasks.push(tokio::spawn(async move {
            let mut errors = 0;
            for i in 0..10_000u64 {
                if stop.load(std::sync::atomic::Ordering::Relaxed) {
                    break;
                }
                // A 4-CPU set, big enough that a kill lands inside transactions.
                let files = trace_stat_set(c * 1_000_000 + i);
                let resp = client
                    .post(format!("http://{addr}/api/v1/runs"))
                    .bearer_auth(&token)
                    .multipart(reqwest_form(&files, "crash"))
                    .send()
                    .await;
                let Ok(resp) = resp else {
                    errors += 1;
                    break;
                };
                let status = resp.status();
                let Ok(body) = resp.json::<Value>().await else {
                    errors += 1;
                    break;
                };
                assert_eq!(status, reqwest::StatusCode::CREATED, "{body}");
                acked.lock().unwrap().push((
                    body["run_id"].as_i64().unwrap(),
                    body["samples"].as_u64().unwrap(),
                ));
            }
            errors
        }));
    }
    // Let some uploads land, then SIGKILL the server while the others are in flight.
    let t = Instant::now();
    while acked.lock().unwrap().len() < 40 && t.elapsed() < Duration::from_secs(30) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut errors = 0;
    for t in tasks {
        errors += t.await.unwrap();
    }
    let acked = acked.lock().unwrap().clone();
    assert!(
        acked.len() >= 40,
        "only {} uploads before the kill",
        acked.len()
    );
    assert!(errors > 0, "no upload was cut by the kill");

    // Restart on the same file: it opens, and every acknowledged upload is there, whole.
    let log = dir.path().join("serve.log");
    let (mut child, addr) = start_server(&db, Some(&log));
    healthz(&client, addr).await;
    let pool = store::Store::open(&db).await.unwrap().sqlite_pool().clone();
    assert_runs_complete(&pool).await;
    for (id, samples) in &acked {
        assert_eq!(
            samples_of_run(&pool, *id).await as u64,
            *samples,
            "run {id}"
        );
    }
    let runs: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM runs")
        .fetch_one(&pool)
        .await
        .unwrap();
    // A run may have committed with its response lost in the kill: at most one per uploader.
    assert!(
        runs as usize >= acked.len() && runs as usize <= acked.len() + 8,
        "{runs} runs, {} acknowledged",
        acked.len()
    );
    let expected = expected_samples(&trace_stat_set(0));
    let wrong: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM runs r WHERE (SELECT SUM(n) FROM series WHERE run_id = r.id) != ?",
    )
    .bind(expected as i64)
    .fetch_one(&pool)
    .await
    .unwrap();
    assert_eq!(wrong, 0, "runs with a partial set of samples");
    eprintln!(
        "{} uploads acknowledged before SIGKILL, {errors} cut, {runs} runs stored",
        acked.len()
    );
    // And it takes uploads again.
    let resp = client
        .post(format!("http://{addr}/api/v1/runs"))
        .bearer_auth(&token)
        .multipart(reqwest_form(&trace_stat_set(99_999_999), "after-restart"))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), reqwest::StatusCode::CREATED);
    child.kill().unwrap();
    child.wait().unwrap();
    // Even at trace level, the log names the rig but never shows its token.
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(
        log.contains("upload stored") && log.contains("rig-crash"),
        "{log}"
    );
    assert!(!log.contains(&token), "the token is in the log");
    assert!(
        !log.to_ascii_lowercase().contains("authorization"),
        "a header is in the log"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upload_cli_sends_retries_and_reports() {
    let env = env().await;
    let addr = spawn_server(env.pool.clone(), ServeArgs::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let ts = dir.path().join("trace_stat");
    std::fs::create_dir(&ts).unwrap();
    let files = trace_stat_set(7);
    for (name, bytes) in &files {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    let config = dir.path().join("config");
    std::fs::write(&config, "CONFIG_PREEMPT_RCU=y\n").unwrap();
    let server = format!("http://{addr}");
    let run = move |extra: Vec<String>| {
        let mut c = bin();
        c.args([
            "upload",
            "--build",
            "v6.9",
            "--machine",
            "rig-1",
            "--benchmark",
            "function-profile",
        ])
        .args(["--config", config.to_str().unwrap(), "--param", "load=idle"])
        .args(extra);
        c
    };
    let token = env.token.clone();
    let ts_arg = ts.display().to_string();
    let (out, out2) = {
        let (run, server, token, ts_arg) =
            (run.clone(), server.clone(), token.clone(), ts_arg.clone());
        tokio::task::spawn_blocking(move || {
            let args = vec!["--server".into(), server, ts_arg];
            let out = run(args.clone())
                .env("QUIESCENT_TOKEN", &token)
                .output()
                .unwrap();
            let out2 = run(args).env("QUIESCENT_TOKEN", &token).output().unwrap();
            (out, out2)
        })
        .await
        .unwrap()
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("trace_stat/function3: trace_stat"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("{} samples", expected_samples(&files))),
        "{stdout}"
    );
    assert!(stdout.contains(&format!("http://{addr}/runs/")), "{stdout}");
    assert!(!stdout.contains(&env.token));
    let stdout2 = String::from_utf8_lossy(&out2.stdout);
    assert!(out2.status.success());
    assert!(stdout2.contains("already stored as run"), "{stdout2}");
    assert_eq!(env.count("runs").await, 1);
    assert_eq!(env.count("idempotency_keys").await, 1);
    let config_stored: String = sqlx::query_scalar("SELECT config FROM builds")
        .fetch_one(&env.pool)
        .await
        .unwrap();
    assert_eq!(config_stored, "CONFIG_PREEMPT_RCU=y\n");

    // A bad token fails at once with the server's reason, without retrying.
    let out = {
        let (run, server, ts_arg) = (run.clone(), server.clone(), ts_arg.clone());
        tokio::task::spawn_blocking(move || {
            let t = Instant::now();
            let out = run(vec![
                "--server".into(),
                server,
                "--token".into(),
                "0".repeat(64),
                ts_arg,
            ])
            .output()
            .unwrap();
            (out, t.elapsed())
        })
        .await
        .unwrap()
    };
    let stderr = String::from_utf8_lossy(&out.0.stderr);
    assert!(!out.0.status.success());
    assert!(
        stderr.contains("401") && stderr.contains("unknown token"),
        "{stderr}"
    );
    assert!(!stderr.contains("retrying"), "{stderr}");
    assert!(out.1 < Duration::from_secs(30));

    // Nothing listening: retried, then a clear message.
    let free = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let out = {
        let (run, token, ts_arg) = (run.clone(), token.clone(), ts_arg.clone());
        tokio::task::spawn_blocking(move || {
            run(vec![
                "--server".into(),
                format!("http://{free}"),
                "--retries".into(),
                "1".into(),
                ts_arg,
            ])
            .env("QUIESCENT_TOKEN", &token)
            .output()
            .unwrap()
        })
        .await
        .unwrap()
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("attempt 1 failed") && stderr.contains("retrying"),
        "{stderr}"
    );
    assert!(stderr.contains("failed after 2 attempts"), "{stderr}");

    // A server that comes up while the client backs off: the retry stores the run once. The
    // port is held all along (no race for it): the first connections are closed unanswered,
    // then the same listener is handed to the server.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let late = listener.local_addr().unwrap();
    let child = {
        let (run, token) = (run.clone(), token.clone());
        let dir = dir.path().join("trace_stat/function0");
        tokio::task::spawn_blocking(move || {
            run(vec![
                "--server".into(),
                format!("http://{late}"),
                "--param".into(),
                "late=yes".into(),
                dir.display().to_string(),
            ])
            .env("QUIESCENT_TOKEN", &token)
            .output()
            .unwrap()
        })
    };
    // Two connections closed unanswered: the client's look at /api/v1/limits (a server that
    // cannot say is not checked) and its first upload attempt.
    for _ in 0..2 {
        let (conn, _) = tokio::time::timeout(Duration::from_secs(60), listener.accept())
            .await
            .expect("the client never connected")
            .unwrap();
        drop(conn);
    }
    let pool = env.pool.clone();
    tokio::spawn(async move {
        quiescent::web::serve_on(
            store::Store::from_sqlite_pool(pool),
            ServeArgs::default(),
            listener,
            |_| {},
        )
        .await
        .unwrap();
    });
    let out = child.await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("attempt 1 failed") && stderr.contains("retrying"),
        "{stderr}"
    );
    assert!(stdout.contains("stored run"), "{stdout}");
    assert_eq!(env.count("runs").await, 2);
}

#[test]
fn token_cli_lists_and_revokes() {
    let dir = tempfile::tempdir().unwrap();
    let db = db_path(dir.path());
    let token = create_token_with_cli(&db, "rig-a");
    let out = bin()
        .args(["token", "create", "rig-a", "--db", &db])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("already exists"));
    let out = bin().args(["token", "list", "--db", &db]).output().unwrap();
    let list = String::from_utf8_lossy(&out.stdout);
    assert!(list.contains("rig-a") && list.contains("active"), "{list}");
    assert!(!list.contains(&token), "the list shows a token");
    let out = bin()
        .args(["token", "revoke", "rig-a", "--db", &db])
        .output()
        .unwrap();
    assert!(out.status.success());
    let out = bin().args(["token", "list", "--db", &db]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("revoked"));
    let out = bin()
        .args(["token", "revoke", "nobody", "--db", &db])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no token named"));
}
