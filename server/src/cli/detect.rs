//! `quiescent detect FILE`: change points of one series given as CSV `position,value`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, bail};
use compare::Direction;
use compare::changepoint::{ChangePoint, DetectSettings, detect};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DetectDirection {
    Lower,
    Higher,
}

#[derive(Debug, clap::Args)]
pub struct DetectArgs {
    /// CSV `position,value` (the header line is optional): one row per run, position = build
    /// order from 0 (repeated for repeated runs of the same build).
    pub file: PathBuf,
    /// Print JSON: {"change_points": [...]}.
    #[arg(long)]
    pub json: bool,
    /// Which way is better (lower by default: durations, latencies).
    #[arg(long, value_enum, default_value = "lower")]
    pub direction: DetectDirection,
    /// Significance level of a change point's p-value.
    #[arg(long, default_value_t = DetectSettings::default().alpha)]
    pub alpha: f64,
}

pub fn run(args: DetectArgs) -> anyhow::Result<ExitCode> {
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        bail!("--alpha must be between 0 and 1, got {}", args.alpha);
    }
    let text = std::fs::read_to_string(&args.file)
        .with_context(|| format!("reading {}", args.file.display()))?;
    let (positions, values) = read_csv(&args.file, &text)?;
    let settings = DetectSettings {
        alpha: args.alpha,
        ..DetectSettings::default()
    };
    let analysis = detect(&positions, &values, &settings)
        .with_context(|| format!("analysing {}", args.file.display()))?;
    let direction = match args.direction {
        DetectDirection::Lower => Direction::LowerIsBetter,
        DetectDirection::Higher => Direction::HigherIsBetter,
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        let cps: Vec<JsonChangePoint<'_>> = analysis
            .change_points
            .iter()
            .map(|c| JsonChangePoint {
                change_point: c,
                kind: c.kind(direction),
            })
            .collect();
        serde_json::to_writer_pretty(&mut out, &JsonOut { change_points: cps })?;
        writeln!(out)?;
    } else {
        write!(out, "{}", table(&analysis.change_points, direction))?;
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(serde::Serialize)]
struct JsonOut<'a> {
    change_points: Vec<JsonChangePoint<'a>>,
}

/// A change point as printed: its fields in declaration order, then the verdict for the
/// direction.
#[derive(serde::Serialize)]
struct JsonChangePoint<'a> {
    #[serde(flatten)]
    change_point: &'a ChangePoint,
    kind: &'static str,
}

fn table(cps: &[ChangePoint], direction: Direction) -> String {
    if cps.is_empty() {
        return "no change points\n".to_string();
    }
    let mut t = comfy_table::Table::new();
    t.load_style(comfy_table::presets::NOTHING);
    t.set_header([
        "position",
        "builds before",
        "median before",
        "median after",
        "change",
        "interval",
        "p",
        "q",
        "kind",
    ]);
    for c in cps {
        t.add_row([
            c.position.to_string(),
            format!("{}..{}", c.before.first_position, c.build_before),
            crate::format::sig(c.before.median),
            crate::format::sig(c.after.median),
            format!("{:+.2}%", c.change_pct),
            format!(
                "[{:+.2}%, {:+.2}%]",
                c.interval.low_pct, c.interval.high_pct
            ),
            format!("{:.2e}", c.p),
            format!("{:.2e}", c.q),
            c.kind(direction).to_string(),
        ]);
    }
    format!("{}\n", t.trim_fmt())
}

/// Reads `position,value` rows, under a `position,value` header or none; errors name the
/// file, the line and what was expected.
fn read_csv(path: &Path, text: &str) -> anyhow::Result<(Vec<i64>, Vec<f64>)> {
    let name = path.display();
    let (mut positions, mut values) = (Vec::new(), Vec::new());
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || (i == 0 && line.eq_ignore_ascii_case("position,value")) {
            continue;
        }
        match row(line) {
            Ok((p, v)) => {
                positions.push(p);
                values.push(v);
            }
            // A first line that is not a row was meant as a header.
            Err(_) if i == 0 => bail!(
                "{name}: line 1: expected the header `position,value` or a first row such as `0,35.687`, found {line:?}"
            ),
            Err(e) => bail!("{name}: line {}: {e}", i + 1),
        }
    }
    if positions.is_empty() {
        bail!("{name}: expected at least one `position,value` row");
    }
    Ok((positions, values))
}

/// One `position,value` row, or what was expected instead.
fn row(line: &str) -> Result<(i64, f64), String> {
    let mut cols = line.split(',');
    let (Some(p), Some(v), None) = (cols.next(), cols.next(), cols.next()) else {
        return Err(format!(
            "expected two columns `position,value`, found {line:?}"
        ));
    };
    let position = match p.trim().parse::<i64>() {
        Ok(p) if p >= 0 => p,
        _ => {
            return Err(format!(
                "expected a position (an integer from 0), found {:?}",
                p.trim()
            ));
        }
    };
    match v.trim().parse::<f64>() {
        Ok(v) if v.is_finite() => Ok((position, v)),
        _ => Err(format!(
            "expected a finite number as value, found {:?}",
            v.trim()
        )),
    }
}
