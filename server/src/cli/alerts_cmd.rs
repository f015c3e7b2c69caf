//! `quiescent alerts`: list alerts, triage one, or print a group as email text.

use std::process::ExitCode;

use store::{AlertFilter, Triage};

use crate::config::DbArgs;
use crate::format::count;
use crate::history::notify;

#[derive(Debug, clap::Args)]
pub struct AlertsArgs {
    #[command(subcommand)]
    pub action: Option<AlertsAction>,
    /// Only alerts in this state (untriaged, acknowledged, invalid, fixed).
    #[arg(long)]
    pub state: Option<String>,
    /// Only alerts of this benchmark.
    #[arg(long)]
    pub benchmark: Option<String>,
    /// Only alerts of this machine's histories.
    #[arg(long)]
    pub machine: Option<String>,
    /// Only alerts on this branch.
    #[arg(long)]
    pub branch: Option<String>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub db: DbArgs,
}

#[derive(Debug, clap::Subcommand)]
pub enum AlertsAction {
    /// Set an alert's state.
    Triage {
        /// The alert's id (`quiescent alerts` lists them).
        id: i64,
        /// The new state: untriaged, acknowledged, invalid or fixed.
        #[arg(long)]
        state: String,
        /// Why, in a few words ("known, see thread").
        #[arg(long)]
        note: Option<String>,
        /// Build that fixed it (with --state fixed).
        #[arg(long)]
        fixed_by: Option<String>,
        /// Who decided.
        #[arg(long, default_value = "local")]
        who: String,
        #[command(flatten)]
        db: DbArgs,
    },
    /// Print an alert group as plain-text email (72 columns).
    Email {
        /// The alert group's id (the `group` column of `quiescent alerts`).
        group: i64,
        /// The server's address, for the link.
        #[arg(long, default_value = "http://127.0.0.1:8080")]
        base_url: String,
        #[command(flatten)]
        db: DbArgs,
    },
}

pub async fn run(args: AlertsArgs) -> anyhow::Result<ExitCode> {
    match args.action {
        Some(AlertsAction::Triage {
            id,
            state,
            note,
            fixed_by,
            who,
            db,
        }) => {
            let store = super::open_store(&db).await?;
            store
                .triage_alert(
                    id,
                    &Triage {
                        state: state.clone(),
                        note,
                        who,
                        fixed_by,
                    },
                )
                .await?;
            println!("alert {id}: {state}");
            return Ok(ExitCode::SUCCESS);
        }
        Some(AlertsAction::Email {
            group,
            base_url,
            db,
        }) => {
            let store = super::open_store(&db).await?;
            let g = notify::group(&store, group)
                .await?
                .ok_or_else(|| anyhow::anyhow!("no alert group {group}"))?;
            print!("{}", notify::email(&g, base_url.trim_end_matches('/')));
            return Ok(ExitCode::SUCCESS);
        }
        None => {}
    }
    let store = super::open_store(&args.db).await?;
    if let Some(s) = &args.state
        && !store::ALERT_STATES.contains(&s.as_str())
    {
        anyhow::bail!(
            "unknown state {s:?}; states are {}",
            store::ALERT_STATES.join(", ")
        );
    }
    let alerts = store
        .alerts(&AlertFilter {
            state: args.state,
            benchmark: args.benchmark,
            machine: args.machine,
            branch: args.branch,
            ..AlertFilter::default()
        })
        .await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&alerts)?);
        return Ok(ExitCode::SUCCESS);
    }
    let mut table = comfy_table::Table::new();
    table.load_style(comfy_table::presets::NOTHING);
    table.set_header([
        "id",
        "group",
        "build",
        "benchmark",
        "metric",
        "params",
        "machine",
        "change",
        "q",
        "state",
    ]);
    for a in &alerts {
        table.add_row([
            a.id.to_string(),
            a.group_id.to_string(),
            format!("{} -> {}", a.build_before, a.build_after),
            a.benchmark.clone(),
            a.metric.clone(),
            a.params_key.clone(),
            a.machine.clone(),
            format!("{:+.1}% {}", a.change_pct, a.kind),
            crate::format::p_value(Some(a.q)),
            a.state.clone(),
        ]);
    }
    println!("{}", table.trim_fmt());
    println!("{}", count(alerts.len(), "alert"));
    Ok(ExitCode::SUCCESS)
}
