//! Hardening: what an installed binary serves, security headers, tokens kept out of addresses.

use std::io::BufRead as _;
use std::net::SocketAddr;

use crate::common;

/// `quiescent serve` started from `cwd` on an ephemeral port, its log (trace level) in `log`.
fn serve_from(cwd: &std::path::Path, log: &std::path::Path) -> (std::process::Child, SocketAddr) {
    let db = cwd.join("q.db");
    // `serve` reads an existing database; `token list` may create one.
    let made = std::process::Command::new(env!("CARGO_BIN_EXE_quiescent"))
        .env_remove("QUIESCENT_DB")
        .args(["token", "list", "--db"])
        .arg(&db)
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_quiescent"))
        .current_dir(cwd)
        .env_remove("QUIESCENT_DB")
        .env_remove("QUIESCENT_STATIC_DIR")
        .env("QUIESCENT_LOG", "trace")
        .args(["serve", "--bind", "127.0.0.1:0", "--db"])
        .arg(&db)
        .stdout(std::process::Stdio::piped())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
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

#[tokio::test]
async fn the_binary_serves_its_static_files_from_any_directory_and_keeps_tokens_out_of_logs() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("serve.log");
    let (mut child, addr) = serve_from(dir.path(), &log);
    let client = reqwest::Client::new();
    for name in ["style.css", "app.js", "favicon.svg"] {
        let r = client
            .get(format!("http://{addr}/static/{name}"))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "{name}");
        let want = std::fs::read(common::repo_root().join("static").join(name)).unwrap();
        let mime = r.headers()["content-type"].to_str().unwrap().to_string();
        assert!(
            mime.starts_with(match name {
                "style.css" => "text/css",
                "app.js" => "text/javascript",
                _ => "image/svg+xml",
            }) || (name == "app.js" && mime.starts_with("application/javascript")),
            "{name}: {mime}"
        );
        assert_eq!(r.bytes().await.unwrap().as_ref(), want.as_slice(), "{name}");
    }
    let secret = "f00dfacef00dfacef00dfacef00dfacef00dfacef00dfacef00dface01234567";
    let r = client
        .get(format!("http://{addr}/api/v1/builds?token={secret}"))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 400);
    assert!(r.text().await.unwrap().contains("Authorization"));
    child.kill().unwrap();
    child.wait().unwrap();
    let log = std::fs::read_to_string(&log).unwrap();
    assert!(log.contains("refused a token"), "{log}");
    assert!(!log.contains(secret), "the token is in the log: {log}");
}

#[tokio::test]
async fn static_files_revalidate_and_a_static_dir_overrides_them() {
    let t = common::app().await;
    let r = t.get("/static/style.css").await;
    assert_eq!(r.status, 200);
    let etag = r.header("etag").to_string();
    assert!(etag.starts_with('"') && etag.len() > 10, "{etag}");
    let again = t
        .request(
            axum::http::Request::get("/static/style.css")
                .header("if-none-match", &etag)
                .body(axum::body::Body::empty())
                .unwrap(),
        )
        .await;
    assert_eq!(again.status, 304);
    assert_eq!(t.get("/static/nope.css").await.status, 404);
    assert_eq!(t.get("/static/../Cargo.toml").await.status, 404);

    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("style.css"), "body{}").unwrap();
    let o = common::app_with(quiescent::config::ServeArgs {
        static_dir: Some(dir.path().to_path_buf()),
        ..Default::default()
    })
    .await;
    let r = o.get("/static/style.css").await;
    assert_eq!((r.status.as_u16(), r.text().as_str()), (200, "body{}"));
    assert_eq!(o.get("/static/app.js").await.status, 404);
}

#[tokio::test]
async fn pages_carry_security_headers() {
    let t = common::app().await;
    for uri in ["/", "/compare?base=a&head=b", "/no/such/page"] {
        let r = t.get(uri).await;
        assert!(r.header("content-type").starts_with("text/html"), "{uri}");
        assert_eq!(r.header("x-content-type-options"), "nosniff", "{uri}");
        let csp = r.header("content-security-policy");
        for part in [
            "default-src 'none'",
            "script-src 'self'",
            "style-src 'self'",
            "frame-ancestors 'none'",
        ] {
            assert!(csp.contains(part), "{uri}: {csp}");
        }
        assert!(!csp.contains("unsafe-inline"), "{uri}: {csp}");
    }
    for uri in ["/healthz", "/api/v1/builds", "/static/style.css"] {
        let r = t.get(uri).await;
        assert_eq!(r.header("x-content-type-options"), "nosniff", "{uri}");
    }
}

#[tokio::test]
async fn a_token_in_the_address_is_refused() {
    let t = common::app().await;
    for uri in [
        "/?token=abc",
        "/api/v1/runs?build=x&Token=abc",
        "/api/v1/builds?access_token=abc",
    ] {
        let r = t.get(uri).await;
        assert_eq!(r.status, 400, "{uri}");
    }
    // A parameter that merely contains the word is not a token.
    assert_eq!(t.get("/?tokens_page=1").await.status, 200);
}
