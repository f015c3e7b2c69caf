//! The command line: one module per subcommand.

use clap::{Parser, Subcommand};

use crate::config::{DbArgs, ServeArgs};

mod alerts_cmd;
mod artifact;
mod bisect;
mod bisect_db;
mod compare_cmd;
mod copy_db;
pub mod demo;
mod demo_history;
mod detect;
mod history_cmd;
mod ingest_cmd;
mod parse;
pub mod runs;
mod token;
mod upload;

/// Commit-versus-commit statistics for kernel benchmarks and tracer outputs.
#[derive(Debug, Parser)]
#[command(name = "quiescent", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show what the parsers see in FILEs, without storing anything.
    Parse(parse::ParseArgs),
    /// Store FILEs or DIRs as one run of BENCHMARK for BUILD on MACHINE.
    Ingest(ingest_cmd::IngestArgs),
    /// List the stored runs.
    Runs(runs::RunsArgs),
    /// Write a run's raw files back out, byte for byte.
    Artifact(artifact::ArtifactArgs),
    /// Compare two builds (or two files): is the change real, how large, how sure.
    Compare(compare_cmd::CompareArgs),
    /// Copy everything one database holds into another (SQLite or PostgreSQL, either way).
    CopyDb(copy_db::CopyDbArgs),
    /// Build a database from the bundled real datasets and serve the dashboard.
    Demo(demo::DemoArgs),
    /// Change points of one series given as CSV `position,value`.
    Detect(detect::DetectArgs),
    /// One benchmark's series over its branch's builds, with their change points.
    History(history_cmd::HistoryArgs),
    /// List alerts (change points of stored histories), triage one, or print a group as email.
    Alerts(alerts_cmd::AlertsArgs),
    /// Order a branch's builds by git history.
    Commits(history_cmd::CommitsArgs),
    /// Manage the upload tokens of test rigs.
    Token(token::TokenArgs),
    /// Send FILEs or DIRs as one run to a quiescent server (POST /api/v1/runs).
    Upload(upload::UploadArgs),
    /// One step of `git bisect run`: run CMD until it is clearly like --good or --bad.
    BisectStep(bisect::BisectStepArgs),
    /// List the bisection steps stored in the database.
    BisectLog(bisect::BisectLogArgs),
    /// Serve the dashboard and the HTTP API.
    Serve {
        #[command(flatten)]
        db: DbArgs,
        #[command(flatten)]
        serve: ServeArgs,
    },
}

/// Entry point of the binary: errors are printed with their causes (`{:#}`).
pub fn main() -> std::process::ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // Under `git bisect run` any status from 1 to 127 but 125 marks the commit bad: a
        // mistyped bisect-step must stop the bisection (255) instead.
        Err(e) if e.use_stderr() && std::env::args().nth(1).as_deref() == Some("bisect-step") => {
            let _ = e.print();
            return std::process::ExitCode::from(255);
        }
        Err(e) => e.exit(),
    };
    init_tracing();
    // `parse` reads files and prints: no runtime to start (its threads cost more than
    // parsing a small file).
    let cli = match cli.command {
        Command::Parse(args) => return finish(parse::run(args)),
        command => Cli { command },
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    finish(rt.block_on(run(cli)))
}

/// The exit status of a command, its error printed with its causes.
fn finish(result: anyhow::Result<std::process::ExitCode>) -> std::process::ExitCode {
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", error_chain(&e));
            std::process::ExitCode::FAILURE
        }
    }
}

/// The error and its causes, like anyhow's `{:#}`, leaving out a cause whose text the message
/// before it already includes (the library errors print their source inline).
pub fn error_chain(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if out.contains(&text) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    out
}

fn init_tracing() {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_env("QUIESCENT_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,sqlx=warn,tower_http=info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

async fn run(cli: Cli) -> anyhow::Result<std::process::ExitCode> {
    match cli.command {
        Command::Parse(args) => parse::run(args),
        Command::Ingest(args) => ingest_cmd::run(args).await,
        Command::Runs(args) => runs::run(args).await,
        Command::Artifact(args) => artifact::run(args).await,
        Command::Compare(args) => compare_cmd::run(args).await,
        Command::CopyDb(args) => copy_db::run(args).await,
        Command::Demo(args) => demo::run(args).await,
        Command::Detect(args) => detect::run(args),
        Command::History(args) => history_cmd::run_history(args).await,
        Command::Alerts(args) => alerts_cmd::run(args).await,
        Command::Commits(args) => history_cmd::run_commits(args).await,
        Command::Token(args) => token::run(args).await,
        Command::Upload(args) => upload::run(args).await,
        Command::BisectStep(args) => bisect::run_step(args).await,
        Command::BisectLog(args) => bisect::run_log(args).await,
        Command::Serve { db, serve } => {
            crate::web::serve(&db, serve).await?;
            Ok(std::process::ExitCode::SUCCESS)
        }
    }
}

/// Prints `text` and a newline to standard output; a reader that went away (`quiescent runs |
/// head`) ends the output quietly instead of a panic.
pub fn print_out(text: &str) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => Ok(r?),
    }
}

/// Opens the database named by `db`, with a readable error.
pub async fn open_store(db: &DbArgs) -> anyhow::Result<store::Store> {
    db.open_store().await
}

// Shared with the upload form, which must not depend on the command line.
pub use crate::config::parse_kv;

// Numbers print the same on pages and in exports: the helpers live in one leaf module.
pub use crate::format::human;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_chain_skips_repeated_causes() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file");
        let e = anyhow::Error::new(ingest::Error::Io {
            path: "/x".into(),
            source: io,
        })
        .context("opening input");
        assert_eq!(
            error_chain(&e),
            "opening input: /x: cannot read: No such file"
        );
    }

    /// `-h` of every command gives each argument a line of help: a bare `--machine` leaves the
    /// user to guess whether it filters, groups or is required.
    #[test]
    fn every_argument_has_help() {
        use clap::CommandFactory;
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for arg in cmd.get_arguments() {
                let id = arg.get_id().as_str();
                if id != "help" && id != "version" && arg.get_help().is_none() {
                    missing.push(format!("{path} {id}"));
                }
            }
            for sub in cmd.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), missing);
            }
        }
        let mut missing = Vec::new();
        walk(&Cli::command(), "quiescent", &mut missing);
        assert!(missing.is_empty(), "arguments without help: {missing:?}");
    }

    #[test]
    fn kv() {
        assert_eq!(
            parse_kv("load=idle").unwrap(),
            ("load".into(), "idle".into())
        );
        assert!(parse_kv("novalue").is_err());
        assert!(parse_kv("=x").is_err());
    }
}
