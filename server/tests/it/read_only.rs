//! A SQLite database on a real read-only filesystem (mounted for the test, which needs root):
//! the reading commands answer from it as from a writable copy, `serve` serves it, and the
//! writing commands refuse it with a message that names it and says it is read-only.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_quiescent"));
    c.env_remove("QUIESCENT_DB")
        .env_remove("QUIESCENT_DEMO_DB")
        .env_remove("QUIESCENT_TOKEN")
        .env_remove("QUIESCENT_SERVER")
        .env_remove("QUIESCENT_SPOOL_DIR")
        .env("QUIESCENT_LOG", "error")
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null());
    c
}

/// Runs the binary with `args` then `--db db` and returns its output, successful or not.
fn quiescent(args: &[&str], db: &Path) -> Output {
    let mut c = bin();
    c.args(args).arg("--db").arg(db);
    crate::common::run_for(c, 120)
}

fn ok(o: &Output, what: &str) -> String {
    assert!(
        o.status.success(),
        "{what}: {}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Runs a program the test needs for mounting; its failure as text.
fn sh(program: &str, args: &[&str]) -> Result<(), String> {
    let o = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    if o.status.success() {
        Ok(())
    } else {
        Err(format!(
            "`{program} {}`: {} {}",
            args.join(" "),
            o.status,
            String::from_utf8_lossy(&o.stderr).trim()
        ))
    }
}

/// A directory with a read-only filesystem mounted on it, holding a copy of one database; it is
/// unmounted when dropped, on a panic too (before the temporary directory under it goes).
struct ReadOnlyCopy {
    /// The copy of the database on the read-only filesystem.
    db: PathBuf,
    /// How the filesystem was made.
    how: &'static str,
    mount_point: PathBuf,
    mounted: bool,
    _dir: tempfile::TempDir,
}

impl Drop for ReadOnlyCopy {
    fn drop(&mut self) {
        if self.mounted && unmount(&self.mount_point).is_err() {
            // Busy (a server not reaped yet): detach it now, it goes when the last user does.
            let _ = sh("umount", &["-l", &self.mount_point.to_string_lossy()]);
        }
    }
}

fn unmount(dir: &Path) -> Result<(), String> {
    sh("umount", &[&dir.to_string_lossy()])
}

/// The ways tried, in order, to get a read-only filesystem holding a copy of the database: a
/// tmpfs remounted read-only, a read-only bind mount, and a loop-mounted ext4 image remounted
/// read-only.
const METHODS: [&str; 3] = ["tmpfs", "bind", "loop"];

/// Mounts `method`'s filesystem at `mnt` (with the files it needs under `work`) and fills it
/// by `fill` while it is still writable, then makes it read-only. Leaves nothing mounted on
/// failure.
fn mount_read_only(
    method: &str,
    mnt: &Path,
    work: &Path,
    fill: &dyn Fn(&Path) -> std::io::Result<()>,
) -> Result<(), String> {
    let m = mnt.to_string_lossy().into_owned();
    let io = |e: std::io::Error| e.to_string();
    match method {
        "tmpfs" => sh(
            "mount",
            &["-t", "tmpfs", "-o", "size=64m", "quiescent-ro", &m],
        )?,
        "bind" => {
            let src = work.join("bind-src");
            std::fs::create_dir(&src).map_err(io)?;
            sh("mount", &["--bind", &src.to_string_lossy(), &m])?;
        }
        "loop" => {
            let img = work.join("fs.img");
            std::fs::File::create(&img)
                .and_then(|f| f.set_len(64 << 20))
                .map_err(io)?;
            let img = img.to_string_lossy().into_owned();
            sh("mkfs.ext4", &["-q", "-F", &img])?;
            sh("mount", &["-o", "loop", &img, &m])?;
        }
        _ => unreachable!("{method}"),
    }
    let remount = if method == "bind" {
        "remount,ro,bind"
    } else {
        "remount,ro"
    };
    let made = fill(mnt)
        .map_err(io)
        .and_then(|()| sh("mount", &["-o", remount, &m]))
        .and_then(|()| {
            // Root ignores permissions, not a read-only filesystem: it must refuse a write.
            match std::fs::write(mnt.join("probe"), "x") {
                Err(e) if e.kind() == std::io::ErrorKind::ReadOnlyFilesystem => Ok(()),
                Err(e) => Err(format!("writing a probe file gave {e}, not EROFS")),
                Ok(()) => Err("a probe file could be written".to_string()),
            }
        });
    if made.is_err() {
        let _ = unmount(mnt).or_else(|_| sh("umount", &["-l", &m]));
    }
    made
}

/// A copy of `db` on a read-only filesystem, by the first method that works; `None` (and a
/// loud message) when none does, except under CI=true, where that is a failure.
fn read_only_copy(db: &Path) -> Option<ReadOnlyCopy> {
    let dir = tempfile::tempdir().unwrap();
    let name = db.file_name().unwrap();
    let fill = |mnt: &Path| std::fs::copy(db, mnt.join(name)).map(drop);
    let mut tried = Vec::new();
    // QUIESCENT_TEST_RO_METHODS=bind,loop tries only those (to check each one works).
    let only = std::env::var("QUIESCENT_TEST_RO_METHODS").unwrap_or_default();
    for method in METHODS {
        if !only.is_empty() && !only.split(',').any(|m| m.trim() == method) {
            continue;
        }
        let work = dir.path().join(method);
        let mnt = work.join("mnt");
        std::fs::create_dir_all(&mnt).unwrap();
        match mount_read_only(method, &mnt, &work, &fill) {
            Ok(()) => {
                return Some(ReadOnlyCopy {
                    db: mnt.join(name),
                    how: method,
                    mount_point: mnt,
                    mounted: true,
                    _dir: dir,
                });
            }
            Err(e) => tried.push(format!("{method}: {e}")),
        }
    }
    let tried = tried.join("\n  ");
    if std::env::var("CI").as_deref() == Ok("true") {
        panic!("CI=true but no read-only filesystem could be mounted; tried:\n  {tried}");
    }
    eprintln!(
        "\n*** SKIPPED: the database on a read-only filesystem is not tested: no read-only \
         filesystem could be mounted (it needs root); tried:\n  {tried}\n"
    );
    None
}

/// The files under `dir` with their contents, sorted.
fn tree(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let content = if e.file_type().unwrap().is_file() {
                std::fs::read(e.path()).unwrap()
            } else {
                Vec::new()
            };
            (e.file_name().to_string_lossy().into_owned(), content)
        })
        .collect();
    out.sort();
    out
}

/// A server process, stopped when dropped (on a panic too).
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Server {
    /// Serves `db` on a free port; its address once it listens.
    fn start(db: &Path, tmp: &Path) -> (Server, String) {
        let mut c = bin();
        c.args(["serve", "--bind", "127.0.0.1:0"])
            .arg("--db")
            .arg(db)
            // Where a per-process spool goes: cleaned up with the test's directory.
            .env("TMPDIR", tmp)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut server = Server(c.spawn().unwrap());
        let mut line = String::new();
        BufReader::new(server.0.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let Some(addr) = line
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
        else {
            let _ = server.0.kill();
            let mut e = String::new();
            let _ = std::io::Read::read_to_string(&mut server.0.stderr.take().unwrap(), &mut e);
            panic!("serve did not start: {line:?}\n{e}");
        };
        (server, addr.to_string())
    }

    /// Stops the server as Ctrl-C does; whether it exited cleanly.
    fn stop(mut self) -> bool {
        let _ = sh("kill", &["-INT", &self.0.id().to_string()]);
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(20) {
            if let Some(status) = self.0.try_wait().unwrap() {
                return status.success();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

async fn get(addr: &str, path: &str) -> (u16, String) {
    let resp = reqwest::get(format!("http://{addr}{path}")).await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.text().await.unwrap())
}

#[test]
fn a_database_on_a_read_only_filesystem_is_read_and_served_but_not_written() {
    let tmp = tempfile::tempdir().unwrap();
    let rw = tmp.path().join("q.db");
    ok(&quiescent(&["demo", "--no-serve"], &rw), "demo");
    // Closed properly: everything is in the database file itself, ready to be copied.
    for suffix in ["-wal", "-shm", "-journal"] {
        let side = tmp.path().join(format!("q.db{suffix}"));
        assert!(!side.exists(), "{} is left after demo", side.display());
    }
    let Some(ro) = read_only_copy(&rw) else {
        return;
    };
    eprintln!("read-only filesystem: {}", ro.how);
    let ro_dir = ro.db.parent().unwrap().to_path_buf();
    let before = tree(&ro_dir);

    let runs = ok(&quiescent(&["runs"], &rw), "runs");
    assert!(runs.contains("v4.19") && runs.contains("v5.1"), "{runs}");
    assert_eq!(ok(&quiescent(&["runs"], &ro.db), "runs read-only"), runs);

    let compare = ["compare", "v4.19", "v5.1", "--json"];
    let json = ok(&quiescent(&compare, &rw), "compare");
    assert!(json.contains("\"label\": \"v5.1\""), "{json}");
    assert_eq!(ok(&quiescent(&compare, &ro.db), "compare read-only"), json);

    let (out_rw, out_ro) = (tmp.path().join("out-rw"), tmp.path().join("out-ro"));
    let artifact = |db: &Path, out: &Path| {
        let o = ok(
            &quiescent(&["artifact", "1", "--out", &out.to_string_lossy()], db),
            "artifact",
        );
        o.replace(&out.display().to_string(), "OUT")
    };
    let listed = artifact(&rw, &out_rw);
    assert!(listed.contains("OUT/"), "{listed}");
    assert_eq!(artifact(&ro.db, &out_ro), listed);
    assert!(!tree(&out_rw).is_empty());
    assert_eq!(tree(&out_ro), tree(&out_rw));

    let (server, addr) = Server::start(&ro.db, tmp.path());
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (status, home) = rt.block_on(get(&addr, "/"));
    assert_eq!(status, 200, "{home}");
    assert!(home.contains("v5.1"), "{home}");
    let (status, page) = rt.block_on(get(&addr, "/compare?base=v4.19&head=v5.1"));
    assert_eq!(status, 200, "{page}");
    assert!(page.contains("v4.19") && page.contains("v5.1"), "{page}");
    assert!(server.stop(), "serve did not stop cleanly on SIGINT");

    // Writing commands: refused, naming the database, not a panic.
    let file = tmp.path().join("out.txt");
    std::fs::write(&file, "Time: 1.5\n").unwrap();
    let ingest = [
        "ingest",
        "--build",
        "v9",
        "--machine",
        "m",
        "--benchmark",
        "b",
        &file.to_string_lossy(),
    ];
    for args in [&ingest[..], &["token", "create", "rig-1"]] {
        let o = quiescent(args, &ro.db);
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} succeeded: {e}");
        assert!(!e.contains("panicked"), "{args:?}: {e}");
        assert!(
            e.contains(&ro.db.display().to_string()) && e.contains("read-only filesystem"),
            "{args:?}: {e}"
        );
    }
    assert!(tree(&ro_dir) == before, "the read-only filesystem changed");
}
