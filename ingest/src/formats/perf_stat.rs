//! `perf_stat`: the human-readable output of `perf stat`, from the 2009 format to current perf.
//!
//! Variants handled: `Performance counter stats for 'cmd' [(N runs)]:` headers (with or without
//! the leading space, also `system wide`, `CPU(s) ...`, `process id ...`); counter rows with or
//! without thousands separators, a unit before the event (`527649.37 msec cpu-clock`) or after
//! it (`83723.452481 task-clock:u (msec)`), a `# derived` comment, a `( +- x% )` run-to-run
//! spread and a `(93.10%)` multiplexing share; `<not supported>` / `<not counted>` rows; rows
//! prefixed by `CPU<n>` (`-A`); `seconds time elapsed` with an optional absolute spread
//! (`80.10 +- 1.22 seconds time elapsed ( +- 1.53% )`); `seconds user` / `seconds sys`; the
//! `--table` rows of individual measurements.
//!
//! Series (canonical units):
//! - one per counter, named by the event (`cycles:u`, `context-switches`): `count`, neutral;
//!   clocks given in msec (`task-clock`, `cpu-clock`) become seconds, lower is better; other
//!   units are kept as printed.
//! - `elapsed`, `user`, `sys` (s, lower is better).
//! - with `-r N`, perf prints the mean of the N runs: those values carry statistic `mean`;
//!   `<event>.stddev_pct` / `elapsed.stddev_pct` (statistic `rel_stddev_pct`, `%`) hold the
//!   relative spread and `elapsed.stddev` (statistic `stddev`, s) the absolute one. The
//!   `--table` rows are real samples of `elapsed`.
//! - `workload.time` (s): the benchmark's own `Time:` lines printed before perf's summary.
//! - `<event>.multiplex_pct` (statistic `multiplex_pct`, `%`): the share of the run a counter
//!   was scheduled (`(93.10%)`), present only for multiplexed counters, so that a comparison
//!   can flag values perf scaled up from part of the run.
//!
//! Metadata: `command` (or `target`), `runs`, `not_counted` (events without a value),
//! `multiplex_pct.<event>`, `derived.<event>` (perf's `#` comment), unrelated `Key: value`
//! lines (`Slab: 7936 kB`), `perf_command`. Blocks take their label from the author's prose;
//! when one file measures several commands, every series also carries a `command` param.
//!
//! Values are held back until a second command shows up or a few thousand values were read,
//! so that all blocks of a multi-command file get the param; past that bound, only blocks whose
//! command differs from the first carry it.

use std::sync::LazyLock;

use memchr::memmem::Finder;
use regex::Regex;

use self::header::{Header, Headers};
use self::summary_lines::{ELAPSED_READ, NOT_ELAPSED, elapsed, read_elapsed};

use super::Format;
use super::blocks::{BlockMeta, Labeler};
use super::recent::Recent;
use crate::error::ParseError;
use crate::lines::{
    Lines, ReadAhead, find_str, is_space, parse_number, strip_mail, trim, trim_end, words,
};
use crate::model::{Ctx, Direction};

use self::ids::{Ids, Key, Stat, UnitId};
use self::key_value::key_value;
use self::numbers::{decimal, number};

mod header;
mod ids;
mod key_value;
mod numbers;
mod summary_lines;

pub struct PerfStat;

const HEADER: &str = "Performance counter stats for ";
/// Searched for in every line: built once rather than per call.
static HEADER_FINDER: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(HEADER));

static USER_SYS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\S+)\s+seconds (user|sys)$").expect("valid regex"));
/// `--table` rows: `5.189 (-0.293) ###`.
static TABLE_ROW: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\d+(?:\.\d+)?)\s+\([+-]?[\d.]+\)\s*#*$").expect("valid regex"));
impl Format for PerfStat {
    fn name(&self) -> &'static str {
        "perf_stat"
    }

    fn description(&self) -> &'static str {
        "perf stat counter output (with -r N variance, elapsed/user/sys times)"
    }

    fn sniff(&self, head: &str) -> u32 {
        let mut score = 0;
        for raw in head.lines() {
            let line = strip_box(strip_mail(raw));
            if line.starts_with(HEADER) {
                return 95;
            }
            if line.contains("seconds time elapsed") {
                score = 80;
            }
        }
        score
    }

    fn parse(&self, lines: &mut Lines<'_>, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        let mut p = Parser::default();
        while let Some((line_no, line, ahead)) = lines.next_stripped_ahead()? {
            ctx.line = line_no;
            p.line(strip_box(line), ahead, ctx)?;
        }
        p.finish(ctx)
    }

    fn reads_stripped(&self) -> bool {
        true
    }

    fn read_ahead(&self) -> Option<ReadAhead> {
        Some(read_elapsed)
    }
}

/// The left border of an ASCII box drawn around pasted output (` |  Performance counter
/// stats ...`): a leading `|` on a line holding no other, so table rows keep theirs.
fn strip_box(line: &str) -> &str {
    match line.strip_prefix('|') {
        Some(rest) if !rest.contains('|') => rest.trim_start(),
        _ => line,
    }
}

/// A value waiting for its block's label and params.
#[derive(Clone, Copy)]
struct Item {
    metric: u32,
    scope: u32,
    unit: UnitId,
    direction: Direction,
    stat: Stat,
    value: f64,
    line: u64,
}

impl Item {
    fn seconds(metric: u32, stat: Stat, value: f64, line: u64) -> Self {
        Item {
            metric,
            scope: ids::ALL,
            unit: UnitId::Seconds,
            direction: Direction::LowerIsBetter,
            stat,
            value,
            line,
        }
    }
}

struct Block {
    /// A [`Key::label`](ids::Key).
    label: u32,
    command: Option<u32>,
    runs: Option<u32>,
    items: Vec<Item>,
    not_counted: Vec<String>,
}

/// Items held back while deciding whether series need a `command` param; past this many the
/// decision is taken on what was seen, so memory stays bounded on any input.
const BUFFER_LIMIT: usize = 4096;

#[derive(Default)]
struct Parser {
    labels: Labeler,
    meta: BlockMeta,
    /// Blocks whose items are held back; once decided, only the current block (no items).
    blocks: Vec<Block>,
    /// None while items are held back; then whether every block's series carry its command
    /// as a param (`Some(false)`: only blocks whose command differs from the first one).
    by_command: Option<bool>,
    first_command: Option<u32>,
    buffered: usize,
    /// Something other than workload output was found.
    measured: bool,
    /// Workload output read before the `perf stat` summary it belongs to.
    pending: Vec<Item>,
    ids: Ids,
    /// Headers read lately.
    headers: Headers,
    /// Lines lately read as prose in any state.
    prose_seen: Recent<()>,
    /// Names built from parts (`cycles.stddev_pct`), reused.
    scratch: String,
    /// Between a header and the prose that follows the block.
    in_block: bool,
    in_table: bool,
}

impl Parser {
    /// One line; `ahead` is what [`read_elapsed`] made of it, when it was read ahead.
    fn line(
        &mut self,
        line: &str,
        ahead: Option<(u32, &[f64])>,
        ctx: &mut Ctx<'_>,
    ) -> Result<(), ParseError> {
        if line.is_empty() {
            self.labels.blank();
            return Ok(());
        }
        // A summary line read ahead holds no header (its words are fixed, its numbers have no
        // spaces): taken first, before the search for one.
        if let Some((ELAPSED_READ, read)) = ahead {
            let read = |k: usize, _| Ok(read.get(k).copied().filter(|v| !v.is_nan()));
            return self.elapsed_items(read, ctx);
        }
        // Most headers start their (stripped) line: the searcher, whose setup costs more than
        // a short line's search, only for the rest, and only on lines with a `P` to start one.
        if let Some(rest) = line.strip_prefix(HEADER) {
            return self.header(rest, ctx);
        }
        // A line read as prose before is prose again, whatever the state: mails repeat their
        // headings (`== original, no patched`) between blocks.
        if self.prose_seen.find(line, |_| true).is_some() {
            self.prose(line);
            return Ok(());
        }
        if line.len() >= HEADER.len()
            && memchr::memchr(b'P', line.as_bytes()).is_some()
            && let Some(at) = HEADER_FINDER.find(line.as_bytes())
        {
            return self.header(&line[at + HEADER.len()..], ctx);
        }
        // A line read ahead and found not to be the summary line is not read again; any other
        // (a small input, the first chunk, a number the reading ahead left) is read here. The
        // value always matches when the line does; the spreads may be missing.
        if !matches!(ahead, Some((NOT_ELAPSED, _)))
            && let Some(c) = elapsed(line)
        {
            let read = |k: usize, line| {
                let what = if k == 0 {
                    "elapsed time"
                } else {
                    "elapsed time spread"
                };
                c[k].map(|t| value(t, what, line)).transpose()
            };
            return self.elapsed_items(read, ctx);
        }
        if self.in_block
            // The regex ends with `$`: only such lines can match.
            && (line.ends_with("seconds user") || line.ends_with("seconds sys"))
            && let Some(c) = USER_SYS.captures(line)
        {
            let v = value(&c[1], "CPU time", ctx.line)?;
            let stat = self.mean();
            let metric = if &c[2] == "user" { ids::USER } else { ids::SYS };
            return self.add(Item::seconds(metric, stat, v, ctx.line), ctx);
        }
        if self.in_block && line.starts_with('#') {
            let l = line.trim_start_matches('#').trim();
            if l.starts_with("Table of individual measurements") {
                self.in_table = true;
            } else if l.starts_with("Final result") {
                self.in_table = false;
            }
            // Other `#` lines are derived metrics perf prints on their own line.
            return Ok(());
        }
        if self.in_table
            && let Some(c) = TABLE_ROW.captures(line)
        {
            let v = value(&c[1], "elapsed time", ctx.line)?;
            return self.add(Item::seconds(ids::ELAPSED, Stat::Sample, v, ctx.line), ctx);
        }
        if let Some(cmd) = perf_command(line) {
            self.labels.command();
            self.in_block = false;
            self.meta.next("perf_command", cmd);
            return Ok(());
        }
        if self.in_block && starts_like_counter(line) {
            return self.counter(line, ctx);
        }
        if let Some(v) = line.strip_prefix("Time:") {
            // hackbench prints one number; anything else is someone's prose.
            if words(v).count() != 1 {
                ctx.warn(format!("a `Time:` line that is not one number: {line:?}"));
                return Ok(());
            }
            // The workload's own output (hackbench) comes before perf's summary.
            let v = parse_number(v).ok_or_else(|| {
                ParseError::syntax(ctx.line, "a number of seconds after `Time:`", line)
            })?;
            self.labels.side_data();
            self.in_block = false;
            let it = Item::seconds(ids::WORKLOAD_TIME, Stat::Sample, v, ctx.line);
            self.pending.push(it);
            if self.pending.len() >= BUFFER_LIMIT {
                // Endless workload output without a summary: give it a block of its own.
                self.start(None, None, ctx)?;
                self.in_block = false;
            }
            return Ok(());
        }
        if let Some((key, value)) = key_value(line) {
            self.labels.side_data();
            self.in_block = false;
            self.meta.next(key.trim(), value.trim());
            return Ok(());
        }
        // Remembered only when the checks made in a block or a table would refuse it too: every
        // other check above is a function of the line alone.
        if !(line.starts_with('#')
            || line.starts_with(char::is_numeric)
            || line.ends_with("seconds user")
            || line.ends_with("seconds sys")
            || starts_like_counter(line))
        {
            self.prose_seen.remember(line, ());
        }
        self.prose(line);
        Ok(())
    }

    fn prose(&mut self, line: &str) {
        self.in_block = false;
        self.in_table = false;
        self.labels.prose_stripped(line);
    }

    /// The items of a summary line: `value(k, line)` reads the elapsed time (k = 0), its
    /// spread (1) and its spread in percent (2), None for one not given.
    fn elapsed_items(
        &mut self,
        value: impl Fn(usize, u64) -> Result<Option<f64>, ParseError>,
        ctx: &mut Ctx<'_>,
    ) -> Result<(), ParseError> {
        if !self.in_block {
            self.start(None, None, ctx)?;
        }
        let stat = self.mean();
        let line = ctx.line;
        if let Some(v) = value(0, line)? {
            self.add(Item::seconds(ids::ELAPSED, stat, v, line), ctx)?;
        }
        if let Some(v) = value(1, line)? {
            let it = Item::seconds(ids::ELAPSED_STDDEV, Stat::Stddev, v, line);
            self.add(it, ctx)?;
        }
        if let Some(v) = value(2, line)? {
            let it = Item {
                unit: UnitId::Percent,
                ..Item::seconds(ids::ELAPSED_STDDEV_PCT, Stat::RelStddevPct, v, line)
            };
            self.add(it, ctx)?;
        }
        self.in_table = false;
        Ok(())
    }

    fn header(&mut self, rest: &str, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        let h = self.headers.read(rest, &mut self.ids.commands);
        if let Some(target) = Header::part(rest, h.target) {
            self.meta.next("target", target);
        }
        let command = Header::part(rest, h.command).zip(h.command_id);
        self.start(command, h.runs, ctx)
    }

    fn start(
        &mut self,
        command: Option<(&str, u32)>,
        runs: Option<u32>,
        ctx: &mut Ctx<'_>,
    ) -> Result<(), ParseError> {
        let label = self.labels.label_id();
        let label_id = Ids::label(label);
        self.meta.start_labelled(label, &self.labels, ctx.line);
        if let Some((c, _)) = command {
            self.meta.set("command", c);
        }
        if let Some(r) = runs
            && self.meta.keeps_blocks()
        {
            let mut buf = [0u8; 10];
            self.meta.set("runs", decimal(r, &mut buf));
        }
        if self.by_command.is_some() {
            self.blocks.clear();
        }
        let command = command.map(|(_, id)| id);
        let differs =
            command.is_some() && self.first_command.is_some() && command != self.first_command;
        if self.first_command.is_none() {
            self.first_command = command;
        }
        self.blocks.push(Block {
            label: label_id,
            command,
            runs,
            items: Vec::new(),
            not_counted: Vec::new(),
        });
        self.in_block = true;
        self.in_table = false;
        if differs && self.by_command.is_none() {
            self.decide(true, ctx)?;
        }
        for it in std::mem::take(&mut self.pending) {
            self.add(it, ctx)?;
        }
        Ok(())
    }

    /// Fixes whether series carry a `command` param and emits what was held back.
    fn decide(&mut self, by_command: bool, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        self.by_command = Some(by_command);
        let blocks = std::mem::take(&mut self.blocks);
        for b in &blocks {
            for it in &b.items {
                self.emit(b.label, b.command, it, ctx)?;
            }
        }
        if let Some(mut last) = blocks.into_iter().last() {
            last.items = Vec::new();
            self.blocks.push(last);
        }
        Ok(())
    }

    fn add(&mut self, item: Item, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        if item.metric != ids::WORKLOAD_TIME {
            self.measured = true;
        }
        match self.by_command {
            None => {
                if let Some(b) = self.blocks.last_mut() {
                    b.items.push(item);
                    self.buffered += 1;
                }
                if self.buffered > BUFFER_LIMIT {
                    self.decide(false, ctx)?;
                }
                Ok(())
            }
            Some(_) => match self.blocks.last() {
                Some(b) => self.emit(b.label, b.command, &item, ctx),
                None => Ok(()),
            },
        }
    }

    /// Stores a value of the block with this label and command.
    fn emit(
        &mut self,
        label: u32,
        command: Option<u32>,
        it: &Item,
        ctx: &mut Ctx<'_>,
    ) -> Result<(), ParseError> {
        let param = match self.by_command {
            Some(true) => command.is_some(),
            _ => command.is_some() && command != self.first_command,
        };
        let key = Key {
            label,
            command: command.filter(|_| param),
            metric: it.metric,
            scope: it.scope,
            stat: it.stat,
            unit: it.unit,
            direction: it.direction,
        };
        let id = self.ids.series(key, &self.labels, ctx);
        // Errors name the value's own line, which for held-back items is an earlier one.
        let current = ctx.line;
        ctx.line = it.line;
        let r = ctx.sample(id, it.value);
        ctx.line = current;
        r
    }

    /// perf prints the mean of the runs when asked for several.
    fn mean(&self) -> Stat {
        match self.blocks.last().and_then(|b| b.runs) {
            Some(r) if r > 1 => Stat::Mean,
            _ => Stat::Sample,
        }
    }

    /// The id of `event` followed by `suffix`.
    fn name(&mut self, event: &str, suffix: &str) -> u32 {
        self.scratch.clear();
        self.scratch.push_str(event);
        self.scratch.push_str(suffix);
        self.ids.names.id(&self.scratch)
    }

    /// `prefix` `event`, then `@cpu3` for a per-CPU row: a metadata key, built in the scratch.
    fn meta_key(&mut self, prefix: &str, event: &str, scope: Option<u32>) {
        self.scratch.clear();
        self.scratch.push_str(prefix);
        self.scratch.push_str(event);
        if let Some(s) = scope {
            self.scratch.push('@');
            self.scratch.push_str(self.ids.names.get(s));
        }
    }

    /// A counter row.
    fn counter(&mut self, line: &str, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        let mut rest = trim(line);
        // Trailing groups: `( +- 0.24% )` spread, `(93.10%)` multiplexing share.
        let mut spread = None;
        let mut multiplex = None;
        while rest.ends_with(')') {
            let Some(open) = rest.rfind('(') else { break };
            let inner = trim(&rest[open + 1..rest.len() - 1]);
            if let Some(pct) = inner.strip_prefix("+-") {
                spread = Some(trim(trim(pct).trim_end_matches('%')));
            } else if let Some(pct) = inner.strip_suffix('%')
                && number(pct).is_some()
            {
                multiplex = Some(trim(pct));
            } else {
                break;
            }
            rest = trim_end(&rest[..open]);
        }
        let (main, derived) = match rest.split_once('#') {
            Some((m, d)) => (trim(m), Some(d)),
            None => (rest, None),
        };
        // A row has at most a scope, a count, a unit and an event, or a `<not ...>` note and
        // an event; one more word is enough to refuse it.
        let mut buf = [""; 8];
        let mut n = 0;
        for w in words(main) {
            if n == buf.len() {
                n += 1;
                break;
            }
            buf[n] = w;
            n += 1;
        }
        let all = &buf[..n.min(buf.len())];
        let cpu = all.first().copied().filter(|t| {
            t.len() > 3 && t.starts_with("CPU") && t[3..].bytes().all(|b| b.is_ascii_digit())
        });
        let toks = if cpu.is_some() { &all[1..] } else { all };
        // `<not supported>` / `<not counted>`: two tokens in place of the count.
        if toks.first().is_some_and(|t| t.starts_with('<')) {
            // Past the words kept, the note and event are read from the whole row.
            let owned: Vec<&str>;
            let toks = if n > buf.len() {
                owned = words(main).skip(cpu.is_some() as usize).collect();
                &owned[..]
            } else {
                toks
            };
            let close = toks.iter().position(|t| t.ends_with('>'));
            let (what, event) = match close {
                Some(i) => (toks[..=i].join(" "), toks.get(i + 1).copied()),
                None => (toks.join(" "), None),
            };
            let Some(event) = event else {
                ctx.warn(format!("a `{what}` row without an event name"));
                return Ok(());
            };
            let note = if what.contains("supported") {
                format!("{event} (not supported)")
            } else {
                event.to_string()
            };
            self.measured = true;
            if let Some(b) = self.blocks.last_mut() {
                b.not_counted.push(note);
                let list = b.not_counted.join(", ");
                self.meta.set("not_counted", list);
            }
            return Ok(());
        }
        let Some(count) = toks.first().and_then(|t| number(t)) else {
            ctx.warn(format!("not a perf stat counter row: {line:?}"));
            return Ok(());
        };
        let (unit, event) = match &toks[1..] {
            [event] => (None, *event),
            [event, "(msec)"] => (Some("msec"), *event),
            [unit, event] if is_unit(unit) => (Some(*unit), *event),
            // `perf stat -G NAME`: the cgroup follows the event.
            [event, cgroup] => {
                self.meta.set("cgroup", *cgroup);
                (None, *event)
            }
            _ => {
                ctx.warn(format!("not a perf stat counter row: {line:?}"));
                return Ok(());
            }
        };
        let (unit, direction, v) = match unit {
            None => (UnitId::Count, Direction::Neutral, count),
            Some("msec") => (UnitId::Seconds, Direction::LowerIsBetter, count / 1e3),
            Some("usec" | "us") => (UnitId::Seconds, Direction::LowerIsBetter, count / 1e6),
            Some("nsec" | "ns") => (UnitId::Seconds, Direction::LowerIsBetter, count / 1e9),
            Some("sec" | "s") => (UnitId::Seconds, Direction::LowerIsBetter, count),
            Some(other) => (
                UnitId::Other(self.ids.names.id(other)),
                Direction::Neutral,
                count,
            ),
        };
        let scope = match cpu {
            // `CPU3` -> `cpu3`: the digits need no lowering.
            Some(t) => self.name("cpu", &t[3..]),
            None => ids::ALL,
        };
        let line = ctx.line;
        let counter = Item {
            metric: self.ids.names.id(event),
            scope,
            unit,
            direction,
            stat: self.mean(),
            value: v,
            line,
        };
        self.add(counter, ctx)?;
        if let Some(pct) = spread {
            let spread = Item {
                metric: self.name(event, ".stddev_pct"),
                scope,
                unit: UnitId::Percent,
                direction: Direction::LowerIsBetter,
                stat: Stat::RelStddevPct,
                value: value(pct, "counter spread", line)?,
                line,
            };
            self.add(spread, ctx)?;
        }
        if let Some(m) = multiplex {
            // Kept as a series too, so that a comparison can flag counters that were scaled
            // from a share of the run (statistic `multiplex_pct`: a summary, not a sample).
            let share = Item {
                metric: self.name(event, ".multiplex_pct"),
                scope,
                unit: UnitId::Percent,
                direction: Direction::Neutral,
                stat: Stat::MultiplexPct,
                value: value(m, "multiplexing share", line)?,
                line,
            };
            self.add(share, ctx)?;
            self.meta_key("multiplex_pct.", event, cpu.map(|_| scope));
            self.meta.set(&self.scratch, m);
        }
        if let Some(d) = derived {
            let mut joined = String::new();
            for w in words(d) {
                if !joined.is_empty() {
                    joined.push(' ');
                }
                joined.push_str(w);
            }
            if !joined.is_empty() {
                self.meta_key("derived.", event, cpu.map(|_| scope));
                self.meta.set(&self.scratch, joined);
            }
        }
        Ok(())
    }

    fn finish(mut self, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        if !self.pending.is_empty() {
            // Workload output with no perf summary after it.
            self.start(None, None, ctx)?;
        }
        if self.by_command.is_none() {
            // Commands that differ were decided on when seen: all blocks share one here.
            self.decide(false, ctx)?;
        }
        if !self.measured {
            return Err(ParseError::nothing("perf stat counters or elapsed time"));
        }
        self.meta.finish(ctx);
        Ok(())
    }
}

/// A row that starts with a count (`3,228,188`, `83723.452481`), `<not counted>`, or a `CPU3`
/// column.
fn starts_like_counter(line: &str) -> bool {
    let t = line.trim_start();
    let first = words(t).next().unwrap_or("");
    // A numbered heading (`2) After applying this patchset:`) is prose, not a count.
    (t.starts_with(|c: char| c.is_ascii_digit()) && number(first).is_some())
        || t.starts_with('<')
        || (t.starts_with("CPU") && t[3..].starts_with(|c: char| c.is_ascii_digit()))
}

/// Units perf prints between a count and its event (`527649.37 msec cpu-clock`,
/// `12.5 Joules power/energy-pkg/`).
fn is_unit(t: &str) -> bool {
    matches!(
        t,
        "msec"
            | "usec"
            | "us"
            | "nsec"
            | "ns"
            | "sec"
            | "s"
            | "Joules"
            | "J"
            | "mJ"
            | "W"
            | "MiB"
            | "KiB"
            | "GiB"
            | "B"
            | "MB"
            | "kB"
            | "%"
            | "MHz"
            | "GHz"
    )
}

fn value(text: &str, what: &str, line: u64) -> Result<f64, ParseError> {
    bare_number(text).ok_or_else(|| ParseError::bad_value(line, what, text, "expected a number"))
}

/// A number, also as authors stress the one that matters with mail emphasis: `*1.39285*`.
fn bare_number(text: &str) -> Option<f64> {
    let bare = text
        .strip_prefix('*')
        .and_then(|t| t.strip_suffix('*'))
        .unwrap_or(text);
    number(bare)
}

/// `$ perf stat -- make`, `1) perf stat --null --repeat 10 -- hackbench 20 thread 20000`.
fn perf_command(line: &str) -> Option<&str> {
    // Only a prompt, a number or nothing comes before `perf stat`: skip the search on other
    // lines (they are trimmed, so anything else starts with the first byte of something else).
    let first = *line.as_bytes().first()?;
    let maybe = matches!(first, b'p' | b'$' | b'#' | b'%' | b'0'..=b'9');
    if !(maybe || is_space(first) || !first.is_ascii()) {
        return None;
    }
    let at = find_str(line, "perf stat")?;
    let before = line[..at].trim();
    let prompt_like = before.is_empty()
        || ["$", "#", "%"].contains(&before)
        || before
            .strip_suffix([')', '.'])
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    prompt_like.then(|| line[at..].trim())
}

#[cfg(test)]
mod tests;
