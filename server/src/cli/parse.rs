//! `quiescent parse`: what the parsers see, without storing anything.

use std::cell::Cell;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ingest::SeriesTable;
use ingest::summary::{AllSeries, SeriesView};

use crate::format::count;

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
    // The samples of a large file are appended on a thread of their own while it is parsed.
    let mut table = SeriesTable::with_sample_thread();
    let summary = ingest::parse_reader(path, file, format, &mut table)?;
    table.finish();
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

/// Samples below which the summary's figures are computed on one thread: a thread costs more
/// than selecting the medians of a small file.
const PARALLEL_SAMPLES: usize = 200_000;

/// Samples of one series copied for its figures; a longer series is read in passes
/// ([`compare::min_median_max_by_passes`]), so memory stays flat however long it is.
const GATHER: usize = 1 << 20;

/// [`compare::min_median_max`] of one series. A long one whose middle is a few values
/// repeated is counted where it lies ([`compare::middle_run_by_pass`]): copied whole, a series
/// written out costs its reading and as many fresh pages as its samples fill, several times
/// the count.
fn figures(s: &SeriesView<'_>, scratch: &mut Vec<f64>) -> io::Result<Option<(f64, f64, f64)>> {
    if let Some(figures) =
        compare::middle_run_by_pass(s.len(), |at, out| s.values_at(at, out), |f| s.each_chunk(f))?
    {
        return Ok(Some(figures));
    }
    if s.len() <= GATHER {
        s.copy_samples(scratch)?;
        return Ok(compare::min_median_max(scratch));
    }
    compare::min_median_max_by_passes(s.len(), GATHER, |f| s.each_chunk(f))
}

/// [`compare::min_median_max`] of each series, in order. Selecting the medians of millions of
/// samples is a tenth of a large file's parse, all of it after the parse, so a large table is
/// split in two halves of about equal sample counts and the second half runs on its own thread.
fn min_median_max_each(series: &[SeriesView<'_>]) -> io::Result<Vec<Option<(f64, f64, f64)>>> {
    fn each(series: &[SeriesView<'_>]) -> io::Result<Vec<Option<(f64, f64, f64)>>> {
        let mut scratch = Vec::new();
        series.iter().map(|s| figures(s, &mut scratch)).collect()
    }
    let total: usize = series.iter().map(SeriesView::len).sum();
    if total < PARALLEL_SAMPLES || series.len() < 2 {
        return each(series);
    }
    // The series after the one at which the running count reaches half the samples starts the
    // second half; at least one series goes to each side.
    let mut seen = 0;
    let split = series
        .iter()
        .position(|s| {
            seen += s.len();
            seen * 2 >= total
        })
        .map_or(1, |i| (i + 1).clamp(1, series.len() - 1));
    let (first, second) = series.split_at(split);
    std::thread::scope(|scope| {
        let other = scope.spawn(|| each(second));
        let mut out = each(first)?;
        out.extend(
            other
                .join()
                .unwrap_or_else(|e| std::panic::resume_unwind(e))?,
        );
        Ok(out)
    })
}

fn write_summary(
    out: &mut impl Write,
    path: &str,
    format: &str,
    ds: &SeriesTable,
) -> std::io::Result<()> {
    writeln!(
        out,
        "{}: {} ({} series, {}, {})",
        path,
        format,
        ds.len(),
        count(ds.sample_count(), "sample"),
        count(ds.warnings.len(), "warning")
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
    let shown: Vec<SeriesView<'_>> = ds.iter().take(MAX_ROWS).collect();
    for (s, mmm) in shown.iter().zip(min_median_max_each(&shown)?) {
        let unit = s.unit.as_str();
        let h = |v: Option<f64>| v.map_or("-".to_string(), |v| super::human(v, unit));
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
    writeln!(out, "{}", table.trim_fmt())?;
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

#[cfg(test)]
mod tests {
    use super::*;
    use ingest::{SeriesKey, SeriesSpec, Sink};

    /// A table of series with these sample counts; values from a fixed generator, with
    /// repeats, so medians of even counts average two different values.
    fn table(counts: &[usize]) -> SeriesTable {
        let mut t = SeriesTable::new();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for (i, &n) in counts.iter().enumerate() {
            let id = t.series(&SeriesSpec::count(SeriesKey::new(format!("m{i}"))));
            for _ in 0..n {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                t.sample(id, (x % 10_007) as f64 / 7.0);
            }
        }
        t
    }

    #[test]
    fn figures_on_two_threads_are_those_of_one() {
        let big = PARALLEL_SAMPLES;
        for counts in [
            vec![10, 0, 3],
            vec![big],
            vec![big, 1],
            vec![1, big],
            vec![big / 4 + 1; 4],
            vec![1, 2, big / 2, 5, big / 2, 0, 7],
            vec![big, 0],
            // Longer than is copied: read in passes.
            vec![3, GATHER + 3, 2],
        ] {
            let t = table(&counts);
            let shown: Vec<SeriesView<'_>> = t.iter().collect();
            let one: Vec<_> = shown
                .iter()
                .map(|s| compare::min_median_max(&mut s.samples().collect::<Vec<f64>>()))
                .collect();
            assert_eq!(min_median_max_each(&shown).unwrap(), one, "{counts:?}");
            assert_eq!(
                one.iter().filter(|m| m.is_none()).count(),
                counts.iter().filter(|&&n| n == 0).count()
            );
        }
    }

    /// Long series of a few readings in turn (counted where they lie) beside ones of many
    /// values (selected): the figures of a sorted copy of each, on one thread and on two.
    #[test]
    fn figures_of_runs_counted_in_place_are_those_of_a_copy() {
        let mut t = SeriesTable::with_sample_thread();
        let readings: [&[f64]; 4] = [&[0.044, 0.032], &[0.004], &[3.0, 1.0, 2.0, -0.0], &[]];
        for (i, r) in readings.iter().enumerate() {
            let id = t.series(&SeriesSpec::count(SeriesKey::new(format!("m{i}"))));
            for j in 0..PARALLEL_SAMPLES / 2 + i {
                // The last series: many values.
                let v = r.get(j % r.len().max(1)).copied();
                t.sample(id, v.unwrap_or((j * 7919 % 10_007) as f64));
            }
        }
        t.finish();
        let shown: Vec<SeriesView<'_>> = t.iter().collect();
        let mut copies = Vec::new();
        let one: Vec<_> = shown
            .iter()
            .map(|s| {
                s.copy_samples(&mut copies).unwrap();
                copies.sort_by(f64::total_cmp);
                let n = copies.len();
                let median = if n % 2 == 1 {
                    copies[n / 2]
                } else {
                    (copies[n / 2 - 1] + copies[n / 2]) / 2.0
                };
                Some((copies[0], median, copies[n - 1]))
            })
            .collect();
        assert_eq!(min_median_max_each(&shown).unwrap(), one);
        let mut scratch = Vec::new();
        for (s, want) in shown.iter().zip(&one) {
            assert_eq!(&figures(s, &mut scratch).unwrap(), want);
        }
    }
}
