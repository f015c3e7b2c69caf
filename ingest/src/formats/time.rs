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
//! A `real`/`user`/`sys` row inside a block whose value does not start like a number is read
//! as prose, with a warning. A lone bash row (`real 0m1.039s`) is enough for detection.
//!
//! Metadata: `command` (from `$ time cmd`, a bare `time cmd` line or `Command being timed`),
//! `exit_status`, `page_size`. Blocks are labelled from the author's prose before them (see
//! `blocks`).

use std::sync::LazyLock;

use regex::Regex;

use self::scan::fast_values;
use self::values::{Values, bash_token, clock, number, plain_seconds};
use super::Format;
use super::blocks::{BlockMeta, Labeler, set_str};
use crate::error::ParseError;
use crate::lines::{
    Lines, find_str, skip_spaces, split_once_str, strip_mail, trim, trim_start, words,
};
use crate::model::{Ctx, Direction, SeriesId, SeriesKey, SeriesSpec, Unit};

mod scan;
mod values;

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
            // The regex last: compiling it costs more than sniffing a head without it.
            if line.contains("elapsed") && GNU_START.is_match(line) {
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
        match bash.iter().filter(|b| **b).count() {
            3 => score = score.max(85),
            2 => score = score.max(60),
            // One row (`real 0m1.039s` alone, as `time` reports are sometimes trimmed): the
            // `XmY.YYYs` value is time's own, but any format that claims the head wins.
            1 => score = score.max(20),
            _ => {}
        }
        if posix.iter().all(|b| *b) {
            score = score.max(70);
        }
        score
    }

    fn parse(&self, lines: &mut Lines<'_>, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        let mut p = Parser::new();
        while let Some((line_no, line)) = lines.next_stripped()? {
            ctx.line = line_no;
            let Some(&first) = line.as_bytes().first() else {
                p.end_block(ctx);
                p.columns = None;
                p.labels.blank();
                continue;
            };
            if let Some((idx, rest)) = metric_row(line) {
                p.bash_row(idx, rest, ctx)?;
                continue;
            }
            // A row of the block's triple whose value is not a time is most likely damaged
            // output rather than prose: it is read as prose, but not silently.
            if let Some(Kind::Bash(seen)) = p.block
                && let Some((idx, rest)) = named_row(line)
                && !seen[idx]
            {
                ctx.warn(format!(
                    "`{}` row without a time like `0m1.039s` or `1.03`: {}; read as prose",
                    BASH_METRICS[idx],
                    super::truncate(trim(rest)),
                ));
            }
            // The regex only on lines that can start its match (a digit, maybe not ASCII).
            if (first.is_ascii_digit() || (!first.is_ascii() && line.starts_with(char::is_numeric)))
                && GNU_START.is_match(line)
            {
                // Copied out so that wrapped lines can be read ahead.
                let mut joined = std::mem::take(&mut p.joined);
                joined.clear();
                joined.push_str(line);
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
                        .any(|w| find_str(next, w).is_some());
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
                p.joined = joined;
                ctx.line = lines.line_no();
                continue;
            }
            if let Some((field, value)) = verbose_row(line) {
                p.verbose(field, trim(value), ctx)?;
                continue;
            }
            if first == b'C' {
                if let Some(status) = line.strip_prefix("Command exited with non-zero status ") {
                    p.end_block(ctx);
                    p.meta.next("exit_status", trim(status));
                    continue;
                }
                if let Some(sig) = line.strip_prefix("Command terminated by signal ") {
                    p.end_block(ctx);
                    p.meta.next("terminated_by_signal", trim(sig));
                    continue;
                }
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
            p.labels.prose_stripped(line);
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

    fn reads_stripped(&self) -> bool {
        true
    }
}

struct Parser {
    labels: Labeler,
    meta: BlockMeta,
    /// The timed command last seen; it applies to the blocks that follow.
    command: Option<String>,
    block: Option<Kind>,
    /// The block's label, an id of `labels`.
    label: Option<u32>,
    /// Samples per metric in the current bash block, to spot ragged rows.
    counts: [usize; 3],
    /// The labels of a side-by-side table's columns (`\t\tUnpatched:\t\tPatched:`), in force
    /// until a blank line: each value of a row goes to its column's label.
    columns: Option<Vec<String>>,
    block_line: u64,
    /// Series of the `real`/`user`/`sys` rows under the current label, once declared.
    bash_ids: [Option<SeriesId>; 3],
    /// The `real`/`user`/`sys` series of each label seen (bounded): blocks under a label
    /// that comes back find their series without declaring them again.
    ids: Vec<(Option<u32>, [Option<SeriesId>; 3])>,
    /// Where the current block's label is in `ids`.
    slot: Option<usize>,
    /// Reused for every declaration, so that declaring a series allocates nothing.
    spec: SeriesSpec,
    /// Buffer of a GNU default output joined from its wrapped lines.
    joined: String,
}

/// Labels whose series ids are kept.
const MAX_IDS: usize = 64;

/// Fills the reused `spec` and declares it.
fn declare(
    spec: &mut SeriesSpec,
    ctx: &mut Ctx<'_>,
    metric: &str,
    label: Option<&str>,
    unit: Unit,
    direction: Direction,
) -> SeriesId {
    spec.key.metric.clear();
    spec.key.metric.push_str(metric);
    match label {
        Some(l) => set_str(&mut spec.key.label, l),
        None => spec.key.label = None,
    }
    spec.unit = unit;
    spec.direction = direction;
    ctx.series_ref(spec)
}

const BASH_METRICS: [&str; 3] = ["real", "user", "sys"];

impl Parser {
    fn new() -> Self {
        Parser {
            labels: Labeler::default(),
            meta: BlockMeta::default(),
            command: None,
            block: None,
            label: None,
            counts: [0; 3],
            columns: None,
            block_line: 0,
            bash_ids: [None; 3],
            ids: Vec::new(),
            slot: None,
            spec: SeriesSpec::duration(SeriesKey::new("")),
            joined: String::new(),
        }
    }

    fn start_block(&mut self, kind: Kind, ctx: &mut Ctx<'_>) {
        self.end_block(ctx);
        let label = self.labels.label_id();
        self.label = label;
        self.slot = match self.ids.iter().position(|(l, _)| *l == label) {
            Some(i) => Some(i),
            None if self.ids.len() < MAX_IDS => {
                self.ids.push((label, [None; 3]));
                Some(self.ids.len() - 1)
            }
            None => None,
        };
        self.bash_ids = self.slot.map_or([None; 3], |i| self.ids[i].1);
        self.meta.start_labelled(label, &self.labels, ctx.line);
        if let Some(cmd) = &self.command {
            self.meta.set("command", cmd);
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

    /// Adds a sample to `metric` under the block's label.
    fn push(
        &mut self,
        metric: &str,
        unit: Unit,
        direction: Direction,
        v: f64,
        ctx: &mut Ctx<'_>,
    ) -> Result<(), ParseError> {
        let label = self.label.map(|l| self.labels.name(l));
        let id = declare(&mut self.spec, ctx, metric, label, unit, direction);
        ctx.sample(id, v)
    }

    fn duration(&mut self, metric: &str, v: f64, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        self.push(metric, Unit::Seconds, Direction::LowerIsBetter, v, ctx)
    }

    fn count(&mut self, metric: &str, v: f64, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        self.push(metric, Unit::Count, Direction::Neutral, v, ctx)
    }

    fn cpu_pct(&mut self, text: &str, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        // `?` when the elapsed time was 0: no sample.
        if text == "?" {
            return Ok(());
        }
        let v = number(text, "CPU percentage", ctx.line)?;
        self.push("cpu_pct", Unit::Percent, Direction::Neutral, v, ctx)
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
        self.push(metric, Unit::Bytes, dir, v * 1024.0, ctx)
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
        let mut rest = rest;
        if self.columns.is_none()
            && let Some(id) = self.bash_ids[idx]
        {
            let count = &mut self.counts[idx];
            let sampled = fast_values(rest, |v| {
                ctx.sample_read(id, v)?;
                *count += 1;
                Ok(())
            })?;
            match sampled {
                None => return Ok(()),
                Some(at) => rest = &rest[at..],
            }
        }
        let values = Values::new(rest);
        if let Some(cols) = &self.columns
            && cols.len() == values.clone().count()
        {
            for ((tok, fast), label) in values.zip(cols) {
                let v = fast
                    .or_else(|| bash_token(tok))
                    .or_else(|| plain_seconds(tok))
                    .ok_or_else(|| {
                        ParseError::syntax(
                            ctx.line,
                            format!("a `{metric}` time like `0m1.039s`"),
                            tok,
                        )
                    })?;
                let id = declare(
                    &mut self.spec,
                    ctx,
                    metric,
                    Some(label),
                    Unit::Seconds,
                    Direction::LowerIsBetter,
                );
                ctx.sample(id, v)?;
            }
            self.counts[idx] += 1;
            return Ok(());
        }
        for (tok, fast) in values {
            let v = fast
                .or_else(|| bash_token(tok))
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
                    let label = self.label.map(|l| self.labels.name(l));
                    let (unit, dir) = (Unit::Seconds, Direction::LowerIsBetter);
                    let id = declare(&mut self.spec, ctx, metric, label, unit, dir);
                    self.bash_ids[idx] = Some(id);
                    if let Some(i) = self.slot {
                        self.ids[i].1[idx] = Some(id);
                    }
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

/// A `-v` row: its field and the value after the first `": "`.
fn verbose_row(line: &str) -> Option<(Field, &str)> {
    // Every key starts with one of these capitals (the line starts with its key, trimmed).
    if !matches!(
        line.as_bytes().first(),
        Some(b'A' | b'C' | b'E' | b'F' | b'I' | b'M' | b'P' | b'S' | b'U' | b'V')
    ) {
        return None;
    }
    let (key, value) = split_once_str(line, ": ")?;
    Some((verbose_field(key)?, value))
}

/// The `-v` keys GNU time prints, in its order.
fn verbose_field(key: &str) -> Option<Field> {
    Some(match trim(key) {
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
    // Every cell ends with `:`, the last one too, and the line is trimmed: most lines are
    // refused by their last byte.
    if !line.ends_with(':') {
        return None;
    }
    let cells = || {
        line.split('\t')
            .flat_map(|c| c.split("  "))
            .map(trim)
            .filter(|c| !c.is_empty())
    };
    if cells().nth(1).is_none() || !cells().all(|c| c.len() > 1 && c.ends_with(':')) {
        return None;
    }
    cells().map(super::blocks::clean_label).collect()
}

/// `real 0m1.039s` / `user 1.03`: the metric index and the rest, when the first token is a
/// metric name and what follows starts like a number (prose such as "real world" is not a row).
#[inline(always)]
fn metric_row(line: &str) -> Option<(usize, &str)> {
    let (idx, rest) = named_row(line)?;
    // ASCII digits are single bytes: the first characters are checked as bytes.
    let starts_numeric = match rest.as_bytes() {
        [d, ..] if d.is_ascii_digit() => true,
        [b'-', d, ..] => d.is_ascii_digit(),
        _ => false,
    };
    starts_numeric.then_some((idx, rest))
}

/// A line whose first word is `real`, `user` or `sys` followed by a space or TAB: the metric
/// index and the rest, trimmed at its start (the parser passes lines trimmed at their end).
#[inline(always)]
fn named_row(line: &str) -> Option<(usize, &str)> {
    let b = line.as_bytes();
    let (idx, len) = match b.first()? {
        b'r' if b.starts_with(b"real") => (0, 4),
        b'u' if b.starts_with(b"user") => (1, 4),
        b's' if b.starts_with(b"sys") => (2, 3),
        _ => return None,
    };
    // The name is the whole first word: a space or TAB follows it.
    if !matches!(b.get(len), Some(b' ' | b'\t')) {
        return None;
    }
    // Mostly plain spaces or one TAB before the value: skipped here, the rest trimmed whole.
    let at = skip_spaces(b, len + 1);
    if b.get(at).is_some_and(u8::is_ascii_graphic) {
        return Some((idx, &line[at..]));
    }
    Some((idx, trim_start(&line[len + 1..])))
}

/// Recognises a command line: `$ time make`, `# /usr/bin/time -v make`, a bare
/// `time /usr/sbin/tc ...`. Returns `Some(Some(cmd))` with the timed command, `Some(None)` for
/// another prompt line, `None` when the line is not a command.
fn command_line(line: &str) -> Option<Option<String>> {
    let b = line.as_bytes();
    let prompted = matches!(b, [b'$' | b'#' | b'%', b' ', ..] | [b'$' | b'#']);
    if !prompted && !may_be_timed(line) {
        return None;
    }
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

/// Whether a line without a prompt can be a timed command: its first word is `command` or
/// ends like `time` does (`time`, `\time`, `/usr/bin/time`). Prose mostly stops here.
fn may_be_timed(line: &str) -> bool {
    let b = line.as_bytes();
    let end = b
        .iter()
        .position(|&c| !c.is_ascii() || crate::lines::is_space(c))
        .unwrap_or(b.len());
    if b.get(end).is_some_and(|c| !c.is_ascii()) {
        // Words may end at a non-ASCII space: the general path decides.
        return true;
    }
    let word = &b[..end];
    word == b"command" || word.ends_with(b"time")
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
    fn rows_are_named_by_their_first_word_and_trimmed_as_a_whole() {
        for (line, row) in [
            ("real 0m1.000s", Some((0, "0m1.000s"))),
            ("user\t0m1s", Some((1, "0m1s"))),
            ("sys        0m0.004s  0m1s", Some((2, "0m0.004s  0m1s"))),
            ("real \t 0m1s", Some((0, "0m1s"))),
            ("real   \u{2003}\u{a0}0m1s", Some((0, "0m1s"))),
            ("real \u{e9}t\u{e9}", Some((0, "\u{e9}t\u{e9}"))),
            ("real   ", Some((0, ""))),
            ("real\u{a0}0m1s", None),
            ("realtime 0m1s", None),
            ("sys", None),
        ] {
            assert_eq!(named_row(line), row, "{line:?}");
        }
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
