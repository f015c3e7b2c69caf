//! `quiescent runs`: what is stored.

use std::process::ExitCode;

use sqlx::Row;

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
    let pool = args.db.open_existing_store().await?.sqlite_pool().clone();
    let rows = sqlx::query(
        "SELECT r.id, b.label, m.name, r.benchmark, r.params_key, r.created_at, \
                (SELECT COUNT(*) FROM series s WHERE s.run_id = r.id) AS nseries, \
                (SELECT COALESCE(SUM(n), 0) FROM series s WHERE s.run_id = r.id) AS nsamples \
         FROM runs r JOIN builds b ON b.id = r.build_id JOIN machines m ON m.id = r.machine_id \
         WHERE (?1 IS NULL OR b.label = ?1) AND (?2 IS NULL OR r.benchmark = ?2) \
         ORDER BY r.id",
    )
    .bind(&args.build)
    .bind(&args.benchmark)
    .fetch_all(&pool)
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
            r.get::<i64, _>(0).to_string(),
            r.get::<String, _>(1),
            r.get::<String, _>(2),
            r.get::<String, _>(3),
            r.get::<String, _>(4),
            r.get::<i64, _>(6).to_string(),
            r.get::<i64, _>(7).to_string(),
            format_time(r.get::<i64, _>(5)),
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
