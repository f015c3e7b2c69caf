//! `cyclictest` (rt-tests): the per-thread status lines, the `--histogram` dump and its
//! `# Min/Avg/Max Latencies` trailer, also as authors re-tabulate it in mails.
//!
//! Variants handled:
//! - `T: 0 ( 1234) P:99 I:1000 C: 100000 Min: 1 Act: 3 Avg: 3 Max: 53381`, one per thread
//!   (`T: 0 (15788)` with wide PIDs, any spacing, `>` quoting). Each thread's Min/Avg/Max become
//!   series `latency` with statistic `min`/`avg`/`max` (s, from µs; summaries, not samples),
//!   scope `threadN`; `C` becomes `loops` (count). A new block starts when a thread number
//!   repeats; its label comes from the author's prose (`PREEMPT_VOLUNTARY Before:`) or the
//!   command line above it (`homer:..git/rt-tests # ./cyclictest -Smp99`).
//! - `--histogram`: `# Histogram` then rows `LATENCY COUNT [COUNT...]` (one count column per
//!   thread, counts wider than the 6-digit field accepted): series `histogram` (count, neutral)
//!   with param `latency_us`, scope `threadN`; `# Total:` gives `loops`, `# Histogram
//!   Overflows:` gives `histogram_overflows`, in any order around the rows.
//! - the trailer `# Min Latencies: 00007 [...]`: one column per thread in raw output; under a
//!   header line of names (`EEVDF  PATCH  EEVDF-NO_PARITY`, an author's table) the columns are
//!   those names and become labels, rows of one column fill the first name. A group name in
//!   front of a trailer line (`LNICE(0)  # Avg Latencies: ...`) becomes param `group` of the
//!   three lines around it.

use std::collections::BTreeMap;

use super::Format;
use super::blocks::Labeler;
use crate::error::ParseError;
use crate::lines::{Lines, parse_number, strip_mail};
use crate::model::{Ctx, Direction, SeriesKey, SeriesSpec, Unit};

pub struct Cyclictest;

impl Format for Cyclictest {
    fn name(&self) -> &'static str {
        "cyclictest"
    }

    fn description(&self) -> &'static str {
        "cyclictest (rt-tests) per-thread T: lines, --histogram dumps and Min/Avg/Max latency trailers"
    }

    fn sniff(&self, head: &str) -> u32 {
        let mut t_lines = 0;
        let mut trailer = 0;
        for raw in head.lines() {
            let line = strip_mail(raw);
            if thread_line(line.trim_end_matches('=')).is_some() {
                t_lines += 1;
            } else if trailer_line(line).is_some() {
                trailer += 1;
            }
        }
        if t_lines >= 1 || trailer >= 2 { 92 } else { 0 }
    }

    fn parse(&self, lines: &mut Lines<'_>, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        let mut p = Parser::default();
        while let Some((no, raw)) = lines.next_numbered()? {
            ctx.line = no;
            p.line(raw, ctx)?;
        }
        p.end_group(ctx)?;
        if p.values == 0 {
            return Err(ParseError::nothing(
                "cyclictest output (`T: N (pid) P:.. I:.. C:.. Min:.. Act:.. Avg:.. Max:..` lines, \
                 a `# Histogram` or `# Min Latencies:` lines)",
            ));
        }
        ctx.meta("threads", p.max_thread.map_or(0, |t| t + 1).to_string());
        Ok(())
    }
}

/// A `T:` status line.
#[derive(Debug, PartialEq)]
struct ThreadLine {
    thread: u32,
    interval_us: Option<f64>,
    loops: Option<f64>,
    min: f64,
    avg: f64,
    max: f64,
}

fn thread_line(line: &str) -> Option<ThreadLine> {
    let rest = line.trim().strip_prefix("T:")?;
    let (thread, rest) = rest
        .trim_start()
        .split_once(|c: char| !c.is_ascii_digit())?;
    let thread: u32 = thread.parse().ok()?;
    // `( 1234)`: the PID, skipped.
    let rest = rest.trim_start().strip_prefix('(')?;
    let rest = &rest[rest.find(')')? + 1..];
    let mut fields: BTreeMap<&str, f64> = BTreeMap::new();
    let mut pending: Option<&str> = None;
    for tok in rest.split_whitespace() {
        if let Some(key) = pending.take() {
            fields.insert(key, parse_number(tok)?);
            continue;
        }
        let (key, value) = tok.split_once(':')?;
        if value.is_empty() {
            pending = Some(key);
        } else {
            fields.insert(key, parse_number(value)?);
        }
    }
    if pending.is_some() {
        return None;
    }
    Some(ThreadLine {
        thread,
        interval_us: fields.get("I").copied(),
        loops: fields.get("C").copied(),
        min: *fields.get("Min")?,
        avg: *fields.get("Avg")?,
        max: *fields.get("Max")?,
    })
}

/// `[GROUP] # Min Latencies: 00007 00008`: (group, statistic, values).
fn trailer_line(line: &str) -> Option<(&str, &'static str, Vec<f64>)> {
    let hash = line.find('#')?;
    let group = line[..hash].trim();
    let rest = line[hash + 1..].trim_start();
    let (name, values) = rest.split_once(':')?;
    let stat = match name.trim() {
        "Min Latencies" => "min",
        "Avg Latencies" => "avg",
        "Max Latencies" => "max",
        _ => return None,
    };
    let values: Option<Vec<f64>> = values.split_whitespace().map(parse_number).collect();
    let values = values.filter(|v| !v.is_empty())?;
    Some((group, stat, values))
}

/// `# Total: N [N...]` and `# Histogram Overflows: N [N...]` (per thread).
fn counter_line(line: &str) -> Option<(&'static str, Vec<f64>)> {
    let rest = line.strip_prefix('#')?.trim_start();
    let (name, values) = rest.split_once(':')?;
    let metric = match name.trim() {
        "Total" => "loops",
        "Histogram Overflows" => "histogram_overflows",
        _ => return None,
    };
    let values: Option<Vec<f64>> = values.split_whitespace().map(parse_number).collect();
    Some((metric, values.filter(|v| !v.is_empty())?))
}

/// A histogram row: latency (µs) then one count per thread, all plain integers.
fn histogram_row(line: &str) -> Option<(f64, Vec<f64>)> {
    let mut it = line.split_whitespace();
    let latency = it.next()?;
    if !latency.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let counts: Vec<f64> = it
        .map(|t| {
            t.bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| parse_number(t))
                .flatten()
        })
        .collect::<Option<_>>()?;
    (!counts.is_empty()).then(|| (parse_number(latency).unwrap_or(0.0), counts))
}

/// A header line of column names over an author's table: two or more words, none a number.
fn column_names(line: &str) -> Option<Vec<String>> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let ok = !words.is_empty()
        && words.len() <= 12
        && words.iter().all(|w| {
            w.bytes().any(|b| b.is_ascii_alphabetic())
                && !w.ends_with([':', '.', ','])
                && w.bytes().all(|b| !matches!(b, b'#' | b'=' | b'$'))
        });
    ok.then(|| words.iter().map(|w| w.to_string()).collect())
}

#[derive(Default)]
struct Parser {
    labeler: Labeler,
    label: Option<String>,
    /// Threads seen in the current block of `T:` lines.
    block_threads: Vec<u32>,
    in_histogram: bool,
    /// Column names of an author's trailer table.
    columns: Option<Vec<String>>,
    /// The trailer lines of one group (up to Min/Avg/Max), emitted once its group is known.
    group: Vec<(&'static str, Vec<f64>, u64)>,
    group_name: Option<String>,
    values: u64,
    max_thread: Option<u32>,
}

impl Parser {
    fn line(&mut self, raw: &str, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        let line = strip_mail(raw).trim_end();
        let indented = raw.trim_start_matches('>').starts_with([' ', '\t']);
        if let Some(t) = thread_line(line) {
            self.end_group(ctx)?;
            return self.thread(t, ctx);
        }
        if let Some((group, stat, values)) = trailer_line(line) {
            if !group.is_empty() {
                self.group_name = Some(group.to_string());
            }
            if self.group.iter().any(|(s, _, _)| *s == stat) {
                self.end_group(ctx)?;
            }
            self.group.push((stat, values, ctx.line));
            return Ok(());
        }
        self.end_group(ctx)?;
        if let Some((metric, values)) = counter_line(line) {
            for (i, v) in values.into_iter().enumerate() {
                self.push(ctx, metric, Unit::Count, None, i, v)?;
            }
            return Ok(());
        }
        if line.starts_with('#') && line.trim_start_matches('#').trim() == "Histogram" {
            self.in_histogram = true;
            return Ok(());
        }
        if self.in_histogram {
            if let Some((latency, counts)) = histogram_row(line) {
                for (i, c) in counts.into_iter().enumerate() {
                    let key = self
                        .key("histogram", Some(i))
                        .param("latency_us", latency.to_string());
                    ctx.push(SeriesSpec::count(key), c)?;
                    self.values += 1;
                }
                return Ok(());
            }
            self.in_histogram = line.is_empty() || line.starts_with('#');
        }
        if line.is_empty() {
            self.labeler.blank();
            return Ok(());
        }
        if indented && let Some(names) = column_names(line) {
            self.columns = Some(names);
            self.labeler.blank();
            return Ok(());
        }
        if line.starts_with('#') || line.starts_with("policy:") {
            self.labeler.command();
            return Ok(());
        }
        self.labeler.prose(line);
        Ok(())
    }

    fn key(&self, metric: &str, thread: Option<usize>) -> SeriesKey {
        let scope = thread.map_or("all".to_string(), |t| format!("thread{t}"));
        SeriesKey::new(metric)
            .scope(scope)
            .label(self.label.clone())
    }

    fn push(
        &mut self,
        ctx: &mut Ctx<'_>,
        metric: &str,
        unit: Unit,
        statistic: Option<&str>,
        thread: usize,
        v: f64,
    ) -> Result<(), ParseError> {
        let mut key = self.key(metric, Some(thread));
        if let Some(s) = statistic {
            key = key.statistic(s);
        }
        let direction = if unit == Unit::Count {
            Direction::Neutral
        } else {
            Direction::LowerIsBetter
        };
        self.values += 1;
        ctx.push(SeriesSpec::new(key, unit, direction), v)
    }

    fn thread(&mut self, t: ThreadLine, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        if self.block_threads.is_empty() || self.block_threads.contains(&t.thread) {
            // A new block: the prose since the last one names it.
            self.block_threads.clear();
            self.label = self.labeler.label();
        }
        self.block_threads.push(t.thread);
        self.max_thread = self.max_thread.max(Some(t.thread));
        let i = t.thread as usize;
        for (stat, us) in [("min", t.min), ("avg", t.avg), ("max", t.max)] {
            self.push(ctx, "latency", Unit::Seconds, Some(stat), i, us * 1e-6)?;
        }
        if let Some(c) = t.loops {
            self.push(ctx, "loops", Unit::Count, None, i, c)?;
        }
        if let Some(iv) = t.interval_us {
            ctx.meta(&format!("interval_us.thread{i}"), iv.to_string());
        }
        Ok(())
    }

    /// Emits the trailer lines of the group just read.
    fn end_group(&mut self, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        let group = std::mem::take(&mut self.group);
        let name = self.group_name.take();
        let line = ctx.line;
        for (stat, values, at) in group {
            ctx.line = at;
            for (i, us) in values.into_iter().enumerate() {
                let v = us * 1e-6;
                let mut key = match &self.columns {
                    // An author's table: columns are kernels or configurations.
                    Some(cols) => {
                        let label = cols.get(i).cloned().unwrap_or_else(|| format!("column{i}"));
                        SeriesKey::new("latency").label(Some(label))
                    }
                    None => self.key("latency", Some(i)),
                };
                if let Some(n) = &name {
                    key = key.param("group", n.clone());
                }
                self.values += 1;
                ctx.push(SeriesSpec::duration(key.statistic(stat)), v)?;
            }
        }
        ctx.line = line;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn t_lines() {
        let t = thread_line("T: 0 ( 1234) P:99 I:1000 C: 100000 Min: 1 Act: 3 Avg: 3 Max: 53381")
            .unwrap();
        assert_eq!(
            t,
            ThreadLine {
                thread: 0,
                interval_us: Some(1000.0),
                loops: Some(100000.0),
                min: 1.0,
                avg: 3.0,
                max: 53381.0
            }
        );
        let t = thread_line(
            "T: 7 (15795) P:99 I:4500 C:  63566 Min:      1 Act:    3 Avg:    5 Max:    1901",
        )
        .unwrap();
        assert_eq!((t.thread, t.max), (7, 1901.0));
        assert!(
            thread_line("T: 0 ( 1234) P:99 I:1000 C: 100000 Min: 1 Act: 3 Avg: 3 Max:").is_none()
        );
    }

    #[test]
    fn trailers_and_rows() {
        let (g, s, v) = trailer_line("  LNICE(-19)    # Avg Latencies: 00191      00133").unwrap();
        assert_eq!((g, s, v), ("LNICE(-19)", "avg", vec![191.0, 133.0]));
        assert_eq!(histogram_row("000025 000133 "), Some((25.0, vec![133.0])));
        assert_eq!(histogram_row("# Histogram"), None);
        assert_eq!(
            counter_line("# Total: 100000000"),
            Some(("loops", vec![1e8]))
        );
    }
}
