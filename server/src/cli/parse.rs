//! `quiescent parse`: what the parsers see, without storing anything.

use std::cell::Cell;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ingest::SeriesTable;
use ingest::summary::AllSeries;

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
    let failed = Cell::new(0usize);
    // Buffered: stdout is line-buffered, and pretty JSON of a large profile has millions of lines.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    // Each file is parsed, written and dropped before the next: memory is one file's series.
    if args.json {
        let all = JsonFiles {
            files: &files,
            format: args.format.as_deref(),
            failed: &failed,
        };
        serde_json::to_writer_pretty(&mut out, &all)?;
        writeln!(out)?;
    } else {
        for f in &files {
            match parse_one(f, args.format.as_deref()) {
                Ok((format, table)) => {
                    write_summary(&mut out, &f.display().to_string(), format, &table)?
                }
                Err(e) => {
                    out.flush()?;
                    eprintln!("error: {e}");
                    failed.set(failed.get() + 1);
                }
            }
        }
    }
    out.flush()?;
    Ok(if failed.get() > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn parse_one(
    path: &Path,
    format: Option<&str>,
) -> Result<(&'static str, SeriesTable), ingest::Error> {
    let file = std::fs::File::open(path).map_err(|source| ingest::Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut table = SeriesTable::new();
    let summary = ingest::parse_reader(path, file, format, &mut table)?;
    Ok((summary.format, table))
}

/// The JSON array of parsed files, each parsed while it is written; a file that fails is
/// reported on stderr and left out.
struct JsonFiles<'a> {
    files: &'a [PathBuf],
    format: Option<&'a str>,
    failed: &'a Cell<usize>,
}

impl serde::Serialize for JsonFiles<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(None)?;
        for f in self.files {
            match parse_one(f, self.format) {
                Ok((format, table)) => seq.serialize_element(&JsonFile {
                    path: f.display().to_string(),
                    format,
                    table: &table,
                })?,
                Err(e) => {
                    eprintln!("error: {e}");
                    self.failed.set(self.failed.get() + 1);
                }
            }
        }
        seq.end()
    }
}

/// One file in the shape of `ingest::ParsedFile`: path, format, meta, series, warnings, extra.
struct JsonFile<'a> {
    path: String,
    format: &'static str,
    table: &'a SeriesTable,
}

impl serde::Serialize for JsonFile<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let t = self.table;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("path", &self.path)?;
        m.serialize_entry("format", self.format)?;
        m.serialize_entry("meta", &t.meta)?;
        m.serialize_entry("series", &AllSeries(t))?;
        m.serialize_entry("warnings", &t.warnings)?;
        if !t.extra.is_empty() {
            m.serialize_entry("extra", &t.extra)?;
        }
        m.end()
    }
}

/// Series listed in the readable summary of one file; a 64-CPU profile has millions.
const MAX_ROWS: usize = 500;

fn write_summary(
    out: &mut impl Write,
    path: &str,
    format: &str,
    ds: &SeriesTable,
) -> std::io::Result<()> {
    writeln!(
        out,
        "{}: {} ({} series, {} samples, {} warnings)",
        path,
        format,
        ds.len(),
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
    let mut scratch = Vec::new();
    for s in ds.iter().take(MAX_ROWS) {
        scratch.clear();
        scratch.extend(s.samples());
        let unit = s.unit.as_str();
        let h = |v: Option<f64>| v.map_or("-".to_string(), |v| super::human(v, unit));
        let mmm = compare::min_median_max(&mut scratch);
        let mut name = s.metric.to_string();
        if let Some(stat) = s.statistic {
            name.push_str(&format!(" [{stat}]"));
        }
        for (k, v) in s.params {
            name.push_str(&format!(" {k}={v}"));
        }
        table.add_row(vec![
            name,
            s.scope.to_string(),
            s.label.unwrap_or_default().to_string(),
            s.len().to_string(),
            h(mmm.map(|t| t.0)),
            h(mmm.map(|t| t.1)),
            h(mmm.map(|t| t.2)),
            unit.to_string(),
        ]);
    }
    writeln!(out, "{table}")?;
    if ds.len() > MAX_ROWS {
        writeln!(
            out,
            "  ... and {} more series (`--json` prints them all)",
            ds.len() - MAX_ROWS
        )?;
    }
    for w in &ds.warnings {
        writeln!(out, "  warning: line {}: {}", w.line, w.message)?;
    }
    writeln!(out)
}
