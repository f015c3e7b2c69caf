//! Uploads refused: bad requests, bad files, limits, hostile input.

use super::*;

#[tokio::test]
async fn not_multipart_is_415() {
    let env = env().await;
    let app = env.app();
    let json = Request::post("/api/v1/runs")
        .header("authorization", env.bearer())
        .header("content-type", "application/json")
        .body(Body::from(r#"{"build":"v1"}"#))
        .unwrap();
    assert_error(
        &call(&app, json).await,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "multipart/form-data",
    );
    let none = Request::post("/api/v1/runs")
        .header("authorization", env.bearer())
        .body(Body::from("real 0m1.000s"))
        .unwrap();
    assert_error(
        &call(&app, none).await,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "missing",
    );
    let form = Request::post("/api/v1/runs")
        .header("authorization", env.bearer())
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Body::from("build=v1&machine=m"))
        .unwrap();
    assert_error(
        &call(&app, form).await,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "x-www-form-urlencoded",
    );
    let body = with_files(Form::meta(), &trace_stat_set(1)).finish();
    let brotli = post(Some(&env.bearer()), body.clone())
        .header("content-encoding", "br")
        .body(Body::from(body))
        .unwrap();
    assert_error(
        &call(&app, brotli).await,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "Content-Encoding",
    );
    let no_boundary = Request::post("/api/v1/runs")
        .header("authorization", env.bearer())
        .header("content-type", "multipart/form-data")
        .body(Body::from("x"))
        .unwrap();
    assert_error(
        &call(&app, no_boundary).await,
        StatusCode::BAD_REQUEST,
        "multipart",
    );
    env.assert_empty().await;
    assert_healthy(&app).await;
}

#[tokio::test]
async fn missing_or_wrong_metadata_is_400() {
    let env = env().await;
    let app = env.app();
    let auth = env.bearer();
    let files = trace_stat_set(1);
    let got = upload(
        &app,
        Some(&auth),
        with_files(Form::new().field("machine", "m"), &files),
    )
    .await;
    assert_error(
        &got,
        StatusCode::BAD_REQUEST,
        "missing metadata: build, benchmark",
    );
    assert_error(
        &upload(&app, Some(&auth), Form::meta()).await,
        StatusCode::BAD_REQUEST,
        "no files",
    );
    assert_error(
        &upload(
            &app,
            Some(&auth),
            with_files(Form::meta().field("machne", "x"), &files),
        )
        .await,
        StatusCode::BAD_REQUEST,
        "unknown field \"machne\"",
    );
    assert_error(
        &upload(
            &app,
            Some(&auth),
            with_files(Form::meta().field("build", "v2"), &files),
        )
        .await,
        StatusCode::BAD_REQUEST,
        "\"build\" is given twice",
    );
    assert_error(
        &upload(
            &app,
            Some(&auth),
            with_files(
                Form::meta().field("param.a", "1").field("param", "a=2"),
                &files,
            ),
        )
        .await,
        StatusCode::BAD_REQUEST,
        "given twice",
    );
    assert_error(
        &upload(
            &app,
            Some(&auth),
            with_files(Form::meta().field("param", "novalue"), &files),
        )
        .await,
        StatusCode::BAD_REQUEST,
        "KEY=VALUE",
    );
    assert_error(
        &upload(
            &app,
            Some(&auth),
            with_files(Form::meta().field("format", "nope"), &files),
        )
        .await,
        StatusCode::BAD_REQUEST,
        "unknown format \"nope\"",
    );
    assert_error(
        &upload(
            &app,
            Some(&auth),
            with_files(Form::meta().field("block", "after"), &files),
        )
        .await,
        StatusCode::BAD_REQUEST,
        "no block labelled \"after\"",
    );
    let bad_utf8 = Form::meta().part(
        "Content-Disposition: form-data; name=\"commit\"",
        &[0xff, 0xfe, 0x41],
    );
    assert_error(
        &upload(&app, Some(&auth), with_files(bad_utf8, &files)).await,
        StatusCode::BAD_REQUEST,
        "not UTF-8",
    );
    let truncated = {
        let mut b = with_files(Form::meta(), &files).finish();
        b.truncate(b.len() / 2);
        b
    };
    let req = post(Some(&auth), truncated.clone())
        .body(Body::from(truncated))
        .unwrap();
    assert_error(&call(&app, req).await, StatusCode::BAD_REQUEST, "multipart");
    env.assert_empty().await;
    assert_healthy(&app).await;
}

#[tokio::test]
async fn unparseable_file_is_422_with_file_and_line_and_stores_nothing() {
    let env = env().await;
    let app = env.app();
    let mut bad = function_table(9, 3);
    bad.extend_from_slice(
        b"  broken_func                           7    -3.0 us     0.25 us     0.001 us\n",
    );
    let files = vec![
        ("trace_stat/function0".to_string(), function_table(1, 20)),
        ("trace_stat/function1".to_string(), bad),
    ];
    let got = upload(&app, Some(&env.bearer()), with_files(Form::meta(), &files)).await;
    assert_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "not negative");
    assert_eq!(got.1["file"], "trace_stat/function1");
    assert_eq!(got.1["line"], 6);
    assert_eq!(got.1["error"], "unprocessable input");
    // The first file parsed and was written inside the transaction: all of it rolled back.
    env.assert_empty().await;

    let got = upload(
        &app,
        Some(&env.bearer()),
        Form::meta().file("notes.txt", b"nothing to see here\njust prose\n"),
    )
    .await;
    assert_eq!(got.0, StatusCode::UNPROCESSABLE_ENTITY, "{}", got.1);
    assert_eq!(got.1["file"], "notes.txt");
    let got = upload(
        &app,
        Some(&env.bearer()),
        Form::meta().file("blob.bin", b"\x7fELF\x02\x01\x01\x00\x00\x00"),
    )
    .await;
    assert_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "binary");
    let got = upload(&app, Some(&env.bearer()), Form::meta().file("empty", b"")).await;
    assert_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "empty");
    env.assert_empty().await;
    assert_healthy(&app).await;
}

#[tokio::test]
async fn oversized_upload_is_413() {
    let env = env().await;
    let app = env.app_with(small_limit(1));
    let big = vec![b'1'; 1_200_000];
    // With Content-Length: refused before the body is read.
    let got = upload(&app, Some(&env.bearer()), Form::meta().file("big", &big)).await;
    assert_error(&got, StatusCode::PAYLOAD_TOO_LARGE, "larger than 1 MiB");
    // Without Content-Length: refused when the body passes the limit.
    let body = Form::meta().file("big", &big).finish();
    let req = Request::post("/api/v1/runs")
        .header("content-type", content_type())
        .header("authorization", env.bearer())
        .body(Body::from(body))
        .unwrap();
    assert_error(
        &call(&app, req).await,
        StatusCode::PAYLOAD_TOO_LARGE,
        "larger than 1 MiB",
    );
    env.assert_empty().await;
    // Under the limit, the same route takes more than axum's 2 MB default.
    let app = env.app_with(small_limit(8));
    let mut lines = String::new();
    for i in 0..500_000 {
        lines.push_str(&format!("{}.{:03}\n", i % 97, i % 1000));
    }
    assert!(lines.len() > 3 << 20);
    let (status, body) = upload(
        &app,
        Some(&env.bearer()),
        Form::meta()
            .field("format", "samples")
            .file("values.txt", lines.as_bytes()),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["samples"], 500_000);
    assert_healthy(&app).await;
}

#[tokio::test]
async fn gzip_files_are_accepted_and_stored_as_received() {
    let env = env().await;
    let app = env.app();
    let plain = trace_stat_set(5);
    let expected = expected_samples(&plain);
    let gz0 = gzip(&plain[0].1);
    let gz1 = gzip(&plain[1].1);
    let form = Form::meta()
        // By name.
        .file("trace_stat/function0.gz", &gz0)
        // By the part's Content-Encoding.
        .part(
            "Content-Disposition: form-data; name=\"file\"; filename=\"trace_stat/function1\"\r\nContent-Encoding: gzip",
            &gz1,
        )
        .file("trace_stat/function2", &plain[2].1)
        .file("trace_stat/function3", &plain[3].1);
    let (status, body) = upload(&app, Some(&env.bearer()), form).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["samples"].as_u64().unwrap(), expected);
    let run_id = body["run_id"].as_i64().unwrap();
    let stored: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT ra.file_name, a.sha256, a.size FROM run_artifacts ra JOIN artifacts a ON a.id = ra.artifact_id \
         WHERE ra.run_id = ? ORDER BY ra.seq",
    )
    .bind(run_id)
    .fetch_all(&env.pool)
    .await
    .unwrap();
    assert_eq!(stored[0].0, "trace_stat/function0.gz");
    assert_eq!(stored[0].1, hex::encode(Sha256::digest(&gz0)));
    assert_eq!(stored[0].2, gz0.len() as i64);
    assert_eq!(stored[1].1, hex::encode(Sha256::digest(&gz1)));

    // The whole request body gzip-encoded.
    let other = trace_stat_set(6);
    let body = gzip(&with_files(Form::meta(), &other).finish());
    let req = post(Some(&env.bearer()), body.clone())
        .header("content-encoding", "gzip")
        .body(Body::from(body))
        .unwrap();
    let (status, json) = call(&app, req).await;
    assert_eq!(status, StatusCode::CREATED, "{json}");
    assert_eq!(json["samples"].as_u64().unwrap(), expected_samples(&other));

    // Declared gzip but plain, or gzip that is corrupt: 422 naming the file.
    let got = upload(
        &app,
        Some(&env.bearer()),
        Form::meta().file("function0.gz", &plain[0].1),
    )
    .await;
    assert_error(&got, StatusCode::UNPROCESSABLE_ENTITY, "not gzip data");
    assert_eq!(got.1["file"], "function0.gz");
    let mut corrupt = gzip(&plain[0].1);
    let mid = corrupt.len() / 2;
    corrupt.truncate(mid);
    let got = upload(
        &app,
        Some(&env.bearer()),
        Form::meta().file("function0.gz", &corrupt),
    )
    .await;
    assert_error(
        &got,
        StatusCode::UNPROCESSABLE_ENTITY,
        "not valid gzip data",
    );
    assert_eq!(env.count("runs").await, 2);
    assert_healthy(&app).await;
}

/// 1 GiB of zeros as concatenated gzip members (a valid gzip file, as `cat a.gz b.gz` makes):
/// about 1 MiB on the wire.
fn gzip_bomb() -> Vec<u8> {
    let member = gzip(&vec![0u8; 1 << 20]);
    let mut bomb = Vec::with_capacity(member.len() * 1024);
    for _ in 0..1024 {
        bomb.extend_from_slice(&member);
    }
    bomb
}

#[tokio::test]
async fn gzip_bomb_is_413() {
    let env = env().await;
    let app = env.app_with(small_limit(32));
    let bomb = gzip_bomb();
    assert!(bomb.len() < 4 << 20, "{} bytes", bomb.len());
    let check = {
        // The bomb really is 1 GiB of zeros: decompress its first member.
        let mut d = flate2::read::GzDecoder::new(&bomb[..]);
        let mut out = Vec::new();
        d.read_to_end(&mut out).unwrap();
        out.len()
    };
    assert_eq!(check, 1 << 20);
    let t = Instant::now();
    let got = upload(
        &app,
        Some(&env.bearer()),
        Form::meta().file("zeros.gz", &bomb),
    )
    .await;
    assert_error(
        &got,
        StatusCode::PAYLOAD_TOO_LARGE,
        "decompress to more than 32 MiB",
    );
    // As the whole request body.
    let body = gzip(&Form::meta().file("zeros", &vec![0u8; 40 << 20]).finish());
    let req = post(Some(&env.bearer()), body.clone())
        .header("content-encoding", "gzip")
        .body(Body::from(body))
        .unwrap();
    assert_error(
        &call(&app, req).await,
        StatusCode::PAYLOAD_TOO_LARGE,
        "decompresses to more than 32 MiB",
    );
    assert!(t.elapsed() < Duration::from_secs(60));
    env.assert_empty().await;
    assert_healthy(&app).await;
}

#[tokio::test]
async fn thousands_of_files_or_fields_are_413() {
    let env = env().await;
    let app = env.app();
    let mut form = Form::meta();
    for i in 0..1001 {
        form = form.file(&format!("f{i}"), b"1\n");
    }
    let got = upload(&app, Some(&env.bearer()), form).await;
    assert_error(&got, StatusCode::PAYLOAD_TOO_LARGE, "more than 1000 files");
    let mut form = Form::meta().file("f", b"1\n");
    for i in 0..1001 {
        form = form.field(&format!("param.p{i}"), "x");
    }
    let got = upload(&app, Some(&env.bearer()), form).await;
    assert_error(&got, StatusCode::PAYLOAD_TOO_LARGE, "metadata fields");
    // 1000 files is allowed.
    let mut form = Form::meta().field("format", "samples");
    for i in 0..1000 {
        form = form.file(&format!("f{i}"), format!("{i}\n").as_bytes());
    }
    let (status, body) = upload(&app, Some(&env.bearer()), form).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["samples"], 1000);
    assert_healthy(&app).await;
}

#[tokio::test]
async fn huge_fields_are_refused_with_a_reason() {
    let env = env().await;
    let app = env.app();
    let files = trace_stat_set(1);
    let huge = "x".repeat(100 * 1024);
    let got = upload(
        &app,
        Some(&env.bearer()),
        with_files(
            Form::new()
                .field("build", &huge)
                .field("machine", "m")
                .field("benchmark", "b"),
            &files,
        ),
    )
    .await;
    assert_error(
        &got,
        StatusCode::PAYLOAD_TOO_LARGE,
        "field \"build\" is larger than 64 KiB",
    );
    // Within the field limit but beyond what a label may be.
    let long = "y".repeat(1000);
    let got = upload(
        &app,
        Some(&env.bearer()),
        with_files(
            Form::new()
                .field("build", &long)
                .field("machine", "m")
                .field("benchmark", "b"),
            &files,
        ),
    )
    .await;
    assert_error(&got, StatusCode::BAD_REQUEST, "longer than 256 bytes");
    let got = upload(
        &app,
        Some(&env.bearer()),
        with_files(Form::meta().field("param.k", &"v".repeat(5000)), &files),
    )
    .await;
    assert_error(&got, StatusCode::BAD_REQUEST, "longer than 4096 bytes");
    let got = upload(
        &app,
        Some(&env.bearer()),
        with_files(
            Form::new()
                .field("build", "a\u{1b}[31mred")
                .field("machine", "m")
                .field("benchmark", "b"),
            &files,
        ),
    )
    .await;
    assert_error(&got, StatusCode::BAD_REQUEST, "control characters");
    let config = "C".repeat(17 << 20);
    let got = upload(
        &app,
        Some(&env.bearer()),
        with_files(Form::meta().field("config", &config), &files),
    )
    .await;
    assert_error(
        &got,
        StatusCode::PAYLOAD_TOO_LARGE,
        "field \"config\" is larger than",
    );
    env.assert_empty().await;
    assert_healthy(&app).await;
}

#[tokio::test]
async fn hostile_metadata_is_stored_verbatim() {
    let env = env().await;
    let app = env.app();
    let v = |what: &str| {
        format!("<script>alert('{what}')</script>'); DROP TABLE runs; -- \" OR 1=1 {what}")
    };
    let file_name = "../../etc/passwd<img src=x onerror=alert(1)>'; DELETE FROM samples; --";
    let form = Form::new()
        .field("build", &v("build"))
        .field("commit", &v("commit"))
        .field("kernel_version", &v("kv"))
        .field("config", &v("config"))
        .field("cmdline", &v("cmdline"))
        .field("machine", &v("machine"))
        .field(&format!("machine_fact.{}", "k'); --"), &v("fact"))
        .field("benchmark", &v("bench"))
        .field("param.x<script>", &v("param"))
        .field("format", "trace_stat")
        .file(file_name, &function_table(3, 5));
    let (status, body) = upload(&app, Some(&env.bearer()), form).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let run_id = body["run_id"].as_i64().unwrap();
    let row = sqlx::query(
        "SELECT b.label, b.commit_sha, b.kernel_version, b.config, b.cmdline, m.name, r.benchmark \
         FROM runs r JOIN builds b ON b.id = r.build_id JOIN machines m ON m.id = r.machine_id WHERE r.id = ?",
    )
    .bind(run_id)
    .fetch_one(&env.pool)
    .await
    .unwrap();
    for (i, what) in [
        "build", "commit", "kv", "config", "cmdline", "machine", "bench",
    ]
    .iter()
    .enumerate()
    {
        assert_eq!(row.get::<String, _>(i), v(what));
    }
    let (k, value): (String, String) = sqlx::query_as("SELECT key, value FROM machine_facts")
        .fetch_one(&env.pool)
        .await
        .unwrap();
    assert_eq!((k.as_str(), value), ("k'); --", v("fact")));
    let (k, value): (String, String) =
        sqlx::query_as("SELECT key, value FROM run_params WHERE run_id = ?")
            .bind(run_id)
            .fetch_one(&env.pool)
            .await
            .unwrap();
    assert_eq!((k.as_str(), value), ("x<script>", v("param")));
    let stored_name: String =
        sqlx::query_scalar("SELECT file_name FROM run_artifacts WHERE run_id = ?")
            .bind(run_id)
            .fetch_one(&env.pool)
            .await
            .unwrap();
    assert_eq!(stored_name, file_name);
    assert_eq!(body["formats"][0]["file"], file_name);
    // Every table is still there and whole.
    assert_eq!(env.count("runs").await, 1);
    assert_eq!(env.samples().await, 20);
    assert_runs_complete(&env.pool).await;
    assert_healthy(&app).await;
}

#[tokio::test]
async fn path_traversal_finds_nothing() {
    let env = env().await;
    let app = env.app();
    // A stored run, so that artifact routes have something to serve.
    upload_one(&env, &app).await;
    for path in [
        "/static/../Cargo.toml",
        "/static/%2e%2e/Cargo.toml",
        "/static/..%2fCargo.toml",
        "/static/%2e%2e%2f%2e%2e%2fCargo.toml",
        "/static/../../../../etc/passwd",
        "/static/..%5cCargo.toml",
        "/api/v1/runs/../../Cargo.toml",
        "/api/v1/runs/1/artifacts/..%2f..%2fCargo.toml",
        "/runs/1/artifacts/..%2f..%2fCargo.toml",
        "/runs/1/artifacts/../../../Cargo.toml",
        "/runs/1/artifacts/%2e%2e%2f%2e%2e%2fserver%2fCargo.toml",
        "/runs/1/artifacts/-1",
        "/runs/1/artifacts/99999999999999999999",
        "/runs/..%2f..%2fCargo.toml/artifacts/0",
    ] {
        let resp = app
            .clone()
            .oneshot(Request::get(path).body(Body::empty()).unwrap())
            .await
            .unwrap();
        let status = resp.status();
        let body = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .unwrap();
        let text = String::from_utf8_lossy(&body);
        assert!(status.is_client_error(), "{path}: {status}");
        assert!(
            !text.contains("[workspace") && !text.contains("[package]") && !text.contains("root:"),
            "{path} leaked a file"
        );
    }
    // The same over a real socket, where no client normalises the path first.
    let addr = spawn_server(env.pool.clone(), ServeArgs::default()).await;
    for path in [
        "/static/../Cargo.toml",
        "/static/%2e%2e/%2e%2e/Cargo.toml",
        "/static/../../server/Cargo.toml",
        "/runs/1/artifacts/../../../Cargo.toml",
        "/runs/1/artifacts/..%2f..%2f..%2fCargo.toml",
    ] {
        let resp = raw_request(
            addr,
            &format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"),
            None,
        )
        .await;
        assert!(
            resp.starts_with("HTTP/1.1 4"),
            "{path}: {}",
            first_line(&resp)
        );
        assert!(
            !resp.contains("[package]") && !resp.contains("[workspace"),
            "{path} leaked a file"
        );
    }
    assert_healthy(&app).await;
}
