//! `quiescent artifact`: a run's raw files, byte-identical.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use sqlx::Row;

use crate::config::DbArgs;

#[derive(Debug, clap::Args)]
pub struct ArtifactArgs {
    /// The run id (see `quiescent runs`).
    pub run_id: i64,
    /// Directory to write the files into (created if missing).
    #[arg(long, default_value = ".")]
    pub out: PathBuf,
    #[command(flatten)]
    pub db: DbArgs,
}

pub async fn run(args: ArtifactArgs) -> anyhow::Result<ExitCode> {
    let store = args.db.open_existing_store().await?;
    let pool = store.sqlite_pool().clone();
    let rows = sqlx::query(
        "SELECT ra.artifact_id, ra.file_name, a.size FROM run_artifacts ra \
         JOIN artifacts a ON a.id = ra.artifact_id WHERE ra.run_id = ? ORDER BY ra.seq",
    )
    .bind(args.run_id)
    .fetch_all(&pool)
    .await?;
    if rows.is_empty() {
        anyhow::bail!(
            "run {} does not exist or has no files (see `quiescent runs`)",
            args.run_id
        );
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("creating {}", args.out.display()))?;
    let mut used = std::collections::HashSet::new();
    for r in rows {
        let id: i64 = r.get(0);
        let name: String = r.get(1);
        let mut file_name = store::safe_file_name(&name);
        // Two inputs may share a base name (dir1/function0, dir2/function0).
        let mut k = 1;
        while !used.insert(file_name.clone()) {
            file_name = format!("{}.{k}", store::safe_file_name(&name));
            k += 1;
        }
        let path = args.out.join(&file_name);
        let mut f =
            std::fs::File::create(&path).with_context(|| format!("creating {}", path.display()))?;
        let n = store.read_artifact(id, &mut f).await?;
        println!("{} ({n} bytes, from {name})", path.display());
    }
    Ok(ExitCode::SUCCESS)
}
