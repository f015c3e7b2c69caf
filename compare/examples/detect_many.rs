//! Change points of many series at once, for the detection benchmark (`bench/detect/`).
//!
//! Reads CSV `series,position,value` on stdin (rows of a series contiguous), runs
//! `changepoint::detect_many` with the default settings (or `alpha` as the first argument) (Benjamini-Hochberg across all series),
//! and writes one JSON line per series: `{"series": ID, "change_points": [positions]}`.
//! The detection time alone (parsing excluded) goes to stderr as `seconds=S`.

use std::io::{BufRead, Write};
use std::time::Instant;

use compare::changepoint::{DetectSettings, detect_many};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut ids: Vec<String> = Vec::new();
    let mut series: Vec<(Vec<i64>, Vec<f64>)> = Vec::new();
    for (i, line) in std::io::stdin().lock().lines().enumerate() {
        let line = line?;
        if i == 0 || line.is_empty() {
            continue;
        }
        let mut cols = line.split(',');
        let (Some(id), Some(pos), Some(val)) = (cols.next(), cols.next(), cols.next()) else {
            return Err(format!("stdin line {}: expected series,position,value", i + 1).into());
        };
        if ids.last().map(String::as_str) != Some(id) {
            ids.push(id.to_string());
            series.push((Vec::new(), Vec::new()));
        }
        let s = series.last_mut().expect("pushed above");
        s.0.push(
            pos.parse()
                .map_err(|e| format!("stdin line {}: {e}", i + 1))?,
        );
        s.1.push(
            val.parse()
                .map_err(|e| format!("stdin line {}: {e}", i + 1))?,
        );
    }
    // Optional first argument: alpha (default: the library's).
    let mut settings = DetectSettings::default();
    if let Some(a) = std::env::args().nth(1) {
        settings.alpha = a.parse()?;
    }
    let started = Instant::now();
    let results = detect_many(
        series.iter().map(|(p, v)| (p.as_slice(), v.as_slice())),
        &settings,
    )?;
    let seconds = started.elapsed().as_secs_f64();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for (id, r) in ids.iter().zip(&results) {
        let cps: Vec<i64> = r.change_points.iter().map(|c| c.position).collect();
        writeln!(
            out,
            "{}",
            serde_json::json!({"series": id, "change_points": cps})
        )?;
    }
    eprintln!("seconds={seconds}");
    Ok(())
}
