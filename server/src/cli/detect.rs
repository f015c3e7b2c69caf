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
    /// CSV with the header `position,value`: one row per run, position = build order from 0
    /// (repeated for repeated runs of the same build).
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

/// Reads `position,value` rows; errors name the file, the line and what was expected.
fn read_csv(path: &Path, text: &str) -> anyhow::Result<(Vec<i64>, Vec<f64>)> {
    let name = path.display();
    let mut lines = text.lines().enumerate();
    let header = lines.next().map(|(_, l)| l.trim().to_ascii_lowercase());
    if header.as_deref() != Some("position,value") {
        bail!(
            "{name}: line 1: expected the header `position,value`, found {:?}",
            header.unwrap_or_default()
        );
    }
    let (mut positions, mut values) = (Vec::new(), Vec::new());
    for (i, line) in lines {
        let line_no = i + 1;
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let mut cols = line.split(',');
        let (Some(p), Some(v), None) = (cols.next(), cols.next(), cols.next()) else {
            bail!("{name}: line {line_no}: expected two columns `position,value`, found {line:?}");
        };
        let position: i64 = match p.trim().parse() {
            Ok(p) if p >= 0 => p,
            _ => bail!(
                "{name}: line {line_no}: expected a position (an integer from 0), found {:?}",
                p.trim()
            ),
        };
        let value: f64 = match v.trim().parse::<f64>() {
            Ok(v) if v.is_finite() => v,
            _ => bail!(
                "{name}: line {line_no}: expected a finite number as value, found {:?}",
                v.trim()
            ),
        };
        positions.push(position);
        values.push(value);
    }
    if positions.is_empty() {
        bail!("{name}: expected at least one row after the header");
    }
    Ok((positions, values))
}
