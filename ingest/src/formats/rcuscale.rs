//! rcuscale (formerly rcuperf) console logs and the summaries people post from them.
//!
//! Variants handled:
//! - console lines `<type>-scale:` / `<type>-perf:` (`rcu-scale:`, `srcu-scale:`, `rcu-perf:`),
//!   with or without dmesg `[ ts]` prefixes, mail quoting and indentation, interleaved with
//!   unrelated messages (ignored) and prose (used for block labels);
//! - `writer-duration: <gp> <ns>` lines: one sample of `gp_duration` (s) per line, in scope
//!   `writerN` and again in scope `all` so that a whole log pools;
//! - `--- Start of test: k=v ...` parameters, `writer N gps: M`, `start: ... batches: B` -> meta;
//! - kfree_rcu test lines (`Total time taken by all kfree'ers: ...`, all three historical forms)
//!   -> `kfree_total_time` (s), `kfree_batches` (count), `kfree_mem_footprint` (bytes, 1 MB =
//!   1024*1024), loops -> meta; a `kvm.sh` command line -> meta (`CONFIG_*`, `rcuscale.*` params);
//! - `rcu_scale: Grace-period kthread CPU time: X us` -> `gp_kthread_cpu_time` (s);
//! - kvm-recheck-rcuscale.sh and `perf bench sync rcu` summaries (`Average grace-period
//!   duration: X microseconds`, Minimum, Nth percentile, Maximum; µs) -> `gp_duration` series
//!   marked with a statistic (`mean`, `min`, `p50`, `p90`, `p99`, `max`); `perf bench` options
//!   become series params, `Grace periods: ... Batches: ...` lines meta; histograms are skipped;
//! - free-form tables (`median (usecs) 12000.3 12001` under a `5ms 10ms` column row): one
//!   statistic series per column with the column as a param (`preempt_off_ms=5`) and the version
//!   line above the row as the label.
//!
//! Blocks are labelled by the prose line(s) before them that end with `:` (`RCU:`,
//! `with a patch:`), without the colon.

use std::collections::BTreeMap;

use super::Format;
pub(crate) use super::prose_labels::Prose;
use crate::error::ParseError;
use crate::lines::{
    Lines, find_str, parse_number, split_once_str, strip_dmesg, strip_mail, trim, trim_end, words,
};
use crate::model::{Ctx, Direction, FastMap, SeriesKey, SeriesSpec, Unit};

pub struct RcuScale;

const MIB: f64 = 1024.0 * 1024.0;

impl Format for RcuScale {
    fn name(&self) -> &'static str {
        "rcuscale"
    }

    fn description(&self) -> &'static str {
        "rcuscale/rcuperf console logs (writer-duration, kfree_rcu test), kvm-recheck-rcuscale and perf bench sync rcu summaries"
    }

    fn sniff(&self, head: &str) -> u32 {
        let mut score = 0;
        let mut rcuperf_words = false;
        let mut table_row = false;
        for raw in head.lines().take(2000) {
            let line = strip_dmesg(strip_mail(raw));
            if line.contains("writer-duration:")
                || line.contains("grace-period duration:")
                || line.contains("Total time taken by all kfree'ers")
                || line.contains("Running 'sync/rcu' benchmark")
            {
                return 95;
            }
            if let Some((_, rest)) = split_prefix(line) {
                let rest = rest.trim_start();
                if rest.starts_with("---")
                    || rest.starts_with("writer ")
                    || rest.starts_with("start:")
                {
                    return 90;
                }
                score = score.max(60);
            }
            if line.contains("rcuperf") || line.contains("rcuscale") {
                rcuperf_words = true;
            }
            if parse_stat_row(line).is_some() {
                table_row = true;
            }
        }
        if table_row && rcuperf_words {
            score = score.max(50);
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
                "rcuscale/rcuperf measurements (writer-duration lines, kfree_rcu totals or grace-period summaries)",
            ));
        }
        Ok(())
    }
}

/// Splits `<type>-scale:` / `<type>-perf:` off a console line, returning the type and the rest.
/// refscale's `<type>-ref-scale:` is not ours.
fn split_prefix(line: &str) -> Option<(&str, &str)> {
    crate::lines::split_console_prefix(line, &["-scale:", "-perf:"])
        .filter(|(ty, _)| !ty.ends_with("-ref"))
}

/// `k=v` tokens of a line, or None if any token is something else.
fn kv_tokens(s: &str) -> Option<Vec<(&str, &str)>> {
    let mut out = Vec::new();
    for tok in words(s) {
        let (k, v) = tok.split_once('=')?;
        if k.is_empty() || !k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            return None;
        }
        out.push((k, v));
    }
    (!out.is_empty()).then_some(out)
}

/// Multiplier to seconds for a unit word (`usecs`, `microseconds`, `ms`, ...).
fn time_unit(word: &str) -> Option<f64> {
    match word.trim_matches(|c| c == '(' || c == ')' || c == '[' || c == ']') {
        "us" | "usec" | "usecs" | "µs" | "microseconds" | "microsecond" => Some(1e-6),
        "ms" | "msec" | "msecs" | "milliseconds" => Some(1e-3),
        "ns" | "nsec" | "nsecs" | "nanoseconds" => Some(1e-9),
        "s" | "sec" | "secs" | "seconds" => Some(1.0),
        _ => None,
    }
}

/// The statistic a row or summary word names.
fn statistic_word(w: &str) -> Option<String> {
    // Compared without allocating: most words of a file are not statistics.
    let is = |names: &[&str]| names.iter().any(|n| w.eq_ignore_ascii_case(n));
    let s = if is(&["median"]) {
        "median"
    } else if is(&["mean", "average", "avg"]) {
        "mean"
    } else if is(&["min", "minimum"]) {
        "min"
    } else if is(&["max", "maximum"]) {
        "max"
    } else {
        let n = w.strip_prefix(['p', 'P'])?;
        if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        return Some(w.to_ascii_lowercase());
    };
    Some(s.to_string())
}

/// A free-form table row `median (usecs) 12000.3 12001 11000 12000`: statistic, unit factor,
/// values.
fn parse_stat_row(line: &str) -> Option<(String, f64, Vec<f64>)> {
    let mut toks = words(line);
    let stat = statistic_word(toks.next()?)?;
    let unit_tok = toks.next()?;
    if !unit_tok.starts_with('(') {
        return None;
    }
    let factor = time_unit(unit_tok)?;
    let values: Option<Vec<f64>> = toks.map(parse_number).collect();
    let values = values?;
    (!values.is_empty()).then_some((stat, factor, values))
}

/// A column row such as `5ms 10ms 20ms 50ms`: (number, unit) per column, all units equal.
fn parse_column_row(line: &str) -> Option<(String, Vec<String>)> {
    let mut unit: Option<&str> = None;
    let mut values = Vec::new();
    for tok in words(line) {
        let split = tok.find(|c: char| !(c.is_ascii_digit() || c == '.'))?;
        if split == 0 {
            return None;
        }
        let (num, u) = tok.split_at(split);
        if !u.bytes().all(|b| b.is_ascii_alphabetic()) {
            return None;
        }
        if unit.is_some_and(|x| x != u) {
            return None;
        }
        unit = Some(u);
        values.push(num.to_string());
    }
    (values.len() >= 2).then(|| (unit.unwrap_or_default().to_string(), values))
}

/// Parameter name for a column heading like `(preempt disable duration)` in unit `ms`:
/// `preempt_off_ms`, using the kernel's own word for a disabled state and dropping the
/// generic "duration".
fn param_name(heading: Option<&str>, unit: &str) -> String {
    let mut words: Vec<String> = Vec::new();
    if let Some(h) = heading {
        for w in h
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            let w = w.to_ascii_lowercase();
            match w.as_str() {
                "duration" | "time" | "length" => {}
                "disable" | "disabled" => words.push("off".into()),
                _ => words.push(w),
            }
        }
    }
    if words.is_empty() {
        words.push("column".into());
    }
    if !unit.is_empty() {
        words.push(unit.to_ascii_lowercase());
    }
    words.join("_")
}

/// The kvm-recheck-rcuscale summary line: statistic and the text after the colon.
fn gp_summary(line: &str) -> Option<(String, &str)> {
    let (head, rest) = split_once_str(line, " grace-period duration:")?;
    let head = head.trim();
    let stat = if let Some(n) = head.strip_suffix(" percentile") {
        let digits = n.trim_end_matches(|c: char| c.is_ascii_alphabetic());
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        format!("p{digits}")
    } else {
        statistic_word(head)?
    };
    Some((stat, rest))
}

#[derive(Default)]
struct Parser {
    prose: Prose,
    /// Series ids of `gp_duration` per writer, and of scope `all`, for the current label.
    writers: FastMap<u64, usize>,
    all: Option<usize>,
    /// `perf bench sync rcu` options of the current experiment.
    params: BTreeMap<String, String>,
    /// Unit factor of the current summary block (from its Average line).
    summary_factor: f64,
    in_histogram: bool,
    in_kvm_cmd: bool,
    after_params: bool,
    /// The previous line, when it was prose (table row labels).
    last_prose: Option<String>,
    /// Column row of a free-form table: param name and values.
    columns: Option<(String, Vec<String>)>,
    scale_type_seen: bool,
}

impl Parser {
    /// Meta key for facts that belong to a block: labelled blocks keep their own.
    fn block_key(&self, key: &str) -> String {
        match self.prose.label() {
            Some(l) => format!("{key} [{l}]"),
            None => key.to_string(),
        }
    }

    fn data(&mut self) {
        if self.prose.data() {
            self.writers.clear();
            self.all = None;
        }
        self.last_prose = None;
    }

    fn key(&self, metric: &str) -> SeriesKey {
        SeriesKey::new(metric).label(self.prose.label().map(str::to_string))
    }

    fn line(&mut self, raw: &str, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        let s = strip_mail(raw);
        let d = strip_dmesg(s);
        let from_log = d.len() != s.len();
        if trim(d).is_empty() {
            self.prose.blank();
            self.in_histogram = false;
            self.after_params = false;
            self.in_kvm_cmd = false;
            return Ok(());
        }
        let d = trim_end(d);

        if self.in_histogram {
            let mut t = words(d);
            if let (Some(a), Some(b), None) = (t.next(), t.next(), t.next())
                && parse_number(a).is_some()
                && parse_number(b).is_some()
            {
                return Ok(());
            }
            self.in_histogram = false;
        }

        if self.after_params {
            self.after_params = false;
            // A mail-wrapped Start-of-test line continues with bare k=v tokens.
            if let Some(kvs) = kv_tokens(d) {
                for (k, v) in kvs {
                    ctx.meta(&self.block_key(k), v);
                }
                self.after_params = true;
                return Ok(());
            }
        }

        if let Some((ty, rest)) = split_prefix(d) {
            return self.console(ty, rest, ctx);
        }
        if let Some(rest) = split_once_str(d, "Total time taken by all kfree'ers:").map(|x| x.1) {
            return self.kfree(rest, ctx);
        }
        if let Some((stat, rest)) = gp_summary(d) {
            return self.summary(&stat, rest, ctx);
        }
        if let Some(rest) = split_once_str(d, "Grace-period kthread CPU time:").map(|x| x.1) {
            self.data();
            let mut t = words(rest);
            let v = t.next().and_then(parse_number).ok_or_else(|| {
                ParseError::syntax(ctx.line, "a CPU time in microseconds", rest.trim())
            })?;
            let factor = t.next().and_then(time_unit).unwrap_or(1e-6);
            let key = self.key("gp_kthread_cpu_time");
            return ctx.push(SeriesSpec::duration(key), v * factor);
        }
        if let Some(rest) = d.strip_prefix("Histogram bucket size:") {
            self.data();
            ctx.meta(&self.block_key("histogram_bucket_size"), rest.trim());
            self.in_histogram = true;
            return Ok(());
        }
        if let Some(rest) = d.strip_prefix("Grace periods:") {
            self.data();
            // `Grace periods: 101 Batches: 1 Ratio: 101 CPU: 0.5`
            let text = format!("Grace periods:{rest}");
            let mut words: Vec<&str> = Vec::new();
            let mut pending: Option<String> = None;
            for tok in crate::lines::words(&text) {
                if let Some(k) = pending.take() {
                    ctx.meta(&self.block_key(&k), tok);
                } else if let Some(w) = tok.strip_suffix(':') {
                    words.push(w);
                    pending = Some(words.join("_").to_ascii_lowercase());
                    words.clear();
                } else {
                    words.push(tok);
                }
            }
            return Ok(());
        }
        if let Some(rest) = d.strip_prefix("Computed from ") {
            ctx.meta(&self.block_key("computed_from"), rest.trim_end_matches('.'));
            return Ok(());
        }
        if let Some(rest) = d.strip_prefix("Running experiment with options:") {
            // perf bench sync rcu: the options of this experiment are its parameters.
            self.params = kv_tokens(rest)
                .unwrap_or_default()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            return Ok(());
        }
        if d.trim_start_matches('\\')
            .starts_with("# Running 'sync/rcu' benchmark")
        {
            ctx.meta("benchmark", "perf bench sync rcu");
            return Ok(());
        }
        if let Some(v) = d.strip_prefix("kfree object size=") {
            ctx.meta(&self.block_key("kfree_object_size"), v.trim());
            return Ok(());
        }
        if (self.columns.is_some() || self.last_prose.is_some())
            && let Some((stat, factor, values)) = parse_stat_row(d)
        {
            return self.table_row(&stat, factor, &values, ctx);
        }
        if let Some((unit, values)) = parse_column_row(d) {
            let heading = self
                .last_prose
                .as_deref()
                .filter(|h| h.starts_with('(') && h.ends_with(')'));
            let name = param_name(heading, &unit);
            self.columns = Some((name, values));
            self.last_prose = None;
            return Ok(());
        }
        if words(d).next().is_some_and(|w| w.ends_with("kvm.sh")) || self.in_kvm_cmd {
            self.kvm_cmd(d, ctx);
            return Ok(());
        }
        if from_log {
            // Another subsystem's console message.
            return Ok(());
        }
        self.prose_line(d, ctx);
        Ok(())
    }

    fn prose_line(&mut self, d: &str, ctx: &mut Ctx<'_>) {
        // `nreaders = nwriters = 10.`: parameters stated in prose.
        let t = d.trim_end_matches('.');
        if find_str(t, " = ").is_some()
            && let parts = t.split(" = ").map(str::trim).collect::<Vec<&str>>()
            && parts.len() >= 2
            && let Some(v) = parts.last().filter(|v| parse_number(v).is_some())
            && parts[..parts.len() - 1]
                .iter()
                .all(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        {
            for k in &parts[..parts.len() - 1] {
                ctx.meta(k, *v);
            }
        }
        self.prose.text(d);
        self.last_prose = Some(d.trim().to_string());
    }

    fn kvm_cmd(&mut self, d: &str, ctx: &mut Ctx<'_>) {
        self.in_kvm_cmd = d.ends_with('\\');
        let mut toks = words(d).peekable();
        while let Some(tok) = toks.next() {
            let tok = tok.trim_matches('"');
            if tok == "--duration"
                && let Some(v) = toks.peek()
            {
                ctx.meta("kvm_duration", *v);
                continue;
            }
            if let Some((k, v)) = tok.split_once('=') {
                if k.starts_with("CONFIG_") {
                    ctx.meta(k, v);
                } else if let Some(p) = k
                    .strip_prefix("rcuscale.")
                    .or_else(|| k.strip_prefix("rcuperf."))
                {
                    ctx.meta(p, v);
                }
            }
        }
    }

    fn console(&mut self, ty: &str, rest: &str, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        if !self.scale_type_seen {
            self.scale_type_seen = true;
            ctx.meta("scale_type", ty);
        }
        let line = ctx.line;
        if let Some(params) = rest.strip_prefix("---") {
            // `--- Start of test: nreaders=..`, `--- End of test: ...`
            let params = params.split_once(':').map_or(params, |x| x.1);
            for (k, v) in words(params).filter_map(|t| t.split_once('=')) {
                ctx.meta(&self.block_key(k), v);
            }
            self.after_params = true;
            return Ok(());
        }
        if let Some(err) = rest.strip_prefix("!!!") {
            ctx.warn(format!("the test reported: {}", err.trim()));
            return Ok(());
        }
        let rest = rest.trim();
        // The tokens, on the stack for the common short line.
        let mut few = [""; 8];
        let mut n = 0;
        let mut many = Vec::new();
        for t in words(rest) {
            if n < few.len() {
                few[n] = t;
            } else {
                if many.is_empty() {
                    many.extend_from_slice(&few);
                }
                many.push(t);
            }
            n += 1;
        }
        let toks: &[&str] = if n <= few.len() { &few[..n] } else { &many };
        match toks {
            [w, "writer-duration:", gp, ns] => {
                let (Some(w), Some(_), Some(ns)) = (parse_u64(w), parse_u64(gp), parse_number(ns))
                else {
                    return Err(ParseError::syntax(
                        line,
                        "`<writer> writer-duration: <gp> <ns>`",
                        rest,
                    ));
                };
                self.data();
                let v = ns / 1e9;
                let id = match self.writers.get(&w) {
                    Some(&id) => id,
                    None => {
                        let id = ctx.series(SeriesSpec::duration(
                            self.key("gp_duration").scope(format!("writer{w}")),
                        ));
                        self.writers.insert(w, id);
                        id
                    }
                };
                ctx.sample(id, v)?;
                let all = match self.all {
                    Some(id) => id,
                    None => {
                        let id = ctx.series(SeriesSpec::duration(self.key("gp_duration")));
                        self.all = Some(id);
                        id
                    }
                };
                ctx.sample(all, v)
            }
            [_, "writer-duration:", ..] => Err(ParseError::syntax(
                line,
                "`<writer> writer-duration: <gp> <ns>`",
                rest,
            )),
            ["writer", w, "gps:", n] => {
                let (Some(w), Some(_)) = (parse_u64(w), parse_u64(n)) else {
                    return Err(ParseError::syntax(line, "`writer <N> gps: <M>`", rest));
                };
                self.data();
                ctx.meta(&self.block_key(&format!("writer{w}_gps")), *n);
                Ok(())
            }
            ["start:", ..] => {
                // `start: <ns> end: <ns> duration: <ns> gps: <n> batches: <n>`
                self.data();
                for pair in toks.chunks(2) {
                    if let [k, v] = pair {
                        ctx.meta(&self.block_key(k.trim_end_matches(':')), *v);
                    }
                }
                Ok(())
            }
            ["Test", "complete"] => Ok(()),
            [.., "task", "started"] | [.., "task", "stopping"] => Ok(()),
            ["rcu_scale_writer", _, "has", _, "measurements"] => Ok(()),
            [.., "done"] => Ok(()),
            ["invalid", "scale", "type:", ..] | ["types:", ..] => {
                ctx.warn(format!("the test reported: {rest}"));
                Ok(())
            }
            _ => {
                // A line of the benchmark that this parser does not know: reported, not lost.
                ctx.warn(format!("unrecognised {ty}-scale line: {rest}"));
                Ok(())
            }
        }
    }

    fn kfree(&mut self, rest: &str, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        // `6564718459 ns, loops: 10000, batches: 1110, memory footprint: 5057MB` and the older
        // `<ns> , loops <n>` / `<ns> ns, loops: <n>, batches: <n>` forms.
        let line = ctx.line;
        self.data();
        let mut parts = rest.split(',');
        let first = parts.next().unwrap_or("");
        let ns = first
            .split_whitespace()
            .next()
            .and_then(parse_number)
            .ok_or_else(|| ParseError::syntax(line, "a total time in ns", first.trim()))?;
        ctx.push(SeriesSpec::duration(self.key("kfree_total_time")), ns / 1e9)?;
        for part in parts {
            let part = part.trim();
            let split = part
                .find(|c: char| c.is_ascii_digit())
                .ok_or_else(|| ParseError::syntax(line, "`name: <number>`", part))?;
            let name = part[..split].trim().trim_end_matches(':').trim();
            let num_text = &part[split..];
            let digits_end = num_text
                .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(num_text.len());
            let v = parse_number(&num_text[..digits_end])
                .ok_or_else(|| ParseError::syntax(line, "a number", num_text))?;
            let suffix = num_text[digits_end..].trim();
            match name {
                "loops" => ctx.meta(&self.block_key("kfree_loops"), &num_text[..digits_end]),
                "batches" => ctx.push(SeriesSpec::count(self.key("kfree_batches")), v)?,
                "memory footprint" => {
                    let factor = match suffix {
                        "MB" | "MiB" | "" => MIB,
                        "KB" | "KiB" | "kB" => 1024.0,
                        "GB" | "GiB" => MIB * 1024.0,
                        other => {
                            return Err(ParseError::bad_value(
                                line,
                                "memory footprint unit",
                                other,
                                "expected MB",
                            ));
                        }
                    };
                    ctx.push(
                        SeriesSpec::new(
                            self.key("kfree_mem_footprint"),
                            Unit::Bytes,
                            Direction::LowerIsBetter,
                        ),
                        v * factor,
                    )?;
                }
                other => ctx.warn(format!("unknown kfree_rcu test field {other:?}")),
            }
        }
        Ok(())
    }

    fn summary(&mut self, stat: &str, rest: &str, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        let line = ctx.line;
        self.data();
        let mut t = words(rest);
        let v = t
            .next()
            .and_then(parse_number)
            .ok_or_else(|| ParseError::syntax(line, "a grace-period duration", rest.trim()))?;
        if stat == "mean" {
            // Only the Average line names the unit; it holds for the block.
            self.summary_factor = t.next().and_then(time_unit).unwrap_or(1e-6);
        } else if let Some(f) = t.next().and_then(time_unit) {
            self.summary_factor = f;
        }
        if self.summary_factor == 0.0 {
            self.summary_factor = 1e-6;
        }
        let mut key = self.key("gp_duration").statistic(stat);
        key.params = self.params.clone();
        ctx.push(SeriesSpec::duration(key), v * self.summary_factor)
    }

    fn table_row(
        &mut self,
        stat: &str,
        factor: f64,
        values: &[f64],
        ctx: &mut Ctx<'_>,
    ) -> Result<(), ParseError> {
        let label = self.last_prose.take();
        self.data();
        let label = label.or_else(|| self.prose.label().map(str::to_string));
        match &self.columns {
            Some((name, cols)) if cols.len() == values.len() => {
                for (col, v) in cols.iter().zip(values) {
                    let key = SeriesKey::new("gp_duration")
                        .label(label.clone())
                        .statistic(stat)
                        .param(name.clone(), col.clone());
                    ctx.push(SeriesSpec::duration(key), v * factor)?;
                }
            }
            Some((_, cols)) => {
                ctx.warn(format!(
                    "table row has {} values but the column row above has {}",
                    values.len(),
                    cols.len()
                ));
            }
            None => {
                for v in values {
                    let key = SeriesKey::new("gp_duration")
                        .label(label.clone())
                        .statistic(stat);
                    ctx.push(SeriesSpec::duration(key), v * factor)?;
                }
            }
        }
        Ok(())
    }
}

fn parse_u64(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statistic_words() {
        for (w, want) in [
            ("Median", Some("median")),
            ("AVG", Some("mean")),
            ("minimum", Some("min")),
            ("Max", Some("max")),
            ("P99", Some("p99")),
            ("p", None),
            ("p9x", None),
            ("......", None),
            ("med\u{e9}", None),
        ] {
            assert_eq!(statistic_word(w).as_deref(), want, "{w}");
        }
    }

    #[test]
    fn prefixes() {
        assert_eq!(split_prefix("rcu-scale: x"), Some(("rcu", " x")));
        assert_eq!(split_prefix("srcu-perf:--- a"), Some(("srcu", "--- a")));
        assert_eq!(split_prefix("rcu-ref-scale: x"), None);
        assert_eq!(split_prefix("see the rcu-scale: x"), None);
    }

    #[test]
    fn wrapped_label_is_joined() {
        let mut p = Prose::default();
        p.text("shazptr (skip_synchronize_self_scan=1, i.e. always let scan kthread to");
        p.text("wakeup):");
        p.blank();
        assert!(p.data());
        assert_eq!(
            p.label(),
            Some("shazptr (skip_synchronize_self_scan=1, i.e. always let scan kthread to wakeup)")
        );
        p.text("a remark without a colon");
        assert!(!p.data());
        assert_eq!(
            p.label(),
            Some("shazptr (skip_synchronize_self_scan=1, i.e. always let scan kthread to wakeup)")
        );
    }

    #[test]
    fn column_param_name() {
        assert_eq!(
            param_name(Some("(preempt disable duration)"), "ms"),
            "preempt_off_ms"
        );
        assert_eq!(param_name(None, "ms"), "column_ms");
    }
}
