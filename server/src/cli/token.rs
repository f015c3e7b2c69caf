//! `quiescent token create|list|revoke`: upload tokens for test rigs.

use std::process::ExitCode;

use crate::config::DbArgs;
use crate::tokens;

#[derive(Debug, clap::Args)]
pub struct TokenArgs {
    #[command(subcommand)]
    pub command: TokenCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum TokenCommand {
    /// Create a token for the rig NAME and print it (once: only its hash is stored).
    Create {
        /// The rig's name (no control characters), shown on its runs and its triage.
        name: String,
        /// Machines it may upload for (a glob such as 'rig-*'); any when not given.
        #[arg(long)]
        machines: Option<String>,
        /// Build labels it may upload for (a glob such as 'v6.*'); any when not given.
        #[arg(long)]
        builds: Option<String>,
        #[command(flatten)]
        db: DbArgs,
    },
    /// List the tokens, with the number of runs each uploaded.
    List {
        #[command(flatten)]
        db: DbArgs,
    },
    /// Revoke the token NAME: its uploads are refused from now on; its runs stay.
    Revoke {
        /// The name the token was created with (`quiescent token list`).
        name: String,
        #[command(flatten)]
        db: DbArgs,
    },
}

impl TokenCommand {
    fn db(&self) -> &DbArgs {
        match self {
            TokenCommand::Create { db, .. }
            | TokenCommand::List { db }
            | TokenCommand::Revoke { db, .. } => db,
        }
    }
}

pub async fn run(args: TokenArgs) -> anyhow::Result<ExitCode> {
    let store = super::open_store(args.command.db()).await?;
    match args.command {
        TokenCommand::Create {
            name,
            machines,
            builds,
            ..
        } => {
            let token =
                tokens::create_scoped(&store, &name, &store::TokenScopes { machines, builds })
                    .await?;
            // The token alone on stdout so that scripts can capture it; the advice on stderr.
            println!("{token}");
            eprintln!(
                "token {name:?} created; it is shown only now: keep it on the rig (QUIESCENT_TOKEN or --token)"
            );
        }
        TokenCommand::List { .. } => {
            let list = tokens::list(&store).await?;
            if list.is_empty() {
                println!("no tokens; create one with `quiescent token create NAME`");
            } else {
                let mut table = comfy_table::Table::new();
                table.load_style(comfy_table::presets::NOTHING);
                table.set_header(["name", "created", "status", "runs"]);
                for t in list {
                    let status = match t.revoked_at {
                        Some(at) => format!("revoked {}", date(at)),
                        None => "active".to_string(),
                    };
                    table.add_row([t.name, date(t.created_at), status, t.runs.to_string()]);
                }
                println!("{}", table.trim_fmt());
            }
        }
        TokenCommand::Revoke { name, .. } => {
            tokens::revoke(&store, &name).await?;
            println!("token {name:?} revoked");
        }
    }
    store.close().await;
    Ok(ExitCode::SUCCESS)
}

/// `YYYY-MM-DD HH:MM` UTC from unix seconds (civil-from-days, Howard Hinnant's algorithm).
fn date(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}",
        rem / 3600,
        (rem % 3600) / 60
    )
}

#[cfg(test)]
mod tests {
    use super::date;

    #[test]
    fn dates() {
        assert_eq!(date(0), "1970-01-01 00:00");
        // 2024-02-29 12:34 UTC
        assert_eq!(date(1_709_210_040), "2024-02-29 12:34");
    }
}
