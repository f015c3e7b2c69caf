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

mod rows;
mod scan;
mod sniff;
mod writers;

use std::collections::BTreeMap;

use super::Format;
pub(crate) use super::prose_labels::Prose;
use super::prose_labels::find_byte;
use super::recent::Recent;
use crate::error::ParseError;
use crate::lines::{
    Lines, find_str, is_space, parse_number, strip_dmesg, strip_mail, trim, trim_end, words,
};
use crate::model::{Ctx, Direction, SeriesKey, SeriesSpec, Unit};
use rows::{
    gp_summary, kv_tokens, param_name, parse_column_row, parse_stat_row, parse_u64, time_unit,
};
use scan::{Colons, SCALE, first_word_is_kvm_sh, push_decimal, split_prefix, starts_with};
use writers::{WriterSeries, writer_duration, writer_gps};

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
        sniff::sniff(head)
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

/// The spaces and tabs that start a line: what [`Parser::line`] skips before it looks.
fn indentation(raw: &str) -> usize {
    raw.bytes().take_while(|&c| c == b' ' || c == b'\t').count()
}

#[derive(Default)]
struct Parser {
    prose: Prose,
    /// Series of the writer-duration lines.
    gp: WriterSeries,
    /// `perf bench sync rcu` options of the current experiment.
    params: BTreeMap<String, String>,
    /// Unit factor of the current summary block (from its Average line).
    summary_factor: f64,
    in_histogram: bool,
    in_kvm_cmd: bool,
    after_params: bool,
    /// The previous line, when it was prose (table row labels).
    last_prose: LastProse,
    /// Column row of a free-form table: param name and values.
    columns: Option<(String, Vec<String>)>,
    scale_type_seen: bool,
    /// Room for a metadata key, reused from line to line.
    key_buf: String,
    /// The `<type>-scale:` prefix of the last console line that had one.
    prefix: String,
    /// Lines the general reading took for plain prose lately (no console prefix, no
    /// measurement, no `k = v`, no kvm.sh command).
    prose_seen: Recent<()>,
}

/// The previous line when it was prose, in a buffer kept across lines.
#[derive(Default)]
struct LastProse {
    text: String,
    set: bool,
}

impl LastProse {
    fn get(&self) -> Option<&str> {
        self.set.then_some(self.text.as_str())
    }

    fn set(&mut self, line: &str) {
        self.text.clear();
        self.text.push_str(line);
        self.set = true;
    }

    fn clear(&mut self) {
        self.set = false;
    }

    fn take(&mut self) -> Option<String> {
        let text = self.get().map(str::to_string);
        self.set = false;
        text
    }
}

impl Parser {
    /// Meta key for facts that belong to a block: labelled blocks keep their own.
    fn block_key(&mut self, key: &str) -> &str {
        self.key_buf.clear();
        self.key_buf.push_str(key);
        self.label_key()
    }

    /// Appends the block label to the key in `key_buf`.
    fn label_key(&mut self) -> &str {
        if let Some(l) = self.prose.label() {
            self.key_buf.push_str(" [");
            self.key_buf.push_str(l);
            self.key_buf.push(']');
        }
        &self.key_buf
    }

    /// Sets a metadata value of the current block.
    fn block_meta(&mut self, ctx: &mut Ctx<'_>, key: &str, value: &str) {
        ctx.meta(self.block_key(key), value);
    }

    fn data(&mut self) {
        if self.prose.data() {
            self.gp.relabel();
        }
        self.last_prose.clear();
    }

    fn key(&self, metric: &str) -> SeriesKey {
        SeriesKey::new(metric).label(self.prose.label().map(str::to_string))
    }

    #[inline]
    fn line(&mut self, raw: &str, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        // A line that starts (after indentation) with a letter or digit is the same after the
        // stripping below but for its trailing spaces: its console prefix is looked for here,
        // once, and the common writer-duration line is read without the rest.
        let body = &raw[indentation(raw)..];
        match body.as_bytes().first() {
            Some(c) if c.is_ascii_alphanumeric() => {}
            // Spaces and tabs alone: what `general` does with a blank line, without its
            // stripping of mail quotes and dmesg stamps.
            None => {
                self.blank();
                return Ok(());
            }
            // A line of dots (an elision in posted logs, a tenth of some mails' lines) outside
            // the states that read the next line their own way: prose, as `general` takes it.
            // `prose_line` without its search for `k = v`, which dots cannot hold (the call
            // and the search cost a thirtieth of this parse).
            Some(b'.') if !self.reads_own_way() && body.bytes().all(|b| b == b'.') => {
                self.prose.text_dots(body);
                self.last_prose.set(body);
                return Ok(());
            }
            Some(_) => return self.general(raw, body, None, ctx),
        }
        let console = match self.known_prefix(body) {
            Some(found) => Some(found),
            // A heading read as prose before is prose again (see `general`), without the
            // search for another prefix: it has none.
            None if self.prose_again(trim_end(body)) => return Ok(()),
            None => self.new_prefix(body),
        };
        if let Some((ty, rest)) = console {
            // Neither a histogram row nor `k=v` tokens: the states those read end here.
            if let Some((w, ns)) = writer_duration(rest) {
                self.in_histogram = false;
                self.after_params = false;
                self.scale_type(ty, ctx);
                return self.writer_sample(w, ns, ctx);
            }
            if let Some((w, n)) = writer_gps(rest) {
                self.in_histogram = false;
                self.after_params = false;
                self.scale_type(ty, ctx);
                self.writer_gps(w, n, ctx);
                return Ok(());
            }
        }
        self.general(raw, body, Some(console), ctx)
    }

    /// Every line but the common console lines; `console` is the prefix of `body` when it was
    /// looked for already.
    #[inline(never)]
    fn general<'a>(
        &mut self,
        raw: &'a str,
        body: &'a str,
        console: Option<Option<(&'a str, &'a str)>>,
        ctx: &mut Ctx<'_>,
    ) -> Result<(), ParseError> {
        // Nothing to strip from a line that starts with another ASCII char than a quote mark,
        // a bracket or a space.
        let plain = body
            .as_bytes()
            .first()
            .is_some_and(|&c| c.is_ascii() && !is_space(c) && c != b'>' && c != b'[');
        let (d, from_log) = if plain {
            // Nothing to trim after a visible ASCII last byte.
            let trimmed = if body.as_bytes().last().is_some_and(u8::is_ascii_graphic) {
                body
            } else {
                trim_end(body)
            };
            (trimmed, false)
        } else {
            let s = strip_mail(raw);
            let d = strip_dmesg(s);
            let from_log = d.len() != s.len();
            if trim(d).is_empty() {
                self.blank();
                return Ok(());
            }
            (trim_end(d), from_log)
        };

        if !from_log && self.prose_again(d) {
            return Ok(());
        }

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
                    self.block_meta(ctx, k, v);
                }
                self.after_params = true;
                return Ok(());
            }
        }

        // `d` is not empty: blank lines returned above. Its first byte lets most lines skip
        // the prefixes below without a comparison.
        let c0 = d.as_bytes()[0];
        // A line of dots (an elision in posted logs) is none of the lines looked for below.
        if c0 == b'.' && d.bytes().all(|b| b == b'.') {
            self.other_line(d, from_log, ctx);
            return Ok(());
        }
        let console = match console {
            Some(found) => found.map(|(ty, rest)| (ty, trim_end(rest))),
            // A console prefix starts with a type character.
            None if c0.is_ascii_alphanumeric() || c0 == b'-' || c0 == b'_' => split_prefix(d),
            None => None,
        };
        if let Some((ty, rest)) = console {
            return self.console(ty, rest, ctx);
        }
        let colons = Colons::of(d);
        if colons.any() {
            if let Some((_, rest)) = colons.split(d, "Total time taken by all kfree'ers:") {
                return self.kfree(rest, ctx);
            }
            if colons.split(d, " grace-period duration:").is_some()
                && let Some((stat, rest)) = gp_summary(d)
            {
                return self.summary(&stat, rest, ctx);
            }
        }
        if colons.any()
            && let Some((_, rest)) = colons.split(d, "Grace-period kthread CPU time:")
        {
            self.data();
            let mut t = words(rest);
            let v = t.next().and_then(parse_number).ok_or_else(|| {
                ParseError::syntax(ctx.line, "a CPU time in microseconds", rest.trim())
            })?;
            let factor = t.next().and_then(time_unit).unwrap_or(1e-6);
            let key = self.key("gp_kthread_cpu_time");
            return ctx.push(SeriesSpec::duration(key), v * factor);
        }
        if c0 == b'H'
            && let Some(rest) = d.strip_prefix("Histogram bucket size:")
        {
            self.data();
            self.block_meta(ctx, "histogram_bucket_size", rest.trim());
            self.in_histogram = true;
            return Ok(());
        }
        if c0 == b'G'
            && let Some(rest) = d.strip_prefix("Grace periods:")
        {
            self.data();
            // `Grace periods: 101 Batches: 1 Ratio: 101 CPU: 0.5`
            let text = format!("Grace periods:{rest}");
            let mut words: Vec<&str> = Vec::new();
            let mut pending: Option<String> = None;
            for tok in crate::lines::words(&text) {
                if let Some(k) = pending.take() {
                    self.block_meta(ctx, &k, tok);
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
        if c0 == b'C'
            && let Some(rest) = d.strip_prefix("Computed from ")
        {
            self.block_meta(ctx, "computed_from", rest.trim_end_matches('.'));
            return Ok(());
        }
        if c0 == b'R'
            && let Some(rest) = d.strip_prefix("Running experiment with options:")
        {
            // perf bench sync rcu: the options of this experiment are its parameters.
            self.params = kv_tokens(rest)
                .unwrap_or_default()
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
            return Ok(());
        }
        if matches!(c0, b'\\' | b'#')
            && d[d.bytes().take_while(|&b| b == b'\\').count()..]
                .starts_with("# Running 'sync/rcu' benchmark")
        {
            ctx.meta("benchmark", "perf bench sync rcu");
            return Ok(());
        }
        if c0 == b'k'
            && let Some(v) = d.strip_prefix("kfree object size=")
        {
            self.block_meta(ctx, "kfree_object_size", v.trim());
            return Ok(());
        }
        if (self.columns.is_some() || self.last_prose.set)
            && let Some((stat, factor, values)) = parse_stat_row(d)
        {
            return self.table_row(&stat, factor, &values, ctx);
        }
        // A column row starts with a digit or a dot (or a byte the general reading judges).
        if (!c0.is_ascii() || c0.is_ascii_digit() || c0 == b'.' || is_space(c0))
            && let Some((unit, values)) = parse_column_row(d)
        {
            let heading = self
                .last_prose
                .get()
                .filter(|h| h.starts_with('(') && h.ends_with(')'));
            let name = param_name(heading, &unit);
            self.columns = Some((name, values));
            self.last_prose.clear();
            return Ok(());
        }
        // Remembered only when the table-row check, which the state may have skipped, would
        // not take it either.
        if self.other_line(d, from_log, ctx) && parse_stat_row(d).is_none() {
            self.prose_seen.remember(d, ());
        }
        Ok(())
    }

    /// Whether a state is on that reads the next line its own way: a histogram, a wrapped
    /// Start-of-test line, a kvm.sh command.
    fn reads_own_way(&self) -> bool {
        self.in_histogram || self.after_params || self.in_kvm_cmd
    }

    /// A blank line: ends the paragraph and the states that read the lines after theirs.
    fn blank(&mut self) {
        self.prose.blank();
        self.in_histogram = false;
        self.after_params = false;
        self.in_kvm_cmd = false;
    }

    /// A line that is no measurement: a kvm.sh command, another subsystem's console message
    /// or prose. True when it was read as plain prose (no ` = ` in it).
    fn other_line(&mut self, d: &str, from_log: bool, ctx: &mut Ctx<'_>) -> bool {
        if self.in_kvm_cmd || first_word_is_kvm_sh(d) {
            self.kvm_cmd(d, ctx);
            false
        } else if !from_log {
            !self.prose_line(d, ctx)
        } else {
            false
        }
    }

    /// True when the line has ` = `, whether or not it stated parameters.
    fn prose_line(&mut self, d: &str, ctx: &mut Ctx<'_>) -> bool {
        // `nreaders = nwriters = 10.`: parameters stated in prose.
        let t = &d[..d.len() - d.bytes().rev().take_while(|&b| b == b'.').count()];
        // No `=`, no ` = `: most prose is refused without a search.
        let params = find_byte(t.as_bytes(), b'=').is_some() && find_str(t, " = ").is_some();
        if params
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
        // `d` is trimmed already.
        self.last_prose.set(d);
        params
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

    /// A line read as plain prose before, in a state where nothing reads lines its own way:
    /// the checks of `general` would find nothing else in it again (each is a function of
    /// the line alone once those states are off), so it is prose, at a comparison's cost.
    /// Console logs repeat their headings (`Sample of new console output:`). `d` is the line
    /// as `general` strips it.
    #[inline]
    fn prose_again(&mut self, d: &str) -> bool {
        if self.reads_own_way() || self.prose_seen.find(d, |_| true).is_none() {
            return false;
        }
        self.prose.text(d);
        self.last_prose.set(d);
        true
    }

    /// [`split_prefix`] when the line starts as the last console line did (`rcu-scale:`):
    /// the `-scale:` prefix alone decides, by one comparison.
    #[inline]
    fn known_prefix<'a>(&self, line: &'a str) -> Option<(&'a str, &'a str)> {
        let n = self.prefix.len();
        (n > 0 && starts_with(line.as_bytes(), self.prefix.as_bytes()))
            .then(|| (&line[..n - SCALE.len()], &line[n..]))
    }

    /// [`split_prefix`] of a line without the known prefix; a `-scale:` prefix found becomes
    /// the known one.
    fn new_prefix<'a>(&mut self, line: &'a str) -> Option<(&'a str, &'a str)> {
        let (ty, rest) = split_prefix(line)?;
        if line[ty.len()..].starts_with(SCALE) {
            self.prefix.clear();
            self.prefix.push_str(&line[..ty.len() + SCALE.len()]);
        }
        Some((ty, rest))
    }

    /// The scale type of the first console line is the run's.
    fn scale_type(&mut self, ty: &str, ctx: &mut Ctx<'_>) {
        if !self.scale_type_seen {
            self.scale_type_seen = true;
            ctx.meta("scale_type", ty);
        }
    }

    fn console(&mut self, ty: &str, rest: &str, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        self.scale_type(ty, ctx);
        if let Some((w, ns)) = writer_duration(rest) {
            return self.writer_sample(w, ns, ctx);
        }
        if let Some((w, n)) = writer_gps(rest) {
            self.writer_gps(w, n, ctx);
            return Ok(());
        }
        let line = ctx.line;
        if let Some(params) = rest.strip_prefix("---") {
            // `--- Start of test: nreaders=..`, `--- End of test: ...`
            let params = params.split_once(':').map_or(params, |x| x.1);
            for (k, v) in words(params).filter_map(|t| t.split_once('=')) {
                self.block_meta(ctx, k, v);
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
                self.writer_sample(w, ns, ctx)
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
                self.writer_gps(w, n, ctx);
                Ok(())
            }
            ["start:", ..] => {
                // `start: <ns> end: <ns> duration: <ns> gps: <n> batches: <n>`
                self.data();
                for pair in toks.chunks(2) {
                    if let [k, v] = pair {
                        self.block_meta(ctx, k.trim_end_matches(':'), v);
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

    /// `writer <w> gps: <n>`: the writer's grace-period count, a fact of the block.
    fn writer_gps(&mut self, w: u64, n: &str, ctx: &mut Ctx<'_>) {
        self.data();
        if !ctx.keeps_metas() {
            // Past the cap the value would only be counted: no key to build.
            ctx.meta_dropped();
            return;
        }
        self.key_buf.clear();
        self.key_buf.push_str("writer");
        push_decimal(&mut self.key_buf, w);
        self.key_buf.push_str("_gps");
        ctx.meta(self.label_key(), n);
    }

    /// One `writer-duration` sample: in the writer's series and in scope `all`.
    #[inline(always)]
    fn writer_sample(&mut self, w: u64, ns: f64, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        self.data();
        let v = ns / 1e9;
        let (id, all) = self.gp.ids(w, self.prose.label(), ctx);
        ctx.sample(id, v)?;
        ctx.sample(all, v)
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
                "loops" => self.block_meta(ctx, "kfree_loops", &num_text[..digits_end]),
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

#[cfg(test)]
mod tests;
