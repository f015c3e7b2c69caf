//! Integration tests of the store: every public read and write on both engines (`engines`), the
//! import's SQLite specifics and the packed samples (the upgrade of a release-0.1 database is
//! tested end to end by the server's `upgrade` tests).

mod engines;
mod import;
mod packing;
mod wal;
mod write_connection;

use std::path::{Path, PathBuf};

use store::InputFile;

/// A parser fixture (the ingest crate's test inputs).
pub fn fixture(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../ingest/tests/fixtures")
        .join(rel)
}

/// seed 004's "original" rows of `rcu_preempt_deferred_qs_handle`: (hits, time in us) on
/// CPUs 0 to 3.
const SEED004_ROWS: [(u64, &str); 4] = [
    (838746, "182650.3"),
    (841768, "191138.6"),
    (828243, "180455.6"),
    (810258, "189158.1"),
];

/// One trace_stat file per CPU in `root/trace_stat`, as the kernel writes them: CPU `i` gets
/// the rows `cpus[i]` of (function, hits, time in us). The inputs of one run, in file order.
pub fn per_cpu_files(root: &Path, cpus: &[Vec<(&str, u64, &str)>]) -> Vec<InputFile> {
    let dir = root.join("trace_stat");
    std::fs::create_dir(&dir).unwrap();
    for (cpu, rows) in cpus.iter().enumerate() {
        let mut text = "  Function                               Hit    Time            Avg             s^2\n  \
                        --------                               ---    ----            ---             ---\n"
            .to_string();
        for (function, hit, time) in rows {
            text.push_str(&format!(
                "  {function}    {hit}    {time} us     0.217 us        0.004 us    \n"
            ));
        }
        std::fs::write(dir.join(format!("function{cpu}")), text).unwrap();
    }
    ingest::expand_paths(std::slice::from_ref(&dir))
        .unwrap()
        .into_iter()
        .map(|p| InputFile::path(p, None))
        .collect()
}

/// seed 004's per-CPU files under `root`.
pub fn seed004_files(root: &Path) -> Vec<InputFile> {
    let cpus: Vec<Vec<(&str, u64, &str)>> = SEED004_ROWS
        .iter()
        .map(|&(hit, time)| vec![("rcu_preempt_deferred_qs_handle", hit, time)])
        .collect();
    per_cpu_files(root, &cpus)
}
