//! `time`: the bash builtin `time`, POSIX `time -p`, and GNU `/usr/bin/time` in its default
//! and verbose (`-v`) formats.
//!
//! Variants handled:
//! - bash: `real<TAB>0m49.393s` (TAB or spaces). Every `XmY.YYY[s]` token on a line is one run,
//!   so a row pasted with several runs side by side (`real 0m49.393s 0m49.632s 0m49.359`)
//!   gives several samples; the trailing `s` may be missing.
//! - `time -p`: `real 1.03` (seconds only).
//! - GNU default: `101.52user 0.17system 1:41.73elapsed 99%CPU (0avgtext+0avgdata
//!   0maxresident)k` / `0inputs+0outputs (0major+39561minor)pagefaults 0swaps`, also when a
//!   mailer wrapped it before `(`; `?%CPU` gives no CPU sample; an optional `Command exited with
//!   non-zero status N` line before it.
//! - GNU `-v`: `Key: value` lines split on the first `": "`; elapsed `m:ss.cc` or `h:mm:ss`.
//!
//! Metrics (canonical units):
//! - bash and `-p`: `real`, `user`, `sys` (s, lower is better).
//! - GNU default and `-v`: `user`, `sys`, `elapsed` (s); `cpu_pct` (%, neutral); `max_rss`
//!   (bytes from KiB, lower is better; 0 means "not reported" on old kernels and gives no
//!   sample, as do the other 0 KiB memory averages `avg_text`, `avg_data`, `avg_stack`,
//!   `avg_total`, `avg_rss`); `major_faults`, `minor_faults`, `swaps`, `fs_inputs`,
//!   `fs_outputs` (count, neutral); `-v` adds `voluntary_cs`, `involuntary_cs`, `socket_sent`,
//!   `socket_received`, `signals` (count).
//!
//! Metadata: `command` (from `$ time cmd`, a bare `time cmd` line or `Command being timed`),
//! `exit_status`, `page_size`. Blocks are labelled from the author's prose before them (see
//! `blocks`).

use std::sync::LazyLock;

use regex::Regex;

use super::Format;
use super::blocks::{BlockMeta, Labeler};
use crate::error::ParseError;
use crate::lines::{Lines, split_once_str, strip_mail, trim_end, words};
use crate::model::{Ctx, Direction, SeriesId, SeriesKey, SeriesSpec, Unit};

pub struct Time;

/// The GNU default format once its wrapped lines are joined.
static GNU_DEFAULT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?x)^
        (?P<user>\d+(?:\.\d+)?)user \s+ (?P<sys>\d+(?:\.\d+)?)system \s+
        (?P<elapsed>[\d:.]+)elapsed \s+ (?P<cpu>\?|\d+)%CPU
        (?: \s* \( (?P<text>\d+)avgtext \+ (?P<data>\d+)avgdata \s+ (?P<rss>\d+)maxresident \)k )?
        (?: \s* (?P<inputs>\d+)inputs \+ (?P<outputs>\d+)outputs \s*
            \( (?P<major>\d+)major \+ (?P<minor>\d+)minor \)pagefaults \s+ (?P<swaps>\d+)swaps )?
        \s*$",
    )
    .expect("valid regex")
});

/// The start of a GNU default line: `<u>user <s>system`.
static GNU_START: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^\d+(?:\.\d+)?user\s+\d+(?:\.\d+)?system\b").expect("valid regex")
});

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    /// bash or `-p` rows; which of real/user/sys the block has seen.
    Bash([bool; 3]),
    GnuDefault,
    GnuVerbose,
}

impl Format for Time {
    fn name(&self) -> &'static str {
        "time"
    }

    fn description(&self) -> &'static str {
        "bash `time` (real/user/sys), `time -p`, GNU /usr/bin/time default and -v output"
    }

    fn sniff(&self, head: &str) -> u32 {
        let mut bash = [false; 3];
        let mut posix = [false; 3];
        let mut score = 0;
        for raw in head.lines() {
            let line = strip_mail(raw);
            if line.starts_with("Command being timed:")
                || line.starts_with("Elapsed (wall clock) time")
            {
                return 95;
            }
            if GNU_START.is_match(line) && line.contains("elapsed") {
                score = score.max(90);
            }
            if let Some((i, rest)) = metric_row(line) {
                let mut toks = words(rest);
                let first = toks.next().unwrap_or("");
                if bash_token(first).is_some() {
                    bash[i] = true;
                } else if toks.next().is_none() && plain_seconds(first).is_some() {
                    posix[i] = true;
                }
            }
        }
        if bash.iter().all(|b| *b) {
            score = score.max(85);
        } else if bash.iter().filter(|b| **b).count() >= 2 {
            score = score.max(60);
        }
        if posix.iter().all(|b| *b) {
            score = score.max(70);
        }
        score
    }

    fn parse(&self, lines: &mut Lines<'_>, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        let mut p = Parser::default();
        while let Some((line_no, raw)) = lines.next_numbered()? {
            ctx.line = line_no;
            let line = trim_end(strip_mail(raw));
            if line.is_empty() {
                p.end_block(ctx);
                p.columns = None;
                p.labels.blank();
                continue;
            }
            if let Some((idx, rest)) = metric_row(line) {
                p.bash_row(idx, rest, ctx)?;
                continue;
            }
            // The regex only on lines that can start its match (a digit).
            if line.starts_with(char::is_numeric) && GNU_START.is_match(line) {
                // Copied out so that wrapped lines can be read ahead.
                let mut joined = line.to_string();
                let start = ctx.line;
                // Mailers wrap the two-line output, most often before `(`.
                let mut extra = 0;
                while !joined.ends_with("swaps") && extra < 3 {
                    let Some(next) = lines.next_line()? else {
                        break;
                    };
                    let next = strip_mail(next).trim_end();
                    let continues = !next.is_empty()
                        && [
                            "avgtext",
                            "maxresident",
                            "inputs",
                            "outputs",
                            "pagefaults",
                            "swaps",
                        ]
                        .iter()
                        .any(|w| next.contains(w));
                    if !continues {
                        lines.push_back();
                        break;
                    }
                    joined.push(' ');
                    joined.push_str(next);
                    extra += 1;
                }
                ctx.line = start;
                p.gnu_default(&joined, ctx)?;
                ctx.line = lines.line_no();
                continue;
            }
            if let Some((key, value)) = split_once_str(line, ": ")
                && let Some(field) = verbose_field(key)
            {
                p.verbose(field, value.trim(), ctx)?;
                continue;
            }
            if let Some(status) = line.strip_prefix("Command exited with non-zero status ") {
                p.end_block(ctx);
                p.meta.next("exit_status", status.trim());
                continue;
            }
            if let Some(sig) = line.strip_prefix("Command terminated by signal ") {
                p.end_block(ctx);
                p.meta.next("terminated_by_signal", sig.trim());
                continue;
            }
            if let Some(cmd) = command_line(line) {
                p.end_block(ctx);
                p.labels.command();
                if let Some(timed) = cmd {
                    p.command = Some(timed);
                }
                continue;
            }
            p.end_block(ctx);
            if let Some(cols) = column_labels(line) {
                p.columns = Some(cols);
                p.labels.command();
                continue;
            }
            p.labels.prose(line);
        }
        p.end_block(ctx);
        if p.meta.len() == 0 {
            return Err(ParseError::nothing(
                "bash `time` block, `time -p` output or GNU time report",
            ));
        }
        p.meta.finish(ctx);
        Ok(())
    }
}

#[derive(Default)]
struct Parser {
    labels: Labeler,
    meta: BlockMeta,
    /// The timed command last seen; it applies to the blocks that follow.
    command: Option<String>,
    block: Option<Kind>,
    label: Option<String>,
    /// Samples per metric in the current bash block, to spot ragged rows.
    counts: [usize; 3],
    /// The labels of a side-by-side table's columns (`\t\tUnpatched:\t\tPatched:`), in force
    /// until a blank line: each value of a row goes to its column's label.
    columns: Option<Vec<String>>,
    block_line: u64,
    /// Series of the `real`/`user`/`sys` rows under the current label, once declared.
    bash_ids: [Option<SeriesId>; 3],
}

const BASH_METRICS: [&str; 3] = ["real", "user", "sys"];

impl Parser {
    fn start_block(&mut self, kind: Kind, ctx: &mut Ctx<'_>) {
        self.end_block(ctx);
        self.label = self.labels.label();
        self.bash_ids = [None; 3];
        self.meta.start(self.label.clone(), ctx.line);
        if let Some(cmd) = &self.command {
            self.meta.set("command", cmd.clone());
        }
        self.block = Some(kind);
        self.counts = [0; 3];
        self.block_line = ctx.line;
    }

    fn end_block(&mut self, ctx: &mut Ctx<'_>) {
        if let Some(Kind::Bash(_)) = self.block {
            let mut seen = self.counts.iter().filter(|c| **c > 0);
            let first = seen.next();
            if seen.any(|c| Some(c) != first) {
                ctx.warn_at(
                    self.block_line,
                    format!(
                        "real/user/sys rows of this block hold different numbers of runs ({}/{}/{})",
                        self.counts[0], self.counts[1], self.counts[2]
                    ),
                );
            }
        }
        self.block = None;
    }

    fn key(&self, metric: &str) -> SeriesKey {
        SeriesKey::new(metric).label(self.label.clone())
    }

    fn duration(&mut self, metric: &str, v: f64, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        ctx.push(SeriesSpec::duration(self.key(metric)), v)
    }

    fn count(&mut self, metric: &str, v: f64, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        ctx.push(SeriesSpec::count(self.key(metric)), v)
    }

    fn cpu_pct(&mut self, text: &str, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        // `?` when the elapsed time was 0: no sample.
        if text == "?" {
            return Ok(());
        }
        let v = number(text, "CPU percentage", ctx.line)?;
        ctx.push(
            SeriesSpec::new(self.key("cpu_pct"), Unit::Percent, Direction::Neutral),
            v,
        )
    }

    /// A memory size in KiB; 0 means the kernel did not report it.
    fn kib(
        &mut self,
        metric: &str,
        text: &str,
        dir: Direction,
        ctx: &mut Ctx<'_>,
    ) -> Result<(), ParseError> {
        let v = number(text, metric, ctx.line)?;
        if v == 0.0 {
            return Ok(());
        }
        ctx.push(
            SeriesSpec::new(self.key(metric), Unit::Bytes, dir),
            v * 1024.0,
        )
    }

    /// A `real`/`user`/`sys` row: one or more runs.
    fn bash_row(&mut self, idx: usize, rest: &str, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        match self.block {
            Some(Kind::Bash(seen)) if !seen[idx] => {}
            _ => self.start_block(Kind::Bash([false; 3]), ctx),
        }
        if let Some(Kind::Bash(seen)) = &mut self.block {
            seen[idx] = true;
        }
        let metric = BASH_METRICS[idx];
        // A note the author added after the values (`1m8.900s (-25%)`) is not a value.
        let values = words(rest).take_while(|t| !t.starts_with('('));
        if let Some(cols) = &self.columns
            && cols.len() == values.clone().count()
        {
            for (tok, label) in values.zip(cols) {
                let v = bash_token(tok)
                    .or_else(|| plain_seconds(tok))
                    .ok_or_else(|| {
                        ParseError::syntax(
                            ctx.line,
                            format!("a `{metric}` time like `0m1.039s`"),
                            tok,
                        )
                    })?;
                ctx.push(
                    SeriesSpec::duration(SeriesKey::new(metric).label(Some(label.clone()))),
                    v,
                )?;
            }
            self.counts[idx] += 1;
            return Ok(());
        }
        for tok in values {
            let v = bash_token(tok)
                .or_else(|| plain_seconds(tok))
                .ok_or_else(|| {
                    ParseError::syntax(
                        ctx.line,
                        format!("a `{metric}` time like `0m1.039s` or `1.03`"),
                        tok,
                    )
                })?;
            let id = match self.bash_ids[idx] {
                Some(id) => id,
                None => {
                    let id = ctx.series(SeriesSpec::duration(self.key(metric)));
                    self.bash_ids[idx] = Some(id);
                    id
                }
            };
            ctx.sample(id, v)?;
            self.counts[idx] += 1;
        }
        Ok(())
    }

    fn gnu_default(&mut self, text: &str, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        let caps = GNU_DEFAULT.captures(text).ok_or_else(|| {
            ParseError::syntax(
                ctx.line,
                "GNU time output `<u>user <s>system <e>elapsed <n>%CPU (...)`",
                text,
            )
        })?;
        self.start_block(Kind::GnuDefault, ctx);
        let user = number(&caps["user"], "user time", ctx.line)?;
        self.duration("user", user, ctx)?;
        let sys = number(&caps["sys"], "system time", ctx.line)?;
        self.duration("sys", sys, ctx)?;
        let elapsed = clock(&caps["elapsed"], ctx.line)?;
        self.duration("elapsed", elapsed, ctx)?;
        self.cpu_pct(&caps["cpu"], ctx)?;
        if caps.name("rss").is_some() {
            self.kib("avg_text", &caps["text"], Direction::Neutral, ctx)?;
            self.kib("avg_data", &caps["data"], Direction::Neutral, ctx)?;
            self.kib("max_rss", &caps["rss"], Direction::LowerIsBetter, ctx)?;
        } else {
            ctx.warn("GNU time output without its `(...avgtext+...avgdata ...maxresident)k` part");
        }
        if caps.name("inputs").is_some() {
            for (metric, group) in [
                ("fs_inputs", "inputs"),
                ("fs_outputs", "outputs"),
                ("major_faults", "major"),
                ("minor_faults", "minor"),
                ("swaps", "swaps"),
            ] {
                let v = number(&caps[group], metric, ctx.line)?;
                self.count(metric, v, ctx)?;
            }
        } else {
            ctx.warn(
                "GNU time output without its `...inputs+...outputs (...)pagefaults ...swaps` line",
            );
        }
        Ok(())
    }

    fn verbose(&mut self, field: Field, value: &str, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        if field == Field::Command || self.block != Some(Kind::GnuVerbose) {
            self.start_block(Kind::GnuVerbose, ctx);
        }
        match field {
            Field::Command => {
                let cmd = value.trim_matches('"').to_string();
                self.meta.set("command", cmd.clone());
                self.command = Some(cmd);
            }
            Field::Seconds(metric) => {
                let v = number(value, metric, ctx.line)?;
                self.duration(metric, v, ctx)?;
            }
            Field::Elapsed => {
                let v = clock(value, ctx.line)?;
                self.duration("elapsed", v, ctx)?;
            }
            Field::CpuPct => {
                let pct = value.strip_suffix('%').unwrap_or(value);
                self.cpu_pct(pct, ctx)?;
            }
            Field::Kib(metric, dir) => self.kib(metric, value, dir, ctx)?,
            Field::Count(metric) => {
                let v = number(value, metric, ctx.line)?;
                self.count(metric, v, ctx)?;
            }
            Field::Meta(key) => self.meta.set(key, value),
        }
        Ok(())
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Field {
    Command,
    Seconds(&'static str),
    Elapsed,
    CpuPct,
    Kib(&'static str, Direction),
    Count(&'static str),
    Meta(&'static str),
}

/// The `-v` keys GNU time prints, in its order.
fn verbose_field(key: &str) -> Option<Field> {
    Some(match key.trim() {
        "Command being timed" => Field::Command,
        "User time (seconds)" => Field::Seconds("user"),
        "System time (seconds)" => Field::Seconds("sys"),
        "Percent of CPU this job got" => Field::CpuPct,
        "Elapsed (wall clock) time (h:mm:ss or m:ss)" => Field::Elapsed,
        "Average shared text size (kbytes)" => Field::Kib("avg_text", Direction::Neutral),
        "Average unshared data size (kbytes)" => Field::Kib("avg_data", Direction::Neutral),
        "Average stack size (kbytes)" => Field::Kib("avg_stack", Direction::Neutral),
        "Average total size (kbytes)" => Field::Kib("avg_total", Direction::Neutral),
        "Maximum resident set size (kbytes)" => Field::Kib("max_rss", Direction::LowerIsBetter),
        "Average resident set size (kbytes)" => Field::Kib("avg_rss", Direction::Neutral),
        "Major (requiring I/O) page faults" => Field::Count("major_faults"),
        "Minor (reclaiming a frame) page faults" => Field::Count("minor_faults"),
        "Voluntary context switches" => Field::Count("voluntary_cs"),
        "Involuntary context switches" => Field::Count("involuntary_cs"),
        "Swaps" => Field::Count("swaps"),
        "File system inputs" => Field::Count("fs_inputs"),
        "File system outputs" => Field::Count("fs_outputs"),
        "Socket messages sent" => Field::Count("socket_sent"),
        "Socket messages received" => Field::Count("socket_received"),
        "Signals delivered" => Field::Count("signals"),
        "Page size (bytes)" => Field::Meta("page_size"),
        "Exit status" => Field::Meta("exit_status"),
        _ => return None,
    })
}

/// The column labels of a side-by-side table header: two or more headings, each ending with
/// `:`, apart by tabs or runs of spaces (`\t\tUnpatched:\t\tPatched:`).
fn column_labels(line: &str) -> Option<Vec<String>> {
    // Every cell ends with `:`; most lines have none.
    memchr::memchr(b':', line.as_bytes())?;
    let cells: Vec<&str> = line
        .split('\t')
        .flat_map(|c| c.split("  "))
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    if cells.len() < 2 || !cells.iter().all(|c| c.len() > 1 && c.ends_with(':')) {
        return None;
    }
    cells
        .iter()
        .map(|c| super::blocks::clean_label(c))
        .collect()
}

/// `real 0m1.039s` / `user 1.03`: the metric index and the rest, when the first token is a
/// metric name and what follows starts like a number (prose such as "real world" is not a row).
fn metric_row(line: &str) -> Option<(usize, &str)> {
    let (name, rest) = line.split_once([' ', '\t'])?;
    let idx = BASH_METRICS.iter().position(|m| *m == name)?;
    let rest = rest.trim();
    let mut chars = rest.chars();
    let first = chars.next()?;
    let starts_numeric = first.is_ascii_digit()
        || (first == '-' && chars.next().is_some_and(|c| c.is_ascii_digit()));
    starts_numeric.then_some((idx, rest))
}

/// `0m49.393s`, `0m49.359` (no `s`), `6m5,729s` (decimal comma), `-0m1.0s` (negative: refused
/// later with its line).
fn bash_token(tok: &str) -> Option<f64> {
    let (neg, t) = match tok.strip_prefix('-') {
        Some(t) => (true, t),
        None => (false, tok),
    };
    let (min, sec) = t.split_once('m')?;
    let sec = sec.strip_suffix('s').unwrap_or(sec);
    // A locale with a decimal comma prints `6m5,729s`; seconds never need a thousands comma.
    let comma = if sec.contains(',') {
        std::borrow::Cow::Owned(sec.replacen(',', ".", 1))
    } else {
        std::borrow::Cow::Borrowed(sec)
    };
    let sec = &*comma;
    if min.is_empty() || !min.bytes().all(|b| b.is_ascii_digit()) || !is_decimal(sec) {
        return None;
    }
    let (whole, frac) = sec.split_once('.').unwrap_or((sec, ""));
    let (min, whole): (u64, u64) = (min.parse().ok()?, whole.parse().ok()?);
    let v = if min == 0 && !frac.is_empty() {
        // Under a minute the seconds as written are the value: no need to spell them out.
        fast_float2::parse(sec).ok()?
    } else {
        seconds(&[min, whole], frac)?
    };
    Some(if neg { -v } else { v })
}

/// `1.03` (`time -p`), with an optional sign.
fn plain_seconds(tok: &str) -> Option<f64> {
    let t = tok.strip_prefix('-').unwrap_or(tok);
    if !is_decimal(t) {
        return None;
    }
    tok.parse().ok()
}

fn is_decimal(s: &str) -> bool {
    let mut parts = s.splitn(2, '.');
    let int = parts.next().unwrap_or("");
    let frac = parts.next();
    !int.is_empty()
        && int.bytes().all(|b| b.is_ascii_digit())
        && frac.is_none_or(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
}

fn number(text: &str, what: &str, line: u64) -> Result<f64, ParseError> {
    crate::lines::parse_number(text)
        .ok_or_else(|| ParseError::bad_value(line, what, text, "expected a number"))
}

/// GNU time's elapsed clock: `m:ss.cc` under an hour, `h:mm:ss` from one hour on.
fn clock(text: &str, line: u64) -> Result<f64, ParseError> {
    let bad = || {
        ParseError::bad_value(
            line,
            "elapsed time",
            text,
            "expected `m:ss.cc` or `h:mm:ss`",
        )
    };
    let (clock, frac) = text.split_once('.').unwrap_or((text, ""));
    let parts: Vec<u64> = clock
        .split(':')
        .map(|p| {
            (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                .then(|| p.parse().ok())
                .flatten()
        })
        .collect::<Option<_>>()
        .ok_or_else(bad)?;
    if !(2..=3).contains(&parts.len()) {
        return Err(bad());
    }
    seconds(&parts, frac).ok_or_else(bad)
}

/// `[h, m, s]` or `[m, s]` plus the decimal fraction digits, as seconds. The sum is formed on
/// integers and parsed once so that `1:41.73` is exactly the double nearest to 101.73.
fn seconds(parts: &[u64], frac: &str) -> Option<f64> {
    let whole = parts
        .iter()
        .try_fold(0u64, |acc, v| acc.checked_mul(60)?.checked_add(*v))?;
    if frac.is_empty() {
        return Some(whole as f64);
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // `whole.frac` spelled out on the stack: this runs once per sample.
    let mut int = [0u8; 20];
    let mut k = int.len();
    let mut n = whole;
    loop {
        k -= 1;
        int[k] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let int = &int[k..];
    let mut text = [0u8; 64];
    let len = int.len() + 1 + frac.len();
    if len > text.len() {
        return format!("{whole}.{frac}").parse().ok();
    }
    text[..int.len()].copy_from_slice(int);
    text[int.len()] = b'.';
    text[int.len() + 1..len].copy_from_slice(frac.as_bytes());
    fast_float2::parse(&text[..len]).ok()
}

/// Recognises a command line: `$ time make`, `# /usr/bin/time -v make`, a bare
/// `time /usr/sbin/tc ...`. Returns `Some(Some(cmd))` with the timed command, `Some(None)` for
/// another prompt line, `None` when the line is not a command.
fn command_line(line: &str) -> Option<Option<String>> {
    let prompt = ["$ ", "# ", "% "]
        .iter()
        .find_map(|p| line.strip_prefix(p))
        .or_else(|| (line == "$" || line == "#").then_some(""));
    let body = prompt.unwrap_or(line).trim();
    let timed = timed_command(body, prompt.is_some());
    match (prompt, timed) {
        (_, Some(cmd)) => Some(Some(cmd)),
        (Some(_), None) => Some(None),
        (None, None) => None,
    }
}

/// The command under `time`/`/usr/bin/time` with time's own options removed.
fn timed_command(body: &str, prompted: bool) -> Option<String> {
    let mut toks = words(body).peekable();
    if toks.peek() == Some(&"command") {
        toks.next();
    }
    let first = toks.next()?;
    let gnu = first.ends_with("/time") || first == "\\time";
    if first != "time" && !gnu {
        return None;
    }
    let rest: Vec<&str> = toks.collect();
    let mut i = 0;
    while i < rest.len() && rest[i].starts_with('-') {
        // Options of bash's and GNU time; -f and -o take an argument.
        if matches!(rest[i], "-f" | "-o") {
            i += 1;
        }
        i += 1;
    }
    let cmd = rest.get(i..)?.join(" ");
    if cmd.is_empty() {
        return None;
    }
    // Without a prompt, only take lines that look like a command, not prose ("time flies.").
    let looks_like_cmd = prompted
        || gnu
        || cmd.starts_with(['/', '.', '~'])
        || (cmd.contains(" -") && !cmd.ends_with('.'));
    looks_like_cmd.then_some(cmd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens() {
        assert_eq!(bash_token("0m49.393s"), Some(49.393));
        assert_eq!(bash_token("0m49.359"), Some(49.359));
        assert_eq!(bash_token("4m4.969s"), Some(244.969));
        assert_eq!(bash_token("-0m1.0s"), Some(-1.0));
        assert_eq!(bash_token("6m5,729s"), Some(365.729));
        assert_eq!(bash_token("0m07.50s"), Some(7.5));
        assert_eq!(bash_token("0m5,729s"), Some(5.729));
        assert_eq!(bash_token("0m49s"), Some(49.0));
        assert_eq!(bash_token("0m1,2,3s"), None);
        assert_eq!(bash_token("m1.0s"), None);
        assert_eq!(bash_token("1.03"), None);
        assert_eq!(plain_seconds("1.03"), Some(1.03));
        assert_eq!(plain_seconds("1."), None);
    }

    #[test]
    fn side_by_side_headers() {
        assert_eq!(
            column_labels("Unpatched:\t\tPatched:").unwrap(),
            ["Unpatched", "Patched"]
        );
        assert_eq!(
            column_labels("before:   after:").unwrap(),
            ["before", "after"]
        );
        assert!(column_labels("Patched:").is_none());
        assert!(column_labels("results are: good  and: bad").is_none());
    }

    #[test]
    fn clocks() {
        assert_eq!(clock("1:41.73", 1).unwrap(), 101.73);
        assert_eq!(clock("1:12:36", 1).unwrap(), 4356.0);
        assert_eq!(clock("0:04.94", 1).unwrap(), 4.94);
        assert!(clock("1.2", 1).is_err());
        assert!(clock("1:x", 1).is_err());
    }

    #[test]
    fn seconds_are_the_nearest_double() {
        let fracs = [
            "",
            "0",
            "5",
            "73",
            "004",
            "999999999",
            "12345678901234567890123",
            &"9".repeat(70),
        ];
        for parts in [
            &[0u64, 0][..],
            &[1, 41],
            &[1, 12, 36],
            &[0, 59],
            &[u64::MAX / 61, 0],
        ] {
            for frac in fracs {
                let whole = parts.iter().fold(0u64, |a, v| a * 60 + v);
                let expected = if frac.is_empty() {
                    whole as f64
                } else {
                    format!("{whole}.{frac}").parse().unwrap()
                };
                assert_eq!(seconds(parts, frac), Some(expected), "{parts:?} {frac}");
            }
        }
    }

    #[test]
    fn commands() {
        assert_eq!(
            command_line("$ time git blame -M server.c >/dev/null"),
            Some(Some("git blame -M server.c >/dev/null".into()))
        );
        assert_eq!(
            command_line("time /usr/sbin/tc qdisc replace dev eth0 root handle 0x1: mq"),
            Some(Some(
                "/usr/sbin/tc qdisc replace dev eth0 root handle 0x1: mq".into()
            ))
        );
        assert_eq!(
            command_line("# /usr/bin/time -f %e -v make -j5"),
            Some(Some("make -j5".into()))
        );
        assert_eq!(command_line("$ ./run"), Some(None));
        assert_eq!(command_line("time flies like an arrow."), None);
    }
}
