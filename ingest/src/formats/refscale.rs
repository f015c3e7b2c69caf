//! refscale (formerly refperf) console output and the summaries people post from it.
//!
//! Variants handled:
//! - console lines `<type>-ref-scale:` / `<type>-ref-perf:` (`rcu-ref-scale:`), with or without
//!   dmesg `[ ts]` prefixes; the type goes to meta `scale_type`, `--- Start of test:  k=v ...`
//!   parameters to meta;
//! - the `Runs<TAB>Time(ns)` table, both as one prefixed record with embedded newlines (5.9/5.10:
//!   a bare `rcu-ref-scale: ` line, then the header and rows without prefix) and as bare
//!   `pr_alert` chunks (2021+): each `<run><TAB><ns>.<ddd>` row is one sample of
//!   `reader_duration` (s, ns/1e9) in scope `all`. Under the first refperf's `Threads<TAB>Time(ns)`
//!   header a row is one reader count of a sweep, so the count becomes the param `threads`;
//! - `Experiment #k (Format: <THREAD-NUM>:<Total loop time in ns>)` blocks: each `N: <ns>` pair
//!   is one sample of `loop_time` (s) in scope `threadN`;
//! - the kvm-recheck-refscale.sh summary: `Points:` values are samples of `reader_duration`;
//!   `Average/Minimum/Median/Maximum reader duration:` lines (ns) are `reader_duration` series
//!   marked with a statistic (`mean`, `min`, `median`, `max`); `<config> results:` labels them;
//! - posted tables of those lines with one value per run side by side (`Minimum reader duration:
//!   3.286 2.851 3.395`, or a bare `Minimum 3.286 ...` row): each value one statistic sample,
//!   labelled by the prose line before the block (e.g. `Unmarked accesses ...:`).

use std::collections::HashMap;

use super::rcuscale::Prose;
use super::{Format, head_holds};
use crate::error::ParseError;
use crate::lines::{Lines, parse_number, strip_dmesg, strip_mail};
use crate::model::{Ctx, SeriesKey, SeriesSpec};

pub struct RefScale;

impl Format for RefScale {
    fn name(&self) -> &'static str {
        "refscale"
    }

    fn description(&self) -> &'static str {
        "refscale/refperf console output (Runs/Time(ns) tables, Experiment blocks) and kvm-recheck-refscale summaries"
    }

    fn sniff(&self, head: &str) -> u32 {
        const FORMAT: &str = "(Format: <THREAD-NUM>:<Total loop time in ns>)";
        // Lines are searched only for the phrases of the head (`head_holds`).
        let format = head_holds(head, FORMAT);
        let reader = head_holds(head, READER);
        let mut score = 0;
        // Bare `Minimum 3.2 3.4` rows: weak alone, a Min/Median/Max trio is a posted table.
        let mut trio = [false; 3];
        for raw in head.lines().take(2000) {
            let line = strip_dmesg(strip_mail(raw));
            let row = if reader {
                summary_row(line)
            } else {
                bare_summary_row(line)
            };
            if let Some((stat, _)) = row {
                match stat {
                    "min" => trio[0] = true,
                    "median" => trio[1] = true,
                    "max" => trio[2] = true,
                    _ => {}
                }
            }
            if format && line.contains(FORMAT) {
                return 95;
            }
            if split_prefix(line).is_some() {
                return 90;
            }
            if reader && line.contains(READER) {
                score = score.max(85);
            }
            if runs_header(line).is_some() {
                score = score.max(80);
            }
        }
        if trio.iter().all(|&b| b) {
            score = score.max(30);
        }
        score
    }

    fn parse(&self, lines: &mut Lines<'_>, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        let mut p = Parser::default();
        while let Some((line_no, raw)) = lines.next_numbered()? {
            ctx.line = line_no;
            p.line(raw, ctx)?;
        }
        if ctx.samples() == 0 {
            return Err(ParseError::nothing(
                "refscale measurements (Runs/Time(ns) rows, Experiment blocks or reader-duration summaries)",
            ));
        }
        Ok(())
    }
}

/// Splits `<type>-ref-scale:` / `<type>-ref-perf:` off a line: (type, rest).
fn split_prefix(line: &str) -> Option<(&str, &str)> {
    crate::lines::split_console_prefix(line, &["-ref-scale:", "-ref-perf:"])
}

/// `Runs<TAB>Time(ns)` (or the first refperf's `Threads<TAB>Time(ns)`): true for `Threads`.
fn runs_header(line: &str) -> Option<bool> {
    let mut t = line.split_whitespace();
    let first = t.next()?;
    if t.next()? != "Time(ns)" || t.next().is_some() {
        return None;
    }
    match first {
        "Runs" => Some(false),
        "Threads" => Some(true),
        _ => None,
    }
}

/// A table row `<int><TAB><ns>.<ddd>`.
fn run_row(line: &str) -> Option<(&str, f64)> {
    let mut t = line.split_whitespace();
    let run = t.next()?;
    let v = t.next()?;
    if t.next().is_some() || run.is_empty() || !run.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if !v.contains('.') {
        return None;
    }
    Some((run, parse_number(v)?))
}

/// Reader lines of an Experiment block: `0: 35123<TAB>1: 35234<TAB>...`.
fn experiment_pairs(line: &str) -> Option<Vec<(u64, f64)>> {
    let mut out = Vec::new();
    let mut toks = line.split_whitespace();
    while let Some(tok) = toks.next() {
        let (thread, value) = match tok.split_once(':') {
            Some((t, "")) => (t, toks.next()?),
            Some((t, v)) => (t, v),
            None => return None,
        };
        if thread.is_empty() || !thread.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        out.push((thread.parse().ok()?, parse_number(value)?));
    }
    (!out.is_empty()).then_some(out)
}

/// The statistic of a summary or table row head.
fn statistic(head: &str) -> Option<&'static str> {
    match head {
        "Average" | "Mean" | "Avg" => Some("mean"),
        "Minimum" | "Min" => Some("min"),
        "Median" => Some("median"),
        "Maximum" | "Max" => Some("max"),
        _ => None,
    }
}

/// `Minimum reader duration: 3.286 2.851` or a bare `Minimum 3.286 2.851` row.
fn summary_row(line: &str) -> Option<(&'static str, &str)> {
    if let Some((head, rest)) = line.split_once(READER) {
        return Some((statistic(head.trim())?, rest));
    }
    bare_summary_row(line)
}

/// The field of a summary row with its statistic in front (`Average reader duration: ...`).
const READER: &str = " reader duration:";

/// [`summary_row`] of a line without [`READER`]: a bare row (`Minimum 3.2 3.4`).
fn bare_summary_row(line: &str) -> Option<(&'static str, &str)> {
    let (head, rest) = line.split_once(char::is_whitespace)?;
    let stat = statistic(head.trim_end_matches(':'))?;
    // A bare row must hold only numbers, so prose starting with "Average" is not taken.
    let all_numbers = rest.split_whitespace().all(|t| parse_number(t).is_some());
    (all_numbers && !rest.trim().is_empty()).then_some((stat, rest))
}

/// Multiplier to seconds for a unit word after the values.
fn unit_factor(word: &str) -> Option<f64> {
    match word {
        "nanoseconds" | "ns" => Some(1e-9),
        "microseconds" | "us" => Some(1e-6),
        _ => None,
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Mode {
    #[default]
    Plain,
    /// Inside a Runs table; true under a `Threads` header (rows are a sweep).
    Runs(bool),
    Experiment,
}

#[derive(Default)]
struct Parser {
    prose: Prose,
    mode: Mode,
    /// `reader_duration` of the current label, and `loop_time` per thread.
    all: Option<usize>,
    threads: HashMap<u64, usize>,
    scale_type_seen: bool,
}

impl Parser {
    fn data(&mut self) {
        if self.prose.data() {
            self.all = None;
            self.threads.clear();
        }
    }

    fn key(&self, metric: &str) -> SeriesKey {
        SeriesKey::new(metric).label(self.prose.label().map(str::to_string))
    }

    fn reader_duration(&mut self, ctx: &mut Ctx<'_>, ns: f64) -> Result<(), ParseError> {
        self.data();
        let id = match self.all {
            Some(id) => id,
            None => {
                let id = ctx.series(SeriesSpec::duration(self.key("reader_duration")));
                self.all = Some(id);
                id
            }
        };
        ctx.sample(id, ns / 1e9)
    }

    fn line(&mut self, raw: &str, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        let s = strip_mail(raw);
        let d = strip_dmesg(s).trim_end();
        let from_log = d.len() != s.trim_end().len();
        if d.is_empty() {
            self.prose.blank();
            self.mode = Mode::Plain;
            return Ok(());
        }

        // Rows continue a table or block until a line that is not one of its rows.
        match self.mode {
            Mode::Runs(threads) => {
                if let Some((run, ns)) = run_row(d) {
                    if threads {
                        self.data();
                        let key = self.key("reader_duration").param("threads", run);
                        return ctx.push(SeriesSpec::duration(key), ns / 1e9);
                    }
                    return self.reader_duration(ctx, ns);
                }
                self.mode = Mode::Plain;
            }
            Mode::Experiment => {
                if let Some(pairs) = experiment_pairs(d) {
                    self.data();
                    for (thread, ns) in pairs {
                        let id = match self.threads.get(&thread) {
                            Some(&id) => id,
                            None => {
                                let key = self.key("loop_time").scope(format!("thread{thread}"));
                                let id = ctx.series(SeriesSpec::duration(key));
                                self.threads.insert(thread, id);
                                id
                            }
                        };
                        ctx.sample(id, ns / 1e9)?;
                    }
                    return Ok(());
                }
                self.mode = Mode::Plain;
            }
            Mode::Plain => {}
        }

        let (body, prefixed) = match split_prefix(d) {
            Some((ty, rest)) => {
                if !self.scale_type_seen {
                    self.scale_type_seen = true;
                    ctx.meta("scale_type", ty);
                }
                (rest.trim(), true)
            }
            None => (d, false),
        };
        if prefixed {
            if let Some(params) = body.strip_prefix("---") {
                let params = params.split_once(':').map_or(params, |x| x.1);
                for (k, v) in params.split_whitespace().filter_map(|t| t.split_once('=')) {
                    ctx.meta(k, v);
                }
                return Ok(());
            }
            if let Some(err) = body.strip_prefix("!!!") {
                ctx.warn(format!("the test reported: {}", err.trim()));
                return Ok(());
            }
        }
        if body.starts_with("Experiment #") && body.contains("Format:") {
            self.mode = Mode::Experiment;
            return Ok(());
        }
        if let Some(threads) = runs_header(body) {
            self.mode = Mode::Runs(threads);
            return Ok(());
        }
        if prefixed {
            // Verbose progress messages, `END OF TEST...`, the bare line that opens the old
            // Runs record: nothing to measure.
            return Ok(());
        }
        if let Some(points) = d.strip_prefix("Points:") {
            for tok in points.split_whitespace() {
                let v = parse_number(tok)
                    .ok_or_else(|| ParseError::syntax(ctx.line, "a reader duration in ns", tok))?;
                self.reader_duration(ctx, v)?;
            }
            return Ok(());
        }
        if let Some((stat, rest)) = summary_row(d) {
            self.data();
            let mut factor = 1e-9;
            let mut values = Vec::new();
            for tok in rest.split_whitespace() {
                match parse_number(tok) {
                    Some(v) => values.push(v),
                    None => match unit_factor(tok) {
                        Some(f) => factor = f,
                        None => {
                            return Err(ParseError::syntax(
                                ctx.line,
                                "reader durations in nanoseconds",
                                rest.trim(),
                            ));
                        }
                    },
                }
            }
            if values.is_empty() {
                return Err(ParseError::syntax(
                    ctx.line,
                    "a reader duration",
                    rest.trim(),
                ));
            }
            let key = self.key("reader_duration").statistic(stat);
            let id = ctx.series(SeriesSpec::duration(key));
            for v in values {
                ctx.sample(id, v * factor)?;
            }
            return Ok(());
        }
        if let Some(rest) = d.strip_prefix("Computed from ") {
            ctx.meta("computed_from", rest.trim_end_matches('.'));
            return Ok(());
        }
        if d.starts_with("No refscale records found") || d.starts_with("No refperf records found") {
            ctx.warn(d);
            return Ok(());
        }
        if from_log {
            return Ok(());
        }
        if let Some(config) = d.strip_suffix(" results:")
            && !config.contains(char::is_whitespace)
        {
            // kvm-recheck names the configuration a summary belongs to.
            self.prose.blank();
            self.prose.text(&format!("{config}:"));
            return Ok(());
        }
        self.prose.text(d);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs() {
        assert_eq!(
            experiment_pairs("0: 35123\t1: 35234\t"),
            Some(vec![(0, 35123.0), (1, 35234.0)])
        );
        assert_eq!(experiment_pairs("Unmarked accesses: x"), None);
    }

    #[test]
    fn rows() {
        assert_eq!(run_row("12\t3.286"), Some(("12", 3.286)));
        assert_eq!(run_row("12\t3"), None);
        assert_eq!(runs_header("Runs\tTime(ns)"), Some(false));
        assert_eq!(
            summary_row("Median\t3.698\t3.531").map(|x| x.0),
            Some("median")
        );
        assert_eq!(summary_row("Average people disagree"), None);
    }
}
