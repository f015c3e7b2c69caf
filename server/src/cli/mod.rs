//! The command line: one module per subcommand.

use clap::{Parser, Subcommand};

use crate::config::{DbArgs, ServeArgs};

mod artifact;
mod compare_cmd;
pub mod demo;
mod detect;
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
    /// Build a database from the bundled real datasets and serve the dashboard.
    Demo(demo::DemoArgs),
    /// Change points of one series given as CSV `position,value`.
    Detect(detect::DetectArgs),
    /// Manage the upload tokens of test rigs.
    Token(token::TokenArgs),
    /// Send FILEs or DIRs as one run to a quiescent server (POST /api/v1/runs).
    Upload(upload::UploadArgs),
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
    let cli = Cli::parse();
    init_tracing();
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
    match rt.block_on(run(cli)) {
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
        Command::Demo(args) => demo::run(args).await,
        Command::Detect(args) => detect::run(args),
        Command::Token(args) => token::run(args).await,
        Command::Upload(args) => upload::run(args).await,
        Command::Serve { db, serve } => {
            crate::web::serve(&db, serve).await?;
            Ok(std::process::ExitCode::SUCCESS)
        }
    }
}

/// Opens the database named by `db`, with a readable error.
pub async fn open_db(db: &DbArgs) -> anyhow::Result<sqlx::SqlitePool> {
    use anyhow::Context;
    ingest::store::open(&db.db.display().to_string())
        .await
        .with_context(|| format!("opening database {}", db.db.display()))
}

/// Parses `k=v`.
pub fn parse_kv(s: &str) -> Result<(String, String), String> {
    let (k, v) = s
        .split_once('=')
        .ok_or_else(|| format!("expected KEY=VALUE, found {s:?}"))?;
    let k = k.trim();
    if k.is_empty() {
        return Err(format!("empty key in {s:?}"));
    }
    Ok((k.to_string(), v.trim().to_string()))
}

/// Seconds, milliseconds or microseconds, whichever reads best.
pub fn human(value: f64, unit: &str) -> String {
    match unit {
        "s" => human_seconds(value),
        "bytes" => human_bytes(value),
        "s^2" => human_seconds_squared(value),
        "count" => {
            if value.fract() == 0.0 && value.abs() < 1e15 {
                format!("{}", value as i64)
            } else {
                sig(value)
            }
        }
        "" => sig(value),
        u => format!("{} {u}", sig(value)),
    }
}

pub fn human_seconds(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0 s".into()
    } else if a >= 1.0 {
        format!("{} s", sig(v))
    } else if a >= 1e-3 {
        format!("{} ms", sig(v * 1e3))
    } else if a >= 1e-6 {
        format!("{} us", sig(v * 1e6))
    } else {
        format!("{} ns", sig(v * 1e9))
    }
}

/// Variances of durations (trace_stat's s^2 column) in the unit that reads best.
pub fn human_seconds_squared(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 {
        "0 s^2".into()
    } else if a >= 1.0 {
        format!("{} s^2", sig(v))
    } else if a >= 1e-6 {
        format!("{} ms^2", sig(v * 1e6))
    } else if a >= 1e-12 {
        format!("{} us^2", sig(v * 1e12))
    } else {
        format!("{} ns^2", sig(v * 1e18))
    }
}

pub fn human_bytes(v: f64) -> String {
    let a = v.abs();
    if a >= 1024.0 * 1024.0 * 1024.0 {
        format!("{} GiB", sig(v / (1024.0 * 1024.0 * 1024.0)))
    } else if a >= 1024.0 * 1024.0 {
        format!("{} MiB", sig(v / (1024.0 * 1024.0)))
    } else if a >= 1024.0 {
        format!("{} KiB", sig(v / 1024.0))
    } else {
        format!("{v} B")
    }
}

/// Up to 6 significant digits without trailing zeros.
pub fn sig(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let digits = 6i32;
    let mag = v.abs().log10().floor() as i32;
    let decimals = (digits - 1 - mag).clamp(0, 12) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn humanises() {
        assert_eq!(human_seconds(0.000564), "564 us");
        assert_eq!(human_seconds(49.393), "49.393 s");
        assert_eq!(human_seconds(0.0012), "1.2 ms");
        assert_eq!(human_bytes(2048.0), "2 KiB");
        assert_eq!(sig(182650.3), "182650");
        assert_eq!(human(3.0, "count"), "3");
        assert_eq!(human(0.004e-12, "s^2"), "4000 ns^2");
        assert_eq!(human(30819.36e-12, "s^2"), "30819.4 us^2");
    }

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
