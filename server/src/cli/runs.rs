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
            format_time(r.created_at),
        ]);
    }
    if rows.is_empty() {
        println!("no runs stored in {}", args.db.db.display());
    } else {
        println!("{table}");
    }
    Ok(ExitCode::SUCCESS)
}

/// `YYYY-MM-DD HH:MM` from unix seconds (UTC), without a date crate.
pub fn format_time(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn formats_time() {
        assert_eq!(super::format_time(0), "1970-01-01 00:00");
        assert_eq!(super::format_time(1_700_000_000), "2023-11-14 22:13");
    }
}
