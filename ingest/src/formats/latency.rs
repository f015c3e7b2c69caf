//! Latency-tracer outputs: irqsoff, preemptoff, preemptirqsoff, wakeup, wakeup_rt, wakeup_dl.
//!
//! Header generations handled (FORMATS.md §4):
//! * the -rt patch's `preemption latency trace v1.1.5 on <release>` (2.6.1x-rt): no `#`
//!   prefixes, no `# tracer:` line, no started/ended sites;
//! * mainline 2.6.26 .. 2.6.3x `latency_trace`: `# tracer: X`, then an unprefixed
//!   `X latency trace v1.1.5` header and `=> started at:` / `=> ended at:` lines;
//! * modern (3.x and later) `trace` files where every header line carries `# `.
//!
//! The `<tracer> latency trace` line is authoritative for the tracer name over `# tracer:`
//! (documentation shows a `wakeup` and a `wakeup_rt` tracer line above one trace).
//!
//! Bodies: function-trace entries (`bash-3730  1d..1    1us+: func (parent)` and
//! `func <-parent`), -rt pseudo entries (`func <comm-pid> (a b)`), sched pseudo entries
//! (`0:120:R   + [003]   312:100:R kworker/3:1H`, `==>`), event lines, the `display-graph`
//! columns (`REL TIME | CPU) TASK/PID | flags | DURATION | FUNCTION CALLS`), `[...]` elisions,
//! and the `<stack trace>` entry with its ` => frame` lines.
//!
//! Per trace:
//! * series `latency` (s, lower is better): the header's `latency: N us`;
//! * series `entries` (count, neutral): the total of the header's `#shown/total`;
//! * meta `tracer`, `kernel_version`, `cpu`, `task`, `pid`, `uid`, `nice`, `policy`, `rt_prio`,
//!   `preemption_model` (`M:`), `sp`, `hp`, `ncpus` (`#P:`), `started_at`, `ended_at`,
//!   `entries_shown` and `entries_total` (the header's two counts), `entries_listed` (entry
//!   lines present in the file: authors elide lines, so it is often smaller);
//! * extra `entries`: the listed entries as objects `{comm, pid, cpu, flags, time_us, mark,
//!   func, parent}` (display-graph entries add `duration_us`), at most
//!   [`MAX_ENTRIES`] of them (meta `entries_note` says when more were listed);
//! * extra `stack`: the frames under the first `<stack trace>` entry.
//!
//! A file holding several traces gives one sample per trace; the meta and extras of the second
//! and later traces are prefixed `trace2.`, `trace3.`, ... and meta `traces` counts them.
//!
//! Also read:
//! * -rt console lines `( comm-pid |#cpu): new N us maximum-latency wakeup.`: series
//!   `max_latency_console` (s), one sample per line, and extra `console` with the details;
//! * summary lists of maximum latencies per experiment (`one-disable:\t\t564us`,
//!   `full-disable: (19043)\t9352us`): series `latency` with the experiment name as the block
//!   label, the count in parentheses in meta `<name>.count`.

use serde_json::{Value, json};

use super::Format;
use crate::error::ParseError;
use crate::lines::{self, Lines};
use crate::model::{Ctx, SeriesKey, SeriesSpec};

mod fast;
mod header;

/// Most entries kept per trace in the `entries` extra.
pub const MAX_ENTRIES: usize = 10_000;

/// What marks a header line, searched for in every line.
const HEADER_NEEDLE: &str = " latency trace v";

/// Where [`HEADER_NEEDLE`] first occurs in `h`. Found from its `y`, a byte few trace lines
/// hold, looked for eight bytes at a time: cheaper on short lines than a searcher's setup.
fn find_header(h: &str) -> Option<usize> {
    const Y: usize = 7;
    let b = h.as_bytes();
    let needle = HEADER_NEEDLE.as_bytes();
    // A needle's `y` lies at `Y` or after, with the rest of the needle after it.
    let mut i = Y;
    let last = b.len().checked_sub(needle.len() - Y)?;
    // While a `y` can be a needle's, the eight bytes from it are in the line: eight bytes of
    // the needle come after its `y`.
    while i <= last {
        let word = u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or_default());
        let marks = lines::byte_marks(word, b'y');
        if marks == 0 {
            i += 8;
            continue;
        }
        let y = i + marks.trailing_zeros() as usize / 8;
        if y <= last && b[y - Y..].starts_with(needle) {
            return Some(y - Y);
        }
        i = y + 1;
    }
    None
}

const TRACERS: [&str; 7] = [
    "irqsoff",
    "preemptoff",
    "preemptirqsoff",
    "wakeup",
    "wakeup_rt",
    "wakeup_dl",
    "preemption",
];

pub struct Latency;

impl Format for Latency {
    fn name(&self) -> &'static str {
        "latency"
    }

    fn description(&self) -> &'static str {
        "irqsoff/preemptoff/preemptirqsoff/wakeup* latency traces (latency_trace and trace files)"
    }

    fn sniff(&self, head: &str) -> u32 {
        let mut score = 0;
        let mut list_lines = 0;
        for raw in head.lines().take(2000) {
            let line = lines::strip_mail(raw);
            if line.contains(" latency trace v1.") {
                return 95;
            }
            if let Some(t) = line.strip_prefix("# tracer:")
                && TRACERS.contains(&t.trim())
            {
                score = score.max(90);
            }
            if line.starts_with('(') && line.contains("maximum-latency") {
                score = score.max(70);
            }
            if summary_line(line).is_some() {
                list_lines += 1;
            }
        }
        if list_lines >= 2 {
            score = score.max(30);
        }
        score
    }

    fn parse(&self, lines: &mut Lines<'_>, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        let mut p = Parser::default();
        while let Some((line_no, line)) = lines.next_stripped()? {
            ctx.line = line_no;
            p.line(line, ctx)?;
        }
        p.finish(ctx)
    }

    fn reads_stripped(&self) -> bool {
        true
    }
}

/// One latency trace being read.
#[derive(Default)]
struct Trace {
    /// Whether an entry has been read (the header is over).
    in_body: bool,
    /// Whether ` => frame` lines belong to a `<stack trace>` entry.
    in_stack: bool,
    stacks: usize,
    stack: Vec<Value>,
    entries: Vec<Value>,
    listed: u64,
    /// Whether the entries and stack will be kept as detail: past the cap on detail records
    /// they are only counted, and building them would be wasted.
    keep: bool,
}

impl Trace {
    /// Reads the common entry and stack-frame lines through [`fast`]; false leaves the line
    /// to the general path. Entries whose detail is kept take the general path, which builds
    /// it.
    fn fast_body(&mut self, s: &str, ctx: &mut Ctx<'_>) -> bool {
        if s.starts_with("=>") {
            if !self.in_body {
                return false;
            }
            let Some(frame) = fast::frame(s) else {
                return false;
            };
            if self.stacks > 0 {
                if self.in_stack && self.keep {
                    self.stack.push(Value::String(frame.to_string()));
                }
            } else {
                ctx.warn(format!("a stack frame outside a <stack trace>: {s:?}"));
            }
            return true;
        }
        if self.keep && self.entries.len() < MAX_ENTRIES {
            return false;
        }
        let Some(stack) = fast::entry(s) else {
            return false;
        };
        self.in_body = true;
        self.listed += 1;
        if stack {
            self.stacks += 1;
            self.in_stack = self.stacks == 1;
        } else {
            self.in_stack = false;
        }
        true
    }
}

#[derive(Default)]
struct Parser {
    /// Where the last `# tracer:` line was, if no header has followed it.
    pending_tracer: Option<u64>,
    /// The tracer it named.
    tracer_name: String,
    out: header::Out,
    trace: Option<Trace>,
    traces: usize,
    console: Vec<Value>,
    console_lines: u64,
    summaries: u64,
    first_line: Option<(u64, String)>,
}

impl Parser {
    /// A line, already stripped ([`lines::strip_line`]).
    fn line(&mut self, s: &str, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        if s.is_empty() {
            if let Some(t) = &mut self.trace {
                t.in_stack = false;
            }
            return Ok(());
        }
        if self.first_line.is_none() {
            self.first_line = Some((ctx.line, s.to_string()));
        }
        if let Some(t) = &mut self.trace
            && t.fast_body(s, ctx)
        {
            return Ok(());
        }
        if let Some(t) = s
            .strip_prefix("# tracer:")
            .or_else(|| s.strip_prefix("#tracer:"))
        {
            self.tracer_name.clear();
            self.tracer_name.push_str(t.trim());
            self.pending_tracer = Some(ctx.line);
            return Ok(());
        }
        // Header lines with their `#` (modern) or without (older generations).
        let hashes = s.bytes().take_while(|&b| b == b'#').count();
        let h = lines::trim_start(&s[hashes..]);
        if let Some(i) = find_header(h) {
            self.end_trace(ctx);
            self.start_trace(h, i, ctx);
            return Ok(());
        }
        if let Some(c) = console_line(s) {
            self.console_lines += 1;
            let id = ctx.series(SeriesSpec::duration(SeriesKey::new("max_latency_console")));
            ctx.sample(id, lines::us_to_s(c.latency_us))?;
            if self.console.len() < MAX_ENTRIES {
                self.console.push(json!({
                    "comm": c.comm, "pid": c.pid, "cpu": c.cpu,
                    "latency_us": c.latency_us, "kind": c.kind,
                }));
            }
            return Ok(());
        }
        if let Some((name, count, us)) = summary_line(s) {
            self.summaries += 1;
            if let Some(n) = count {
                ctx.meta(&format!("{name}.count"), n);
            }
            let key = SeriesKey::new("latency").label(Some(name.to_string()));
            return ctx.push(SeriesSpec::duration(key), lines::us_to_s(us));
        }
        let Some(trace) = &mut self.trace else {
            return Ok(());
        };
        if !trace.in_body {
            let out = &mut self.out;
            // Most header lines are the legend: its first byte rules out every field but one
            // before any comparison of a whole prefix.
            match h.as_bytes().first() {
                Some(b'l') => {
                    if let Some(rest) = h.strip_prefix("latency:") {
                        return out.latency(rest, ctx);
                    }
                }
                Some(b'|') => {
                    if let Some(rest) = h.strip_prefix("| task:") {
                        out.task(rest, ctx);
                        return Ok(());
                    }
                }
                Some(b'=') => {
                    if let Some(site) = h.strip_prefix("=> started at:") {
                        out.meta(ctx, "started_at", site.trim());
                        return Ok(());
                    }
                    if let Some(site) = h.strip_prefix("=> ended at:") {
                        out.meta(ctx, "ended_at", site.trim());
                        return Ok(());
                    }
                }
                _ => {}
            }
            if let Some(n) = s.strip_prefix("#P:") {
                // `#P:2)` wrapped onto its own line by a mailer.
                let n = n.trim_end_matches(')').trim();
                if n.bytes().all(|b| b.is_ascii_digit()) && !n.is_empty() {
                    out.meta(ctx, "ncpus", n);
                }
                return Ok(());
            }
        }
        // Entries of both kinds, and lines that look like one, hold a `<n>us` time: most other
        // lines (legend, elisions) have no `us` and skip the tokenizing.
        let timed = lines::find_str(s, "us").is_some();
        if timed && let Some(e) = parse_entry(s).or_else(|| parse_graph_entry(s)) {
            trace.in_body = true;
            trace.listed += 1;
            if e.func == "<stack trace>" {
                trace.stacks += 1;
                trace.in_stack = trace.stacks == 1;
            } else {
                trace.in_stack = false;
            }
            if trace.keep && trace.entries.len() < MAX_ENTRIES {
                trace.entries.push(e.to_json());
            }
            return Ok(());
        }
        if let Some(frame) = s.strip_prefix("=>") {
            if trace.in_body && trace.stacks > 0 {
                if trace.in_stack && trace.keep {
                    trace.stack.push(Value::String(frame.trim().to_string()));
                }
            } else if trace.in_body {
                ctx.warn(format!("a stack frame outside a <stack trace>: {s:?}"));
            }
            return Ok(());
        }
        if timed && trace.in_body && looks_like_entry(s) {
            ctx.warn(format!(
                "not a latency trace entry (expected `comm-pid CPUflags TIMEus: func`): {s:?}"
            ));
        }
        // Anything else is the legend, an elision (`[...]`) or prose.
        Ok(())
    }

    fn start_trace(&mut self, h: &str, i: usize, ctx: &mut Ctx<'_>) {
        self.traces += 1;
        self.out.set_trace(self.traces);
        let tracer = h[..i].trim();
        let tracer = tracer.rsplit(' ').next().unwrap_or(tracer);
        self.out.meta(ctx, "tracer", tracer);
        if self.pending_tracer.take().is_some() && self.tracer_name != tracer {
            let named = &self.tracer_name;
            self.out.meta_of(
                ctx,
                "tracer_note",
                format_args!("`# tracer: {named}` above a `{tracer} latency trace` header"),
            );
        }
        if let Some((_, release)) = lines::split_once_str(&h[i..], " on ") {
            self.out.meta(ctx, "kernel_version", release.trim());
        }
        self.trace = Some(Trace {
            keep: ctx.keeps_extras(),
            ..Trace::default()
        });
    }

    fn end_trace(&mut self, ctx: &mut Ctx<'_>) {
        let Some(t) = self.trace.take() else {
            return;
        };
        let out = &mut self.out;
        out.meta_of(ctx, "entries_listed", t.listed);
        if t.listed > MAX_ENTRIES as u64 {
            out.meta_of(
                ctx,
                "entries_note",
                format_args!(
                    "only the first {MAX_ENTRIES} of {} listed entries kept",
                    t.listed
                ),
            );
        }
        if t.stacks > 1 {
            out.meta_of(ctx, "stack_traces", t.stacks);
        }
        out.extra(ctx, "entries", Value::Array(t.entries));
        if t.stacks > 0 {
            out.extra(ctx, "stack", Value::Array(t.stack));
        }
    }

    fn finish(mut self, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        self.end_trace(ctx);
        if self.traces == 0 && self.console_lines == 0 && self.summaries == 0 {
            if let Some(line) = self.pending_tracer {
                return Err(ParseError::syntax(
                    line,
                    "a `<tracer> latency trace v1.1.5 on <kernel>` header after the tracer line",
                    format!("# tracer: {} and no latency header", self.tracer_name),
                ));
            }
            return Err(match self.first_line {
                Some((line, text)) => ParseError::syntax(
                    line,
                    "a latency trace (`# tracer: irqsoff`, `<tracer> latency trace v1.1.5 on \
                     <kernel>`), a `maximum-latency` console line or a `name: NNNus` list",
                    text,
                ),
                None => ParseError::nothing("latency traces"),
            });
        }
        if self.traces > 1 {
            ctx.meta("traces", self.traces.to_string());
        }
        if self.console_lines > 0 {
            ctx.meta("console_lines", self.console_lines.to_string());
            ctx.extra("console", Value::Array(self.console));
        }
        Ok(())
    }
}

/// `sshd-4261` -> (`sshd`, 4261); `softirq--5` -> (`softirq-`, 5); `<...>-2446`.
fn split_comm_pid(s: &str) -> (&str, Option<u64>) {
    match s.rsplit_once('-') {
        Some((comm, pid)) if !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()) => {
            (comm, pid.parse().ok())
        }
        _ => (s, None),
    }
}

struct Console<'a> {
    comm: &'a str,
    pid: Option<u64>,
    cpu: u32,
    latency_us: f64,
    kind: &'a str,
}

/// `( posix_cpu_timer-15   |#1): new 8 us maximum-latency wakeup.`
fn console_line(s: &str) -> Option<Console<'_>> {
    let inner = s.strip_prefix('(')?;
    let (who, rest) = inner.split_once("):")?;
    let (task, cpu) = who.split_once("|#")?;
    let cpu = cpu.trim().parse().ok()?;
    let rest = rest.trim_start().strip_prefix("new ")?;
    let (n, rest) = rest.split_once("us")?;
    let latency_us = lines::parse_number(n)?;
    let kind = rest.trim().strip_prefix("maximum-latency")?;
    let (comm, pid) = split_comm_pid(task.trim());
    Some(Console {
        comm,
        pid,
        cpu,
        latency_us,
        kind: kind.trim().trim_end_matches('.'),
    })
}

/// `one-disable:\t\t564us`, `full-disable: (19043)\t9352us` -> (name, count, µs).
fn summary_line(s: &str) -> Option<(&str, Option<&str>, f64)> {
    // The name starts the line: most lines fail here, before any search.
    if !s.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return None;
    }
    let (name, rest) = s.split_once(':')?;
    if name.is_empty()
        || !name.starts_with(|c: char| c.is_ascii_alphabetic())
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'+'))
    {
        return None;
    }
    let mut rest = rest.trim();
    let mut count = None;
    if let Some(r) = rest.strip_prefix('(') {
        let (n, r) = r.split_once(')')?;
        if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        count = Some(n);
        rest = r.trim();
    }
    let us = lines::parse_number(rest.strip_suffix("us")?.trim_end())?;
    Some((name, count, us))
}

/// One body entry.
struct Entry<'a> {
    comm: &'a str,
    pid: Option<u64>,
    cpu: Option<u32>,
    flags: &'a str,
    time_us: f64,
    mark: Option<&'a str>,
    func: &'a str,
    parent: Option<&'a str>,
    duration_us: Option<f64>,
}

impl Entry<'_> {
    fn to_json(&self) -> Value {
        let mut v = json!({
            "comm": self.comm, "pid": self.pid, "cpu": self.cpu, "flags": self.flags,
            "time_us": self.time_us, "mark": self.mark, "func": self.func, "parent": self.parent,
        });
        if let Some(d) = self.duration_us {
            v["duration_us"] = json!(d);
        }
        v
    }
}

/// `12us!:` / `0us` (then `:`) -> (µs, mark, whether the colon is glued on).
fn time_token(tok: &str) -> Option<(f64, Option<&str>, bool)> {
    // The number starts the token: most tokens fail here, before any search.
    if !tok.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let i = lines::find_str(tok, "us")?;
    let n = &tok[..i];
    if n.is_empty() || !n.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    let t = lines::parse_number(n)?;
    let rest = &tok[i + 2..];
    let (rest, colon) = match rest.strip_suffix(':') {
        Some(r) => (r, true),
        None => (rest, false),
    };
    let mark = match rest {
        "" => None,
        "!" | "+" | "#" | "*" | "@" | "$" => Some(rest),
        _ => return None,
    };
    Some((t, mark, colon))
}

/// `    bash-3730  1d..1    1us+: _write_unlock_irq (sys_setpgid)` and its modern and -rt
/// relatives.
fn parse_entry(s: &str) -> Option<Entry<'_>> {
    // Tokens with their byte offsets: the comm may hold spaces (`IRQ 233-2446`). Only the
    // first token and the two before the time are needed.
    let mut first = 0;
    let mut prev: [(usize, &str); 2] = [(0, ""); 2];
    for (i, (at, tok)) in ascii_tokens(s).enumerate() {
        if i == 0 {
            first = at;
        }
        let before = prev;
        prev = [before[1], (at, tok)];
        if i < 2 {
            continue;
        }
        let Some((time_us, mark, glued)) = time_token(tok) else {
            continue;
        };
        let rest = &s[at + tok.len()..];
        let rest = if glued {
            rest
        } else {
            rest.trim_start().strip_prefix(':')?
        };
        let flags_tok = before[1].1;
        let digits = flags_tok.bytes().take_while(u8::is_ascii_digit).count();
        let flags = &flags_tok[digits..];
        if digits == 0 || !(3..=6).contains(&flags.len()) {
            return None;
        }
        let commpid = s[first..before[0].0 + before[0].1.len()].trim();
        let (comm, pid) = split_comm_pid(commpid);
        let text = rest.trim();
        if text.is_empty() {
            return None;
        }
        let (func, parent) = split_call(text);
        return Some(Entry {
            comm,
            pid,
            cpu: flags_tok[..digits].parse().ok(),
            flags,
            time_us,
            mark,
            func,
            parent,
            duration_us: None,
        });
    }
    None
}

/// The tokens of `split_ascii_whitespace` with their byte offsets.
fn ascii_tokens(s: &str) -> impl Iterator<Item = (usize, &str)> {
    let b = s.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == b.len() {
            return None;
        }
        let start = i;
        while i < b.len() && !b[i].is_ascii_whitespace() {
            i += 1;
        }
        Some((start, &s[start..i]))
    })
}

/// `s.rfind(" (")`, found from the `(`s: cheaper than setting up a substring searcher.
fn rfind_space_paren(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    memchr::memrchr_iter(b'(', b)
        .find(|&j| j > 0 && b[j - 1] == b' ')
        .map(|j| j - 1)
}

/// `func <-parent` (modern), `func (parent)` (old), anything else (sched pseudo entries,
/// events) kept whole.
fn split_call(text: &str) -> (&str, Option<&str>) {
    if text == "<stack trace>" {
        return (text, None);
    }
    if let Some((f, p)) = lines::split_once_str(text, " <-") {
        return (f.trim_end(), Some(p.trim()));
    }
    if let Some(body) = text.strip_suffix(')')
        && let Some(i) = rfind_space_paren(body)
    {
        return (body[..i].trim_end(), Some(&body[i + 2..]));
    }
    (text, None)
}

/// `   3 us |   0)   bash-1507    |  d..2 |   0.351 us    |   in_task_stack();`
fn parse_graph_entry(s: &str) -> Option<Entry<'_>> {
    // The time before the first bar, then three or four bars, checked before anything is
    // collected: most lines fail the first test.
    let first_bar = memchr::memchr(b'|', s.as_bytes())?;
    if !lines::trim(&s[..first_bar]).ends_with("us")
        || !(3..=4).contains(&memchr::memchr_iter(b'|', s.as_bytes()).count())
    {
        return None;
    }
    let mut all = [""; 5];
    let mut n = 0;
    for part in s.split('|') {
        all[n] = part;
        n += 1;
    }
    let parts = &all[..n];
    // Without the funcgraph-proc option there is no TASK/PID column: `0)  d... |`.
    let (cpu_task, flags, dur, func) = match parts {
        [_, ct, f, d, func] => (*ct, f.trim(), *d, *func),
        [_, ct, d, func] => (*ct, "", *d, *func),
        _ => return None,
    };
    let time_us = lines::parse_number(parts[0].trim().strip_suffix("us")?)?;
    let (cpu, task) = cpu_task.trim().split_once(')')?;
    let cpu: u32 = cpu.trim().parse().ok()?;
    let (commpid, flags) = if parts.len() == 5 {
        (task.trim(), flags)
    } else {
        ("", task.trim())
    };
    // Overhead marks (`+`, `!`, ...) precede the duration.
    let dur = dur
        .trim()
        .trim_start_matches(['+', '!', '#', '*', '@', '$'])
        .trim();
    let duration_us = match dur.strip_suffix("us") {
        Some(d) => Some(lines::parse_number(d.trim())?),
        None if dur.is_empty() => None,
        None => return None,
    };
    let (comm, pid) = if commpid.is_empty() {
        ("", None)
    } else {
        split_comm_pid(commpid)
    };
    Some(Entry {
        comm,
        pid,
        cpu: Some(cpu),
        flags,
        time_us,
        mark: None,
        func: func.trim(),
        parent: None,
        duration_us,
    })
}

/// A body line that carries a `<n>us` time field, so it was meant to be an entry.
fn looks_like_entry(s: &str) -> bool {
    s.split_ascii_whitespace().any(|t| {
        t.starts_with(|c: char| c.is_ascii_digit())
            && t.trim_end_matches([':', '!', '+', '#', '*', '@', '$'])
                .strip_suffix("us")
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
    })
}

#[cfg(test)]
mod tests;
