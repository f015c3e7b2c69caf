//! The function_graph tracer's output (`trace` with `current_tracer=function_graph`, perf-tools
//! `funcgraph`).
//!
//! Every completed call with a duration becomes one sample of `FUNCTION.duration` (s, from µs)
//! in scope `cpuN` (scope `all` when the CPU column is switched off):
//! - leaf calls `func();` directly;
//! - closing `}` lines take the function from a per-CPU stack of opened `func() {` lines, matched
//!   by indentation (so lines lost from the ring buffer or elided with `[...]` do not shift the
//!   pairing), or from the `} /* func */` tail comment. A `}` with neither is counted in meta
//!   `unmatched_closes` (one warning per file) and skipped; calls opened and never closed are
//!   counted in meta `unclosed_calls`.
//!
//! Accepted around the call column: overhead marks `+ ! # * @ $`, 7-digit durations without a
//! fraction, the absolute-time column (`360.774522 |`, first and last go to meta
//! `first_timestamp`/`last_timestamp`), relative time, task/pid and latency-flag columns,
//! context-switch separators (` ------` and `0)  a-1  =>  b-2`), `/* trace_printk */` and event
//! comments, irq entry/exit arrows, perf-tools banners (`Tracing "fn"... Ctrl-C to end.`, `^C`,
//! `Ending tracing...`) and `[...]` elisions. A trace without a duration column (`funcgraph -D`)
//! is refused: there is nothing to measure.
//!
//! Memory is one stack per CPU and one series id per (CPU, function): the input is streamed.

use super::{Format, truncate};
use crate::error::{ErrorKind, ParseError};
use crate::lines::{
    Lines, find_str, parse_number, strip_mail, trim, trim_end, trim_start, us_to_s, words,
};
use crate::model::{Ctx, SeriesKey, SeriesSpec};

mod fast;
mod ids;

pub struct FunctionGraph;

/// Deepest call nesting kept per CPU; the kernel's own limit (FTRACE_RETFUNC_DEPTH) is 50, so
/// anything deeper is corrupt input and must not grow memory.
const MAX_DEPTH: usize = 4096;
/// Highest CPU number accepted, against garbage making the per-CPU table huge.
const MAX_CPU: usize = 1 << 16;

const NO_DURATION: &str = "function_graph trace without a DURATION column: nothing to measure";

impl Format for FunctionGraph {
    fn name(&self) -> &'static str {
        "function_graph"
    }

    fn description(&self) -> &'static str {
        "function_graph tracer output (per-call durations per function and CPU)"
    }

    fn sniff(&self, head: &str) -> u32 {
        let mut graph_lines = 0u32;
        let mut bare_lines = 0u32;
        for raw in head.lines().take(500) {
            let line = strip_mail(raw);
            if let Some(t) = line.strip_prefix('#') {
                let t = t.trim();
                if let Some(tracer) = t.strip_prefix("tracer:") {
                    // Latency tracers can print graph columns too; their parser owns them.
                    return if tracer.trim() == "function_graph" {
                        95
                    } else {
                        0
                    };
                }
                if t.contains("DURATION") && t.contains("FUNCTION CALLS") {
                    return 90;
                }
                continue;
            }
            match classify(line) {
                Some(true) => graph_lines += 1,
                Some(false) => bare_lines += 1,
                None => {}
            }
        }
        if graph_lines >= 3 {
            80
        } else if bare_lines >= 3 {
            60
        } else if graph_lines >= 1 {
            40
        } else {
            0
        }
    }

    fn parse(&self, lines: &mut Lines<'_>, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        let mut p = Parser::default();
        while let Some((line_no, raw)) = lines.next_numbered()? {
            ctx.line = line_no;
            p.line(raw, ctx)?;
        }
        p.finish(ctx)
    }
}

/// For sniffing: Some(true) for a call line with a `|` column, Some(false) for a call line
/// without one (`-D`), None otherwise.
fn classify(line: &str) -> Option<bool> {
    let (_, rest) = split_cpu(skip_time_columns(line.trim_start()))?;
    let call_like = |t: &str| {
        let t = t.trim();
        t.ends_with('{') || t.starts_with('}') || t.ends_with(';') || t.ends_with("*/")
    };
    match rest.rfind('|') {
        Some(bar) => call_like(&rest[bar + 1..]).then_some(true),
        None => call_like(rest).then_some(false),
    }
}

/// Skips the absolute-time column (`360.774522 |`) and the relative-time column (`0 us |`)
/// when a CPU column follows them.
fn skip_time_columns(mut s: &str) -> &str {
    for _ in 0..2 {
        let Some(bar) = find_bar(s) else { break };
        let head = trim(&s[..bar]);
        let after = trim_start(&s[bar + 1..]);
        if (is_timestamp(head) || is_rel_time(head)) && split_cpu(after).is_some() {
            s = after;
        } else {
            break;
        }
    }
    s
}

/// `360.774522`: digits, one dot, digits.
fn is_timestamp(t: &str) -> bool {
    let b = t.as_bytes();
    let int = b.iter().take_while(|c| c.is_ascii_digit()).count();
    int > 0
        && b.get(int) == Some(&b'.')
        && b.len() > int + 1
        && b[int + 1..].iter().all(u8::is_ascii_digit)
}

fn is_rel_time(t: &str) -> bool {
    t.strip_suffix("us")
        .map(str::trim_end)
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
}

/// The first `|`, the column separator.
fn find_bar(s: &str) -> Option<usize> {
    memchr::memchr(b'|', s.as_bytes())
}

/// Splits the CPU column `N)` off the start of `s`: (cpu, rest).
fn split_cpu(s: &str) -> Option<(usize, &str)> {
    let s = trim_start(s);
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 6 || s.as_bytes().get(digits) != Some(&b')') {
        return None;
    }
    Some((s[..digits].parse().ok()?, &s[digits + 1..]))
}

/// The DURATION cell: None if the segment is another column (task, flags), Some(None) when it
/// is empty (a function entry), Some(Some(µs)) with a duration.
fn duration_cell(seg: &str) -> Option<Option<f64>> {
    let mut t = words(seg);
    let Some(mut first) = t.next() else {
        return Some(None);
    };
    if first.len() == 1 && matches!(first.as_bytes()[0], b'+' | b'!' | b'#' | b'*' | b'@' | b'$') {
        first = t.next()?;
    }
    let unit = t.next()?;
    if unit != "us" || t.next().is_some() {
        return None;
    }
    parse_number(first).map(Some)
}

/// Function name of `name(args) {` / `name();`.
fn call_name(text: &str) -> Option<&str> {
    let name = trim(&text[..memchr::memchr(b'(', text.as_bytes())?]);
    (!name.is_empty() && words(name).nth(1).is_none()).then_some(name)
}

#[derive(Default)]
struct Frame {
    name: String,
    indent: usize,
}

/// One CPU's open calls and its series ids. Frames are reused so that steady-state parsing does
/// not allocate.
#[derive(Default)]
struct CpuState {
    frames: Vec<Frame>,
    depth: usize,
    ids: ids::Ids,
    scope: String,
}

impl CpuState {
    fn new(scope: String) -> Self {
        CpuState {
            scope,
            ..Default::default()
        }
    }

    fn top_indent(&self) -> Option<usize> {
        self.depth.checked_sub(1).map(|i| self.frames[i].indent)
    }

    fn push(&mut self, name: &str, indent: usize) -> bool {
        if self.depth == MAX_DEPTH {
            return false;
        }
        if self.depth == self.frames.len() {
            self.frames.push(Frame::default());
        }
        let f = &mut self.frames[self.depth];
        f.name.clear();
        f.name.push_str(name);
        f.indent = indent;
        self.depth += 1;
        true
    }

    /// Drops open calls at or deeper than `indent` (their closing lines were lost); returns how
    /// many.
    fn unwind(&mut self, indent: usize, inclusive: bool) -> u64 {
        let mut n = 0;
        while let Some(top) = self.top_indent() {
            if top > indent || (inclusive && top == indent) {
                self.depth -= 1;
                n += 1;
            } else {
                break;
            }
        }
        n
    }

    fn sample(&mut self, ctx: &mut Ctx<'_>, name: &str, us: f64) -> Result<(), ParseError> {
        sample(&mut self.ids, &self.scope, ctx, name, us)
    }
}

/// One duration of `name` on the CPU of `ids` and `scope` (fields apart, so that the name can be
/// borrowed from the same CPU's frames).
#[inline]
fn sample(
    ids: &mut ids::Ids,
    scope: &str,
    ctx: &mut Ctx<'_>,
    name: &str,
    us: f64,
) -> Result<(), ParseError> {
    let id = ids.get_or(name, || {
        let key = SeriesKey::new(format!("{name}.duration")).scope(scope);
        ctx.series(SeriesSpec::duration(key))
    });
    ctx.sample(id, us_to_s(us))
}

#[derive(Default)]
struct Parser {
    cpus: Vec<Option<CpuState>>,
    /// Lines without a CPU column share one stack.
    nocpu: Option<CpuState>,
    /// Indentation was collapsed (mail): pair braces by order alone.
    collapsed: bool,
    unmatched: u64,
    first_unmatched_line: u64,
    unclosed: u64,
    depth_warned: bool,
    first_ts: Option<String>,
    last_ts: String,
    call_lines: u64,
    /// Tests compare the general path with the fast one on the same input.
    #[cfg(test)]
    slow_only: bool,
}

enum Call<'a> {
    Open(&'a str),
    Leaf(&'a str),
    Close(Option<&'a str>),
    Ignore,
}

fn parse_call(text: &str) -> Option<Call<'_>> {
    if let Some(after) = text.strip_prefix('}') {
        let comment = after
            .trim()
            .strip_prefix("/*")
            .map(|c| c.trim_end().trim_end_matches("*/"))
            .and_then(|c| {
                c.split(|ch: char| ch.is_whitespace() || ch == '=')
                    .find(|w| !w.is_empty())
            });
        return Some(Call::Close(comment));
    }
    let code = match find_str(text, "/*") {
        Some(0) => return Some(Call::Ignore), // trace_printk or event comment
        Some(c) => text[..c].trim_end(),
        None => text,
    };
    if code.ends_with('{') {
        return call_name(code).map(Call::Open);
    }
    if code.ends_with(';') {
        return call_name(code).map(Call::Leaf);
    }
    if text.contains("==========>") || text.contains("<==========") {
        return Some(Call::Ignore);
    }
    None
}

impl Parser {
    /// The state of `cpu`'s calls; inlined for a CPU already seen, as nearly every line's is.
    #[inline]
    fn state(&mut self, cpu: Option<usize>) -> &mut CpuState {
        if let Some(c) = cpu
            && let Some(Some(_)) = self.cpus.get(c)
        {
            // There, as just seen: the default is never made.
            return self.cpus[c].get_or_insert_with(CpuState::default);
        }
        self.new_state(cpu)
    }

    #[inline(never)]
    fn new_state(&mut self, cpu: Option<usize>) -> &mut CpuState {
        match cpu {
            Some(c) => {
                if c >= self.cpus.len() {
                    self.cpus.resize_with(c + 1, || None);
                }
                self.cpus[c].get_or_insert_with(|| CpuState::new(format!("cpu{c}")))
            }
            None => self
                .nocpu
                .get_or_insert_with(|| CpuState::new("all".to_string())),
        }
    }

    fn line(&mut self, raw: &str, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        #[cfg(test)]
        let fast = !self.slow_only;
        #[cfg(not(test))]
        let fast = true;
        if fast && let Some(l) = fast::split(raw) {
            return match fast::call(l.text) {
                Some(kind) => self.call(Some(l.cpu), l.duration, l.indent, kind, ctx),
                None => {
                    ctx.warn(format!("not a function call: {}", truncate(l.text)));
                    Ok(())
                }
            };
        }
        self.line_general(raw, ctx)
    }

    /// Any line: the columns are found one by one, each in every form the tracer prints.
    fn line_general(&mut self, raw: &str, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        let s = trim_end(strip_mail(raw));
        let Some(&first) = s.as_bytes().first() else {
            return Ok(());
        };
        match first {
            b'#' => return Ok(()),
            b'[' if s.starts_with("[...]") => return Ok(()),
            b'-' if s.bytes().all(|b| b == b'-') => return Ok(()),
            b'^' if s == "^C" => return Ok(()),
            b'T' if s.starts_with("Tracing ") => return Ok(()),
            b'E' if s.starts_with("Ending tracing") => return Ok(()),
            _ => {}
        }

        // Absolute / relative time columns before the CPU.
        let mut rest = s;
        if let Some(bar) = find_bar(rest) {
            let head = trim(&rest[..bar]);
            if is_timestamp(head) {
                if self.first_ts.is_none() {
                    self.first_ts = Some(head.to_string());
                }
                self.last_ts.clear();
                self.last_ts.push_str(head);
                rest = trim_start(&rest[bar + 1..]);
            }
        }
        rest = skip_time_columns(rest);
        let cpu = match split_cpu(rest) {
            Some((c, r)) => {
                if c >= MAX_CPU {
                    ctx.warn(format!("CPU number {c} is implausible; line skipped"));
                    return Ok(());
                }
                rest = r;
                Some(c)
            }
            None => None,
        };

        if find_bar(rest).is_none() {
            if rest.contains("=>") {
                return Ok(()); // context switch: ` 0)  platfor-3210  =>  vmstat-2854`
            }
            let t = rest.trim();
            if cpu.is_some() && parse_call(t).is_some() {
                if self.call_lines == 0 {
                    return Err(ParseError::new(
                        ErrorKind::Unsupported(NO_DURATION.into()),
                        ctx.line,
                    ));
                }
                ctx.warn("call line without a DURATION column; skipped");
                return Ok(());
            }
            ctx.warn(format!("not a function_graph line: {}", truncate(s)));
            return Ok(());
        }

        // Columns between the CPU and the call: task/pid, latency flags, then DURATION.
        let mut pos = 0;
        let (duration, call) = loop {
            let Some(bar) = find_bar(&rest[pos..]) else {
                if rest.contains("==========>") || rest.contains("<==========") {
                    return Ok(()); // irq entry/exit arrows (funcgraph-irqs)
                }
                ctx.warn(format!("no DURATION column found: {}", truncate(s)));
                return Ok(());
            };
            let seg = &rest[pos..pos + bar];
            if let Some(d) = duration_cell(seg) {
                break (d, &rest[pos + bar + 1..]);
            }
            pos += bar + 1;
        };
        let indent = call.bytes().take_while(|&b| b == b' ').count();
        let text = trim(call);
        if text.is_empty() {
            return Ok(());
        }
        let Some(kind) = parse_call(text) else {
            ctx.warn(format!("not a function call: {}", truncate(text)));
            return Ok(());
        };
        self.call(cpu, duration, indent, kind, ctx)
    }

    /// Pairs a call line with the open calls of its CPU and records its duration.
    fn call(
        &mut self,
        cpu: Option<usize>,
        duration: Option<f64>,
        indent: usize,
        kind: Call<'_>,
        ctx: &mut Ctx<'_>,
    ) -> Result<(), ParseError> {
        self.call_lines += 1;
        if indent < 2 {
            // The kernel always prints two spaces after the bar; fewer means the mailer
            // collapsed the indentation, which then cannot pair braces.
            self.collapsed = true;
        }
        let collapsed = self.collapsed;
        match kind {
            Call::Ignore => Ok(()),
            Call::Open(name) => {
                let st = self.state(cpu);
                let mut lost = 0;
                if !collapsed {
                    lost = st.unwind(indent, true);
                }
                let pushed = st.push(name, indent);
                self.unclosed += lost;
                if !pushed {
                    self.unclosed += 1;
                    if !self.depth_warned {
                        self.depth_warned = true;
                        ctx.warn(format!(
                            "calls nested deeper than {MAX_DEPTH}: deeper entries are not paired"
                        ));
                    }
                }
                Ok(())
            }
            Call::Leaf(name) => {
                let st = self.state(cpu);
                let lost = if collapsed {
                    0
                } else {
                    st.unwind(indent, true)
                };
                // `?` at once: a result kept for later is copied through the stack on every line.
                match duration {
                    Some(us) => st.sample(ctx, name, us)?,
                    None => ctx.warn(format!("leaf call {name}() without a duration")),
                }
                self.unclosed += lost;
                Ok(())
            }
            Call::Close(comment) => {
                let st = self.state(cpu);
                let mut lost = 0;
                let opened = if collapsed {
                    st.depth.checked_sub(1)
                } else {
                    lost = st.unwind(indent, false);
                    (st.top_indent() == Some(indent)).then(|| st.depth - 1)
                };
                if let Some(i) = opened {
                    st.depth = i;
                }
                match (duration, comment, opened) {
                    (None, _, _) => ctx.warn("closing brace without a duration"),
                    (Some(us), Some(name), _) => st.sample(ctx, name, us)?,
                    (Some(us), None, Some(i)) => {
                        let CpuState {
                            frames, ids, scope, ..
                        } = st;
                        sample(ids, scope, ctx, &frames[i].name, us)?;
                    }
                    (Some(_), None, None) => {
                        if self.unmatched == 0 {
                            self.first_unmatched_line = ctx.line;
                        }
                        self.unmatched += 1;
                    }
                }
                self.unclosed += lost;
                Ok(())
            }
        }
    }

    fn finish(self, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        let open: u64 = self
            .cpus
            .iter()
            .flatten()
            .chain(self.nocpu.iter())
            .map(|c| c.depth as u64)
            .sum();
        if self.unmatched > 0 {
            ctx.warn_at(
                self.first_unmatched_line,
                format!(
                    "{} closing braces without a known opening call or /* func */ comment were skipped (first here)",
                    self.unmatched
                ),
            );
        }
        ctx.meta("unmatched_closes", self.unmatched.to_string());
        ctx.meta("unclosed_calls", (self.unclosed + open).to_string());
        if let Some(first) = self.first_ts {
            ctx.meta("first_timestamp", first);
            ctx.meta("last_timestamp", self.last_ts);
        }
        if ctx.samples() == 0 {
            return Err(ParseError::nothing(
                "function_graph calls with a duration (leaf `func();` or closing `}` lines)",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells() {
        assert_eq!(duration_cell("   1.382 us    "), Some(Some(1.382)));
        assert_eq!(duration_cell(" $ 3594274 us  "), Some(Some(3594274.0)));
        assert_eq!(duration_cell("               "), Some(None));
        assert_eq!(duration_cell("  sh-4802     "), None);
        assert_eq!(duration_cell("  d..2 "), None);
    }

    #[test]
    fn calls() {
        assert!(matches!(
            parse_call("sys_open() {"),
            Some(Call::Open("sys_open"))
        ));
        assert!(matches!(
            parse_call("__might_sleep();"),
            Some(Call::Leaf("__might_sleep"))
        ));
        assert!(matches!(
            parse_call("} /* __switch_to */"),
            Some(Call::Close(Some("__switch_to")))
        ));
        assert!(matches!(
            parse_call("} /* f = 0x0 */"),
            Some(Call::Close(Some("f")))
        ));
        assert!(matches!(parse_call("}"), Some(Call::Close(None))));
        assert!(matches!(parse_call("/* hello */"), Some(Call::Ignore)));
    }

    #[test]
    fn timestamps() {
        for (t, yes) in [
            ("360.774522", true),
            ("0.1", true),
            ("360.", false),
            (".5", false),
            ("1.2.3", false),
            ("12", false),
            ("0)   0.198 us", false),
            ("", false),
        ] {
            assert_eq!(is_timestamp(t), yes, "{t:?}");
        }
    }

    #[test]
    fn cpu_and_time_columns() {
        assert_eq!(split_cpu(" 0)  x"), Some((0, "  x")));
        assert_eq!(split_cpu("1000131 us"), None);
        assert_eq!(skip_time_columns("0 us |   1)  x"), "1)  x");
    }
}
