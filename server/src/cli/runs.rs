//! `quiescent runs`: what is stored.

use std::process::ExitCode;

use crate::config::DbArgs;

#[derive(Debug, clap::Args)]
pub struct RunsArgs {
    /// Only runs of this build label.
    #[arg(long)]
    pub build: Option<String>,
    /// Only runs of this benchmark.
    #[arg(long)]
    pub benchmark: Option<String>,
    #[command(flatten)]
    pub db: DbArgs,
}

pub async fn run(args: RunsArgs) -> anyhow::Result<ExitCode> {
    let store = args.db.open_existing_store().await?;
    let rows = store
        .runs(&store::RunQuery {
            build: args.build.as_deref(),
            benchmark: args.benchmark.as_deref(),
            ..store::RunQuery::default()
        })
        .await?;
    let mut table = comfy_table::Table::new();
    table.load_style(comfy_table::presets::NOTHING);
    table.set_header(vec![
        "id",
        "build",
        "machine",
        "benchmark",
        "params",
        "series",
        "samples",
        "time (UTC)",
    ]);
    for r in &rows {
        table.add_row(vec![
            r.id.to_string(),
            r.build.clone(),
            r.machine.clone(),
            r.benchmark.clone(),
            r.params_key.clone(),
            r.series.to_string(),
            r.samples.to_string(),
            crate::format::time(r.created_at),
        ]);
    }
    if rows.is_empty() {
        println!("no runs stored in {}", args.db.shown());
    } else {
        super::print_out(&table.trim_fmt())?;
    }
    Ok(ExitCode::SUCCESS)
}
