//! Parses files the way `quiescent parse` does (into a `SeriesTable`) and prints the time, the
//! counts and a digest of everything parsed, so that a change to a parser can be timed and
//! checked for identical results without building the server.
//!
//! Usage: cargo run --release -p quiescent-ingest --example parse_timing -- FILE...
//! (env `DIGEST=0` leaves the digest out, to time the parse alone)

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::Path;
use std::time::Instant;

fn main() {
    for arg in std::env::args().skip(1) {
        let path = Path::new(&arg);
        let start = Instant::now();
        let file = std::fs::File::open(path).expect("open");
        let mut table = if std::env::var_os("SAMPLE_THREAD").is_some_and(|v| v == "0") {
            ingest::SeriesTable::new()
        } else {
            ingest::SeriesTable::with_sample_thread()
        };
        match ingest::parse_reader(path, file, None, &mut table) {
            Ok(summary) => {
                table.finish();
                let parsed = start.elapsed();
                println!(
                    "{arg}: {} {} series {} samples {} warnings, digest {:016x}, {:.3} s",
                    summary.format,
                    table.len(),
                    table.sample_count(),
                    table.warnings.len(),
                    if std::env::var_os("DIGEST").is_some_and(|v| v == "0") {
                        0
                    } else {
                        digest(&table)
                    },
                    parsed.as_secs_f64()
                );
            }
            Err(e) => println!("{arg}: error: {e}"),
        }
    }
}

/// A hash of every series (key, unit, direction, samples as bits), the metadata and warnings.
fn digest(t: &ingest::SeriesTable) -> u64 {
    let mut h = DefaultHasher::new();
    for s in t.iter() {
        (s.metric, s.scope, s.label, s.statistic, s.params).hash(&mut h);
        (s.unit.as_str(), s.direction.as_str()).hash(&mut h);
        // A large input's samples may have been written out to a file: read in chunks.
        s.each_chunk(&mut |xs| xs.iter().for_each(|v| v.to_bits().hash(&mut h)))
            .expect("reading the samples written out");
    }
    t.meta.hash(&mut h);
    for w in &t.warnings {
        (w.line, &w.message).hash(&mut h);
    }
    t.extra.len().hash(&mut h);
    for (k, v) in &t.extra {
        (k, v.to_string()).hash(&mut h);
    }
    h.finish()
}
