//! Uploads over real sockets: slow and trickling clients, chunked bodies, 16 uploaders.

use super::*;

#[tokio::test]
async fn slow_client_gets_408_and_the_server_keeps_serving() {
    let env = env().await;
    let addr = spawn_server(
        env.pool.clone(),
        ServeArgs {
            request_timeout_secs: 1,
            ..ServeArgs::default()
        },
    )
    .await;
    let body = with_files(Form::meta(), &trace_stat_set(1)).finish();
    // Headers and a tenth of the body, then silence.
    let head = format!(
        "POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: {}\r\nContent-Type: {}\r\nContent-Length: {}\r\n\r\n{}",
        env.bearer(),
        content_type(),
        body.len(),
        String::from_utf8_lossy(&body[..body.len() / 10])
    );
    let t = Instant::now();
    let resp = raw_request(addr, &head, None).await;
    assert!(resp.starts_with("HTTP/1.1 408"), "{}", first_line(&resp));
    // The answer comes from the 1 s request timeout: not before it, and well before the
    // 10 s that raw_request would wait for a server that never answers.
    let waited = t.elapsed();
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(5),
        "answered after {waited:?}"
    );
    env.assert_empty().await;
    healthz(&reqwest::Client::new(), addr).await;
}

/// An upload refused on its headers (an unknown token) whose body comes in pieces, as a client
/// streaming its files sends it: the server reads the short body to its end before answering,
/// so the client can write all of it and then read the reason. Answered at once instead, the
/// client's second write met a closed connection (a broken pipe, which the upload command
/// retried as a network error).
#[tokio::test]
async fn a_refused_upload_sent_in_two_writes_gets_its_reason() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let env = env().await;
    let addr = spawn_server(env.pool.clone(), ServeArgs::default()).await;
    let body = with_files(Form::meta(), &trace_stat_set(1)).finish();
    let head = format!(
        "POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        "0".repeat(64),
        content_type(),
        body.len(),
    );
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(head.as_bytes()).await.unwrap();
    // The body in two writes with pauses, as a client streaming its files' parts sends it.
    let (first, second) = body.split_at(body.len() / 2);
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut wrote = s.write_all(first).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    if wrote.is_ok() {
        wrote = s.write_all(second).await;
    }
    let mut out = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), s.read_to_end(&mut out)).await;
    let resp = String::from_utf8_lossy(&out);
    assert!(wrote.is_ok(), "writing the body: {wrote:?}");
    assert!(
        matches!(read, Ok(Ok(_))),
        "reading the answer: {read:?} after {:?}",
        first_line(&resp)
    );
    assert!(resp.starts_with("HTTP/1.1 401"), "{}", first_line(&resp));
    assert!(resp.contains("unknown token"), "{resp}");
    env.assert_empty().await;
}

#[tokio::test]
async fn a_client_trickling_its_headers_is_cut_off() {
    let env = env().await;
    let addr = spawn_server(
        env.pool.clone(),
        ServeArgs {
            header_timeout_secs: 1,
            ..ServeArgs::default()
        },
    )
    .await;
    // Half a request line and a header, then silence: the connection must not stay open.
    let t = Instant::now();
    let resp = raw_request(
        addr,
        "POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nAuthor",
        None,
    )
    .await;
    let waited = t.elapsed();
    assert!(
        waited < Duration::from_secs(9),
        "the server kept a header-trickling connection open for {waited:?} ({:?})",
        first_line(&resp)
    );
    assert!(
        resp.is_empty() || resp.starts_with("HTTP/1.1 408"),
        "{}",
        first_line(&resp)
    );
    env.assert_empty().await;
    healthz(&reqwest::Client::new(), addr).await;
}

#[tokio::test]
async fn chunked_oversized_body_over_a_socket_is_413() {
    let env = env().await;
    let addr = spawn_server(env.pool.clone(), small_limit(1)).await;
    let client = reqwest::Client::new();
    // reqwest sends a multipart form with parts from bytes with a Content-Length; a raw
    // chunked request has none, so only the streaming limit can stop it.
    let mut head = format!(
        "POST /api/v1/runs HTTP/1.1\r\nHost: x\r\nAuthorization: {}\r\nContent-Type: {}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        env.bearer(),
        content_type(),
    );
    let body = Form::meta().file("big", &vec![b'7'; 2 << 20]).finish();
    for chunk in body.chunks(256 * 1024) {
        head.push_str(&format!("{:x}\r\n", chunk.len()));
        head.push_str(&String::from_utf8_lossy(chunk));
        head.push_str("\r\n");
    }
    head.push_str("0\r\n\r\n");
    let resp = raw_request(addr, &head, None).await;
    assert!(resp.starts_with("HTTP/1.1 413"), "{}", first_line(&resp));
    assert!(resp.contains("larger than 1 MiB"));
    env.assert_empty().await;
    healthz(&client, addr).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_concurrent_uploaders() {
    // 16 x 200 (and 16 x 10 refused) takes about 15 s in a debug build on two cores.
    let per_client: u64 = 200;
    let env = env().await;
    let addr = spawn_server(env.pool.clone(), ServeArgs::default()).await;
    let client = reqwest::Client::new();
    let t = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..16u64 {
        let client = client.clone();
        let auth = env.bearer();
        tasks.push(tokio::spawn(async move {
            let mut acks = Vec::new();
            for i in 0..per_client {
                // Among them, uploads that fail: a file that does not parse, refused alone
                // while the uploads ready with it are committed together.
                if i % 20 == 7 {
                    let mut bad = function_table(c * 100_000 + i, 3);
                    bad.extend_from_slice(
                        b"  broken_func                           7    -3.0 us     0.25 us     0.001 us\n",
                    );
                    let resp = client
                        .post(format!("http://{addr}/api/v1/runs"))
                        .header("authorization", &auth)
                        .multipart(reqwest_form(&[("function0".into(), bad)], "v1"))
                        .send()
                        .await
                        .unwrap();
                    assert_eq!(resp.status(), reqwest::StatusCode::UNPROCESSABLE_ENTITY);
                    let body: Value = resp.json().await.unwrap();
                    assert_eq!(body["line"], 6, "{body}");
                }
                let file = small_upload(c, i);
                let expected = expected_samples(std::slice::from_ref(&file));
                // Every tenth upload repeats the previous one: 200 with the same run.
                let resend = i % 10 == 9;
                let file = if resend { small_upload(c, i - 1) } else { file };
                let resp = client
                    .post(format!("http://{addr}/api/v1/runs"))
                    .header("authorization", &auth)
                    .multipart(reqwest_form(std::slice::from_ref(&file), "v1"))
                    .send()
                    .await
                    .unwrap();
                let status = resp.status();
                let text = resp.text().await.unwrap();
                assert!(!text.contains("locked"), "{text}");
                let body: Value = serde_json::from_str(&text).unwrap();
                if resend {
                    assert_eq!(status, reqwest::StatusCode::OK, "{text}");
                } else {
                    assert_eq!(status, reqwest::StatusCode::CREATED, "{text}");
                    assert_eq!(body["samples"].as_u64().unwrap(), expected);
                }
                acks.push((
                    resend,
                    body["run_id"].as_i64().unwrap(),
                    body["samples"].as_u64().unwrap(),
                ));
            }
            acks
        }));
    }
    let mut acks = Vec::new();
    for t in tasks {
        acks.extend(t.await.unwrap());
    }
    let elapsed = t.elapsed();
    let created: Vec<_> = acks.iter().filter(|a| !a.0).collect();
    let expected_runs = 16 * (per_client - per_client / 10);
    assert_eq!(created.len() as u64, expected_runs);
    let mut ids: Vec<i64> = created.iter().map(|a| a.1).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(
        ids.len() as u64,
        expected_runs,
        "a run id acknowledged twice"
    );
    // Each resend got the run its original created.
    assert_eq!(env.count("runs").await as u64, expected_runs);
    for (_, id, samples) in &acks {
        assert_eq!(samples_of_run(&env.pool, *id).await as u64, *samples);
    }
    assert_eq!(
        env.samples().await as u64,
        created.iter().map(|a| a.2).sum::<u64>()
    );
    assert_runs_complete(&env.pool).await;
    healthz(&client, addr).await;
    eprintln!(
        "{} uploads by 16 clients in {:.1} s ({:.0}/s)",
        acks.len(),
        elapsed.as_secs_f64(),
        acks.len() as f64 / elapsed.as_secs_f64()
    );
}
