//! A server's own upload spool directory in the temporary directory, `quiescent-spool-PID`,
//! for servers that share a database and maybe a machine; and the removal of those whose
//! server is gone (killed, it could not remove its own).
//!
//! A server keeps a lock file in its directory locked while it runs. Another server sweeping
//! the temporary directory may open that file before its owner has locked it, lock it and
//! remove the directory; so each side checks, once it holds the lock, that the file it locked
//! is still the one in the directory: the owner makes its directory again when not, and the
//! sweeper removes only a directory whose current lock file it holds.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::time::{Duration, Instant};

/// The name prefix of a server's own spool directory.
pub const PROCESS_SPOOL_PREFIX: &str = "quiescent-spool-";

/// The file a server keeps locked in its own spool directory while it runs.
const SPOOL_LOCK: &str = ".server.lock";

/// How long a server waits for its lock: a sweeper holds it only while removing the
/// directory; longer, and a server of another process namespace has this process id.
const LOCK_WAIT: Duration = Duration::from_secs(1);

/// Makes `dir` this process's spool directory for as long as the returned file is kept (it
/// holds a lock), and removes the spool directories beside it whose server is gone: killed,
/// it could not remove its own, and no later server has its process id.
pub fn own_spool(dir: &Path) -> io::Result<File> {
    let lock_path = dir.join(SPOOL_LOCK);
    let started = Instant::now();
    loop {
        std::fs::create_dir_all(dir)?;
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)?;
        match lock.try_lock() {
            // Else a sweeper removed the directory while holding the lock: made again.
            Ok(()) if is_current(&lock, &lock_path) => {
                if let Some(parent) = dir.parent() {
                    remove_abandoned_spools(parent, dir);
                }
                return Ok(lock);
            }
            Ok(()) if started.elapsed() >= LOCK_WAIT => {
                return Err(io::Error::other(format!(
                    "{} was removed again and again while it was being made",
                    dir.display()
                )));
            }
            Ok(()) => {}
            Err(e) if started.elapsed() >= LOCK_WAIT => {
                return Err(io::Error::other(format!(
                    "{} is in use by another server ({e})",
                    dir.display()
                )));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// Whether `lock` is the file at `path` now (not one removed since it was opened).
fn is_current(lock: &File, path: &Path) -> bool {
    match (lock.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => (a.dev(), a.ino()) == (b.dev(), b.ino()),
        _ => false,
    }
}

/// Removes the per-process spool directories in `parent` whose lock nobody holds. One without
/// a lock file is left alone (its server may be starting).
fn remove_abandoned_spools(parent: &Path, own: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path == own
            || !entry
                .file_name()
                .to_string_lossy()
                .starts_with(PROCESS_SPOOL_PREFIX)
        {
            continue;
        }
        if let Ok(lock) = OpenOptions::new().write(true).open(path.join(SPOOL_LOCK)) {
            remove_if_abandoned(&path, &lock);
        }
    }
}

/// Removes the spool directory `path` when `lock`, opened from it, can be locked and is still
/// its lock file; whether it did.
fn remove_if_abandoned(path: &Path, lock: &File) -> bool {
    if lock.try_lock().is_err() || !is_current(lock, &path.join(SPOOL_LOCK)) {
        return false;
    }
    match std::fs::remove_dir_all(path) {
        Ok(()) => {
            tracing::info!("removed the spool of a stopped server: {}", path.display());
            true
        }
        Err(e) => {
            tracing::warn!("removing {}: {e}", path.display());
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(path: &Path) -> File {
        OpenOptions::new().write(true).open(path).unwrap()
    }

    /// The directories of servers gone go, those of running servers and of servers starting
    /// (no lock file yet) stay.
    #[test]
    fn a_server_removes_the_spools_of_servers_gone_only() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = |pid: u32| tmp.path().join(format!("{PROCESS_SPOOL_PREFIX}{pid}"));
        let running = own_spool(&dir(1)).unwrap();
        drop(own_spool(&dir(2)).unwrap());
        std::fs::write(dir(2).join("0"), b"a spooled file").unwrap();
        std::fs::create_dir_all(dir(3)).unwrap();
        let other = tmp.path().join("not-a-spool");
        std::fs::create_dir_all(&other).unwrap();
        let _me = own_spool(&dir(4)).unwrap();
        assert!(dir(1).is_dir() && dir(3).is_dir() && dir(4).is_dir() && other.is_dir());
        assert!(!dir(2).exists());
        // A second server of the same process id (another namespace) is refused, after a wait.
        let e = own_spool(&dir(1)).unwrap_err();
        assert!(e.to_string().contains("in use by another server"), "{e}");
        drop(running);
    }

    /// A sweeper that opened a lock file before its directory was made again (the owner
    /// found its first lock file removed) holds a stale file: it leaves the new directory.
    #[test]
    fn a_sweeper_holding_a_stale_lock_file_leaves_the_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join(format!("{PROCESS_SPOOL_PREFIX}7"));
        std::fs::create_dir_all(&dir).unwrap();
        let lock_path = dir.join(SPOOL_LOCK);
        std::fs::write(&lock_path, b"").unwrap();
        let stale = open(&lock_path);
        std::fs::remove_file(&lock_path).unwrap();
        std::fs::write(&lock_path, b"").unwrap();
        assert!(!remove_if_abandoned(&dir, &stale));
        assert!(dir.is_dir());
        drop(stale);
        // The current file, unlocked: the directory goes.
        assert!(remove_if_abandoned(&dir, &open(&lock_path)));
        assert!(!dir.exists());
    }

    /// An owner whose lock file was removed under it takes the one it makes again.
    #[test]
    fn an_owner_takes_only_a_current_lock_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join(format!("{PROCESS_SPOOL_PREFIX}8"));
        let lock = own_spool(&dir).unwrap();
        assert!(is_current(&lock, &dir.join(SPOOL_LOCK)));
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(!is_current(&lock, &dir.join(SPOOL_LOCK)));
        drop(lock);
        let lock = own_spool(&dir).unwrap();
        assert!(is_current(&lock, &dir.join(SPOOL_LOCK)));
    }
}
