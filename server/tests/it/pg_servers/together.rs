//! Two servers in this process, each with its own store opened on one PostgreSQL database,
//! driven over HTTP: whatever goes through one is what the other answers.

use std::time::{Duration, Instant};

use quiescent::config::ServeArgs;

use super::{Answer, cli, count, form, get_ok, time_file, upload};

/// Serves a store of its own on `db`, on an ephemeral port; its base URL.
async fn serve(db: &str) -> String {
    let store = store::Store::open(db).await.expect("opening the database");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        quiescent::web::serve_on(store, ServeArgs::default(), listener, move |addr| {
            let _ = tx.send(addr);
        })
        .await
        .unwrap();
    });
    format!("http://{}", rx.await.unwrap())
}

/// The time fixture with `n` blank lines more: other bytes, the same series.
fn variant(n: usize) -> Vec<u8> {
    let mut f = time_file();
    f.extend(std::iter::repeat_n(b'\n', n));
    f
}

fn created(a: &Answer) -> i64 {
    assert_eq!(a.status, 201, "{}", a.body);
    a.run_id()
}

fn compare_uri(base: &str) -> String {
    format!("{base}/compare?base=base&head=head&benchmark=time")
}

/// Run ids a comparison page links to.
fn linked_runs(html: &str) -> Vec<i64> {
    let mut ids: Vec<i64> = html
        .split("<a href=\"/runs/")
        .skip(1)
        .filter_map(|s| s.split('"').next()?.parse().ok())
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_servers_on_one_database_answer_as_one() {
    let Some(db) = store::testing::fresh_pg_url().await else {
        return;
    };
    let (a, b) = (serve(&db).await, serve(&db).await);
    let check = store::Store::open(&db).await.unwrap();
    let pool = check.pg_pool().clone();
    let token = quiescent::tokens::create(&check, "rig-1").await.unwrap();
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();

    // An upload through A is on B at once: the API, the run's page, the build's page.
    let base_run = created(&upload(&client, &a, &token, None, form("base", &[], variant(0))).await);
    let listed: serde_json::Value =
        serde_json::from_str(&get_ok(&client, &format!("{b}/api/v1/runs?build=base")).await)
            .unwrap();
    assert_eq!(listed[0]["id"].as_i64(), Some(base_run), "{listed}");
    assert!(
        get_ok(&client, &format!("{b}/runs/{base_run}"))
            .await
            .contains("base")
    );
    assert!(
        get_ok(&client, &format!("{b}/builds/base"))
            .await
            .contains(&format!("/runs/{base_run}"))
    );

    // A comparison rendered (and cached) on B shows a run uploaded through A afterwards.
    let head_1 = created(&upload(&client, &a, &token, None, form("head", &[], variant(0))).await);
    let before = get_ok(&client, &compare_uri(&b)).await;
    assert_eq!(linked_runs(&before), vec![base_run, head_1]);
    assert_eq!(
        get_ok(&client, &compare_uri(&b)).await,
        before,
        "the same page twice"
    );
    let head_2 = created(&upload(&client, &a, &token, None, form("head", &[], variant(1))).await);
    let after = get_ok(&client, &compare_uri(&b)).await;
    assert_eq!(linked_runs(&after), vec![base_run, head_1, head_2]);
    let api: serde_json::Value = serde_json::from_str(
        &get_ok(
            &client,
            &format!("{b}/api/v1/compare?base=base&head=head&benchmark=time"),
        )
        .await,
    )
    .unwrap();
    assert_eq!(api["head"]["run_ids"], serde_json::json!([head_1, head_2]));

    // A share made on A opens on B with the same content; sharing it on B finds the same id.
    let share = |server: String| {
        let client = client.clone();
        async move {
            let r = client
                .post(format!("{server}/share"))
                .header("content-type", "application/x-www-form-urlencoded")
                .body("base=base&head=head&benchmark=time")
                .send()
                .await
                .unwrap();
            assert_eq!(r.status(), 303, "{}", r.text().await.unwrap());
            r.headers()["location"].to_str().unwrap().to_string()
        }
    };
    let shared = share(a.clone()).await;
    assert!(shared.starts_with("/c/"), "{shared}");
    let on_a = get_ok(&client, &format!("{a}{shared}")).await;
    let on_b = get_ok(&client, &format!("{b}{shared}")).await;
    assert_eq!(on_a, on_b);
    assert!(on_b.contains("No newer runs exist"), "{on_b}");
    let json_a = get_ok(&client, &format!("{a}/api/v1{shared}")).await;
    assert_eq!(
        json_a,
        get_ok(&client, &format!("{b}/api/v1{shared}")).await
    );
    assert_eq!(share(b.clone()).await, shared);
    // A run uploaded through B afterwards: A's frozen page (cached) says newer runs exist.
    created(&upload(&client, &b, &token, None, form("head", &[], variant(2))).await);
    let later = get_ok(&client, &format!("{a}{shared}")).await;
    assert!(later.contains("Newer runs exist"), "{later}");
    assert_eq!(linked_runs(&later), vec![base_run, head_1, head_2]);
    // Shared on both at the same moment (now with the new head run): one id.
    let (x, y) = tokio::join!(share(a.clone()), share(b.clone()));
    assert_eq!(x, y);
    assert_ne!(x, shared);

    // One Idempotency-Key sent to A, then B: one run; other content under it on B: 422.
    let keyed = || form("keyed", &[], variant(3));
    let first = upload(&client, &a, &token, Some("k-1"), keyed()).await;
    let run = created(&first);
    let again = upload(&client, &b, &token, Some("k-1"), keyed()).await;
    assert_eq!((again.status, again.run_id()), (200, run), "{}", again.body);
    let other = upload(
        &client,
        &b,
        &token,
        Some("k-1"),
        form("keyed", &[], variant(4)),
    )
    .await;
    assert_eq!(other.status, 422, "{}", other.body);
    let keyed_runs =
        "SELECT COUNT(*) FROM runs r JOIN builds b ON b.id = r.build_id WHERE b.label = 'keyed'";
    assert_eq!(count(&pool, keyed_runs).await, 1);
    // One key and one content sent to both at once: one run, named by both answers.
    let (x, y) = tokio::join!(
        upload(
            &client,
            &a,
            &token,
            Some("k-2"),
            form("keyed-2", &[], variant(6))
        ),
        upload(
            &client,
            &b,
            &token,
            Some("k-2"),
            form("keyed-2", &[], variant(6))
        ),
    );
    let mut statuses = [x.status, y.status];
    statuses.sort_unstable();
    assert_eq!(statuses, [200, 201], "{} / {}", x.body, y.body);
    assert_eq!(x.run_id(), y.run_id());

    // The same file uploaded to both (no key): stored once, found by B.
    let dup = || form("dup", &[("rep", "1".into())], variant(5));
    let on_a = upload(&client, &a, &token, None, dup()).await;
    let run = created(&on_a);
    let on_b = upload(&client, &b, &token, None, dup()).await;
    assert_eq!((on_b.status, on_b.run_id()), (200, run), "{}", on_b.body);
    assert_eq!(on_b.body["uploader"], "rig-1");
    let dup_runs =
        "SELECT COUNT(*) FROM runs r JOIN builds b ON b.id = r.build_id WHERE b.label = 'dup'";
    assert_eq!(count(&pool, dup_runs).await, 1);

    // A token revoked with the command line is refused by both servers within a second.
    let tmp = tempfile::tempdir().unwrap();
    let rig = cli(tmp.path(), &["token", "create", "rig-2", "--db", &db])
        .trim()
        .to_string();
    for (i, server) in [&a, &b].into_iter().enumerate() {
        let ok = upload(
            &client,
            server,
            &rig,
            None,
            form("rig-2", &[], variant(10 + i)),
        )
        .await;
        created(&ok);
    }
    cli(tmp.path(), &["token", "revoke", "rig-2", "--db", &db]);
    let revoked = Instant::now();
    for (i, server) in [&a, &b].into_iter().enumerate() {
        let refused = upload(
            &client,
            server,
            &rig,
            None,
            form("rig-2", &[], variant(20 + i)),
        )
        .await;
        // A revoked token is 403 (an unknown one is 401): the server knows it, and refuses it.
        assert_eq!(refused.status, 403, "{server}: {}", refused.body);
        assert!(
            refused.body["detail"]
                .as_str()
                .unwrap_or("")
                .contains("revoked"),
            "{}",
            refused.body
        );
    }
    let took = revoked.elapsed();
    assert!(took < Duration::from_secs(1), "refused after {took:?}");
    assert_eq!(
        count(
            &pool,
            "SELECT COUNT(*) FROM runs r JOIN tokens t ON t.id = r.token_id WHERE t.name = 'rig-2'"
        )
        .await,
        2
    );
    super::assert_runs_whole(&pool).await;
}

/// One key with two contents sent to two servers at the same moment: one is stored, the other
/// refused (422), as on one server. (The key is checked before the import's transaction and
/// recorded after it: without a lock across servers both were stored in 19 rounds of 20.)
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_key_with_two_contents_on_two_servers_at_once_stores_one() {
    let Some(db) = store::testing::fresh_pg_url().await else {
        return;
    };
    let (a, b) = (serve(&db).await, serve(&db).await);
    let check = store::Store::open(&db).await.unwrap();
    let token = quiescent::tokens::create(&check, "rig-1").await.unwrap();
    let client = reqwest::Client::new();
    let rounds = 10;
    for round in 0..rounds {
        let key = format!("race-{round}");
        let (x, y) = tokio::join!(
            upload(
                &client,
                &a,
                &token,
                Some(&key),
                form("race", &[], variant(100 + 2 * round))
            ),
            upload(
                &client,
                &b,
                &token,
                Some(&key),
                form("race", &[], variant(101 + 2 * round))
            ),
        );
        let mut statuses = [x.status, y.status];
        statuses.sort_unstable();
        assert_eq!(
            statuses,
            [201, 422],
            "round {round}: {} / {}",
            x.body,
            y.body
        );
    }
    let runs =
        "SELECT COUNT(*) FROM runs r JOIN builds b ON b.id = r.build_id WHERE b.label = 'race'";
    assert_eq!(count(check.pg_pool(), runs).await, rounds as i64);
}
