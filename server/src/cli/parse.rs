//! `quiescent parse`: what the parsers see, without storing anything.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use ingest::ParsedFile;

#[derive(Debug, clap::Args)]
pub struct ParseArgs {
    /// Files to parse (directories are expanded).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Force a format instead of sniffing the content.
    #[arg(long)]
    pub format: Option<String>,
    /// Print a JSON array, one object per file (see the README for the shape).
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: ParseArgs) -> anyhow::Result<ExitCode> {
    let files = ingest::expand_paths(&args.files)?;
    let mut parsed = Vec::new();
    let mut failed = 0usize;
    for f in &files {
        match ingest::parse_file(f, args.format.as_deref()) {
            Ok(p) => parsed.push(p),
            Err(e) => {
                eprintln!("error: {e}");
                failed += 1;
            }
        }
    }
    // Buffered: stdout is line-buffered, and pretty JSON of a large profile has millions of lines.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if args.json {
        serde_json::to_writer_pretty(&mut out, &parsed)?;
        writeln!(out)?;
    } else {
        for p in &parsed {
            write_summary(&mut out, p)?;
        }
    }
    out.flush()?;
    Ok(if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Series listed in the readable summary of one file; a 64-CPU profile has millions.
const MAX_ROWS: usize = 500;

fn write_summary(out: &mut impl Write, p: &ParsedFile) -> std::io::Result<()> {
    let ds = &p.dataset;
    writeln!(
        out,
        "{}: {} ({} series, {} samples, {} warnings)",
        p.path,
        p.format,
        ds.series.len(),
        ds.sample_count(),
        ds.warnings.len()
    )?;
    for (k, v) in &ds.meta {
        let v = if v.len() > 100 {
            format!("{}...", &v[..v.floor_char_boundary(97)])
        } else {
            v.clone()
        };
        writeln!(out, "  {k}: {v}")?;
    }
    let mut table = comfy_table::Table::new();
    table.load_style(comfy_table::presets::NOTHING);
    table.set_header(vec![
        "series", "scope", "block", "n", "min", "median", "max", "unit",
    ]);
    for s in ds.series.iter().take(MAX_ROWS) {
        let mut sorted = s.samples.clone();
        sorted.sort_by(f64::total_cmp);
        let unit = s.spec.unit.as_str();
        let h = |v: Option<&f64>| v.map_or("-".to_string(), |v| super::human(*v, unit));
        let median = if sorted.is_empty() {
            None
        } else if sorted.len() % 2 == 1 {
            Some(sorted[sorted.len() / 2])
        } else {
            Some((sorted[sorted.len() / 2 - 1] + sorted[sorted.len() / 2]) / 2.0)
        };
        let mut name = s.spec.key.metric.clone();
        if let Some(stat) = &s.spec.key.statistic {
            name.push_str(&format!(" [{stat}]"));
        }
        for (k, v) in &s.spec.key.params {
            name.push_str(&format!(" {k}={v}"));
        }
        table.add_row(vec![
            name,
            s.spec.key.scope.clone(),
            s.spec.key.label.clone().unwrap_or_default(),
            s.samples.len().to_string(),
            h(sorted.first()),
            h(median.as_ref()),
            h(sorted.last()),
            unit.to_string(),
        ]);
    }
    writeln!(out, "{table}")?;
    if ds.series.len() > MAX_ROWS {
        writeln!(
            out,
            "  ... and {} more series (`--json` prints them all)",
            ds.series.len() - MAX_ROWS
        )?;
    }
    for w in &ds.warnings {
        writeln!(out, "  warning: line {}: {}", w.line, w.message)?;
    }
    writeln!(out)
}
