//! `/paste`: a pasted mail compared on a page, claims panel and reply text; Share stores it
//! behind `/c/ID`; limits, escaping and bad input store nothing and leave the server working.

use axum::body::Body;
use axum::http::{Request, StatusCode};

use super::common::{self, TestApp};

fn seed(name: &str) -> String {
    let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/mails")
        .join(name);
    std::fs::read_to_string(p).expect("fixture")
}

const BOUNDARY: &str = "XquiescentX";

/// A multipart body with the given (name, file name, bytes) parts.
fn multipart(parts: &[(&str, Option<&str>, &[u8])]) -> Vec<u8> {
    let mut b = Vec::new();
    for (name, file, bytes) in parts {
        b.extend_from_slice(format!("--{BOUNDARY}\r\n").as_bytes());
        match file {
            Some(f) => b.extend_from_slice(
                format!("Content-Disposition: form-data; name=\"{name}\"; filename=\"{f}\"\r\nContent-Type: text/plain\r\n\r\n").as_bytes(),
            ),
            None => b.extend_from_slice(format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes()),
        }
        b.extend_from_slice(bytes);
        b.extend_from_slice(b"\r\n");
    }
    b.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
    b
}

async fn paste(app: &TestApp, parts: &[(&str, Option<&str>, &[u8])]) -> common::Resp {
    app.request(
        Request::post("/paste")
            .header(
                "content-type",
                format!("multipart/form-data; boundary={BOUNDARY}"),
            )
            .body(Body::from(multipart(parts)))
            .unwrap(),
    )
    .await
}

/// HTML text back to plain text (askama writes `&#62;` and the like).
fn unescape(s: &str) -> String {
    s.replace("&#60;", "<")
        .replace("&#62;", ">")
        .replace("&#34;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#38;", "&")
        .replace("&amp;", "&")
}

async fn comparisons(app: &TestApp) -> i64 {
    sqlx::query_scalar("SELECT COUNT(*) FROM comparisons")
        .fetch_one(&app.pool)
        .await
        .unwrap()
}

#[tokio::test]
async fn home_links_to_paste_and_the_form_has_a_textarea_and_a_file_input() {
    let app = common::app().await;
    assert!(app.page("/").await.contains("href=\"/paste\""));
    let html = app.page("/paste").await;
    assert!(html.contains("<textarea id=\"paste-mail\" name=\"mail\""));
    assert!(html.contains("type=\"file\" name=\"file\""));
    assert!(html.contains("enctype=\"multipart/form-data\""));
}

#[tokio::test]
async fn pasted_seed_004_shows_the_claim_and_a_reply_and_stores_nothing() {
    let app = common::app().await;
    let mail = seed("004_2ad225cb2cb455b9.txt");
    let r = paste(&app, &[("mail", None, mail.as_bytes())]).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let html = r.text();
    let claims = common::between(&html, "<section class=\"claims\"", "</section>");
    assert!(claims.contains("2.9x reduction"), "{claims}");
    assert!(
        claims.contains("claimed -65.5%, measured -65.1% [-70.9%, -60.4%], consistent"),
        "{claims}"
    );
    let reply = common::between(&html, "<pre id=\"reply-text\" class=\"email\">", "</pre>");
    let plain = unescape(reply);
    assert!(plain.contains("> base: original"), "{plain}");
    assert!(plain.contains("> head: apply patch"), "{plain}");
    // Within 72 columns once the HTML escapes are undone.
    assert!(plain.lines().all(|l| l.chars().count() <= 72), "{plain}");
    assert_eq!(comparisons(&app).await, 0, "a paste alone stores nothing");
}

#[tokio::test]
async fn a_file_wins_over_the_text_box() {
    let app = common::app().await;
    let mail = seed("000_536910311f95a228.txt");
    let r = paste(
        &app,
        &[
            ("mail", None, b"nothing here"),
            ("file", Some("000.txt"), mail.as_bytes()),
        ],
    )
    .await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert!(r.text().contains("scenario=no load on system"));
    // 3 runs a side: the p-value is Welch's, named in words.
    assert!(r.text().contains("(Welch&#39;s t)</dd>"), "{}", r.text());
}

#[tokio::test]
async fn a_url_encoded_paste_compares_as_the_form_does_and_other_bodies_are_told_how() {
    let app = common::app().await;
    let mail = seed("004_2ad225cb2cb455b9.txt");
    // `curl --data-urlencode mail@FILE URL/paste`.
    let r = app.post_form("/paste", &[("mail", mail.as_str())]).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    let claims = common::between(&r.text(), "<section class=\"claims\"", "</section>").to_string();
    let form = paste(&app, &[("mail", None, mail.as_bytes())]).await;
    assert_eq!(
        claims,
        common::between(&form.text(), "<section class=\"claims\"", "</section>")
    );
    assert!(claims.contains("2.9x reduction"), "{claims}");
    // One number a side (seed 003's prose): no test, and the page says why.
    let mail = seed("003_02bb7994ac00b1e1.txt");
    let r = app.post_form("/paste", &[("mail", mail.as_str())]).await;
    assert_eq!(r.status, StatusCode::OK, "{}", r.text());
    assert!(
        r.text().contains("- (none: not enough data)</dd>"),
        "{}",
        r.text()
    );
    // The raw mail as the body (`curl --data-binary @FILE`): no field named `mail`.
    let r = app
        .request(
            Request::post("/paste")
                .header("content-type", "application/x-www-form-urlencoded")
                .body(Body::from("real 0m1.000s\nuser 0m0.1s\n"))
                .unwrap(),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY, "{}", r.text());
    assert!(r.text().contains("a field named `mail`"), "{}", r.text());
    // Neither form encoding.
    let r = app
        .request(
            Request::post("/paste")
                .header("content-type", "text/plain")
                .body(Body::from(mail.clone()))
                .unwrap(),
        )
        .await;
    assert_eq!(r.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert!(
        r.text().contains("--data-urlencode mail@FILE"),
        "{}",
        r.text()
    );
    assert_eq!(comparisons(&app).await, 0);
}

#[tokio::test]
async fn share_stores_the_mail_and_c_id_compares_it_again() {
    let app = common::app().await;
    let mail = seed("003_02bb7994ac00b1e1.txt");
    let r = app
        .post_form(
            "/paste/share",
            &[("mail", &mail), ("base_block", ""), ("head_block", "")],
        )
        .await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text());
    let to = r.header("location").to_string();
    assert!(to.starts_with("/c/"), "{to}");
    let html = app.page(&to).await;
    assert!(html.contains("Shared paste"));
    assert!(
        html.contains("claimed -16.7%, measured -16.7%, consistent"),
        "{html}"
    );
    // The mail is kept byte for byte as an artifact.
    let stored: Vec<u8> = sqlx::query_scalar("SELECT data FROM artifact_chunks")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(stored, mail.as_bytes());
    // Frozen comparisons still answer: an unknown id is a 404.
    assert_eq!(app.get("/c/nosuchid00").await.status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn csv_json_and_api_of_a_shared_paste_hold_its_comparison() {
    let app = common::app().await;
    let mail = seed("004_2ad225cb2cb455b9.txt");
    let r = app.post_form("/paste/share", &[("mail", &mail)]).await;
    assert_eq!(r.status, StatusCode::SEE_OTHER, "{}", r.text());
    let id = r.header("location").trim_start_matches("/c/").to_string();
    let html = app.page(&format!("/c/{id}")).await;
    assert!(html.contains(&format!("href=\"/c/{id}/csv\"")), "{html}");

    let csv = app.get(&format!("/c/{id}/csv")).await;
    assert_eq!(csv.status, StatusCode::OK);
    let csv = csv.text();
    assert!(csv.lines().count() > 1, "{csv}");
    assert!(
        csv.contains("rcuscale") || csv.contains("rcu_preempt_deferred_qs_handle.hit"),
        "{csv}"
    );

    let json = app.get(&format!("/c/{id}/json")).await;
    assert_eq!(json.status, StatusCode::OK);
    let v: serde_json::Value = serde_json::from_str(&json.text()).unwrap();
    assert!(v["comparisons"].as_array().unwrap().len() >= 4, "{v}");
    assert_eq!(v["claims"][0]["text"], "2.9x reduction");
    assert_eq!(v["claims"][0]["status"], "consistent");
    assert_eq!(v["mail"]["pairs"][0]["base"], "original");

    let api = app.get(&format!("/api/v1/c/{id}")).await;
    assert_eq!(api.status, StatusCode::OK);
    let v: serde_json::Value = serde_json::from_str(&api.text()).unwrap();
    assert_eq!(v["id"], id.as_str());
    assert_eq!(v["report"]["claims"][0]["status"], "consistent");
    let hit = v["report"]["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["metric"] == "rcu_preempt_deferred_qs_handle.hit" && r["scope"] == "all")
        .expect("the hit sum row");
    assert_eq!(hit["head"]["median"], 1_140_359.0);
}

#[tokio::test]
async fn user_text_is_escaped() {
    let app = common::app().await;
    let mail = "<script>alert(1)</script>:\nbefore:\nreal 0m1.000s\nuser 0m0.1s\nsys 0m0.2s\n\nafter <b>x</b>:\nreal 0m2.000s\nuser 0m0.1s\nsys 0m0.2s\n";
    let r = paste(&app, &[("mail", None, mail.as_bytes())]).await;
    let html = r.text();
    assert!(!html.contains("<script>alert"), "{html}");
    assert!(!html.contains("<b>x</b>"));
    assert!(html.contains("&#60;b&#62;x&#60;/b&#62;"), "{html}");
    assert!(unescape(&html).contains("after <b>x</b>"));
}

#[tokio::test]
async fn bad_pastes_are_refused_clearly_and_store_nothing() {
    let app = common::app().await;
    // One block.
    let r = paste(
        &app,
        &[(
            "mail",
            None,
            b"before:\nreal 0m1.000s\nuser 0m0.1s\nsys 0m0.2s\n",
        )],
    )
    .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(
        unescape(&r.text()).contains("only one labelled block (\"before\")"),
        "{}",
        r.text()
    );
    // No numbers.
    let r = paste(&app, &[("mail", None, b"Thanks, looks good.\n")]).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text().contains("no benchmark output found"));
    // Binary junk as a file.
    let r = paste(
        &app,
        &[(
            "file",
            Some("x.bin"),
            &[0x7f, b'E', b'L', b'F', 0, 0, 1, 0xff],
        )],
    )
    .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(r.text().contains("binary data"), "{}", r.text());
    // Empty.
    let r = paste(&app, &[("mail", None, b"  \n")]).await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    // Just over 1 MiB of text.
    let big = vec![b'a'; (1 << 20) + 1];
    let r = paste(&app, &[("mail", None, &big)]).await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(r.text().contains("larger than 1 MiB"));
    // 100 MB: cut off at the body limit, never read whole.
    let huge = vec![b'a'; 100 << 20];
    let r = paste(&app, &[("mail", None, &huge)]).await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE, "{}", r.text());
    drop(huge);
    let r = app
        .post_form("/paste/share", &[("mail", &"b".repeat((1 << 20) + 10))])
        .await;
    assert_eq!(r.status, StatusCode::PAYLOAD_TOO_LARGE);
    // A share of a mail that does not compare.
    let r = app
        .post_form("/paste/share", &[("mail", "no numbers here")])
        .await;
    assert_eq!(r.status, StatusCode::UNPROCESSABLE_ENTITY);
    // Deep quoting.
    let deep = format!("{}before: 1 s\n", "> ".repeat(200_000));
    let r = paste(&app, &[("mail", None, deep.as_bytes())]).await;
    assert!(
        r.status == StatusCode::UNPROCESSABLE_ENTITY || r.status == StatusCode::PAYLOAD_TOO_LARGE,
        "{}",
        r.status
    );
    assert_eq!(comparisons(&app).await, 0);
    let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM artifacts")
        .fetch_one(&app.pool)
        .await
        .unwrap();
    assert_eq!(n, 0);
    assert_eq!(app.get("/healthz").await.text(), "ok");
}

#[tokio::test]
async fn shares_count_against_the_servers_anonymous_write_limit_per_client() {
    let app = common::app_with(quiescent::config::ServeArgs {
        anon_writes_per_minute: 5,
        ..quiescent::config::ServeArgs::default()
    })
    .await;
    let mail = seed("003_02bb7994ac00b1e1.txt");
    let share = |ip: [u8; 4]| {
        let body = format!("mail={}", quiescent::web::view::path_escape(&mail));
        let mut req = Request::post("/paste/share")
            .header("content-type", "application/x-www-form-urlencoded")
            .body(Body::from(body))
            .unwrap();
        req.extensions_mut()
            .insert(axum::extract::ConnectInfo(std::net::SocketAddr::from((
                ip, 4000,
            ))));
        req
    };
    let mut statuses = Vec::new();
    for _ in 0..6 {
        statuses.push(app.request(share([192, 0, 2, 1])).await.status);
    }
    // `--anon-writes-per-minute 5`.
    assert_eq!(&statuses[..5], &[StatusCode::SEE_OTHER; 5]);
    let r = app.request(share([192, 0, 2, 1])).await;
    assert_eq!(r.status, StatusCode::TOO_MANY_REQUESTS);
    assert!(r.header("retry-after").parse::<u64>().is_ok());
    assert_eq!(statuses[5], StatusCode::TOO_MANY_REQUESTS);
    // Another client is not affected.
    assert_eq!(
        app.request(share([192, 0, 2, 2])).await.status,
        StatusCode::SEE_OTHER
    );
    assert_eq!(comparisons(&app).await, 6);
    // One limiter for all anonymous writes: a frozen comparison's share now waits too.
    let mut req = Request::post("/share")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(Body::from("base=a&head=b"))
        .unwrap();
    req.extensions_mut()
        .insert(axum::extract::ConnectInfo(std::net::SocketAddr::from((
            [192, 0, 2, 1],
            4000,
        ))));
    assert_eq!(app.request(req).await.status, StatusCode::TOO_MANY_REQUESTS);
}
