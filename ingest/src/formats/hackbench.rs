//! `hackbench`: rt-tests and old hackbench output, `perf bench sched messaging` and
//! `perf bench sched pipe`.
//!
//! Variants handled:
//! - rt-tests: `Running in threaded mode with 6 groups using 2 file descriptors each (== 12
//!   tasks)` (also wrapped over two lines), `Each sender will pass N messages of S bytes`,
//!   `Time: 18.693`.
//! - old hackbench: `Running with G*40 (== T) tasks.` and `Time:` lines.
//! - `perf bench sched messaging`, old documentation style (`(20 sender and receiver processes
//!   per group)`, `(10 groups == 400 processes run)`, `Total time:0.308 sec`) and current style
//!   (`# Running 'sched/messaging' benchmark:`, `# 20 sender and receiver ...`,
//!   `Total time: 0.308 [sec]`).
//! - `perf bench sched pipe`: `(executing N pipe operations between two tasks)` or
//!   `# Executed N pipe operations ...`, `Total time`, `usecs/op`, `ops/sec`.
//! - an author's table of averages: a header row `g= 6 12 ...` and rows `w/o: 1.2474 ...`.
//!
//! Metrics: `time` (s, lower is better) from `Time:`; `total_time` (s) from perf bench;
//! `time_per_op` (s per operation, from `usecs/op`); `ops_per_sec` (`ops/s`, higher is
//! better). Table cells are summaries, not samples: series `time` with statistic `mean` (or
//! `median` when the prose says so), param `groups` (or the header's name) and the row name
//! as label.
//!
//! Metadata: `mode` (`process`/`thread`), `groups`, `fds`, `tasks`, `loops`, `bytes`,
//! `per_group`, `ops`, `ipc`, `benchmark` (`sched/messaging`, `sched/pipe`) and `command`.
//! Output lines win over values read from the hackbench command line. Each `perf bench`
//! command starts a block labelled by its options (`default` without options); other blocks
//! take their label from the author's prose.

use std::sync::LazyLock;

use regex::Regex;

use super::Format;
use super::blocks::{BlockMeta, Labeler};
use crate::error::ParseError;
use crate::lines::{Lines, parse_number, strip_mail};
use crate::model::{Ctx, Direction, SeriesKey, SeriesSpec, Unit};

pub struct Hackbench;

static RUNNING: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^Running in (process|threaded|thread) mode with (\d+) groups using (\d+) file descriptors each \(== (\d+) tasks\)",
    )
    .expect("valid regex")
});
static EACH_SENDER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^Each sender will pass (\d+) messages of (\d+) bytes").expect("valid regex")
});
static RUNNING_OLD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^Running with (\d+)\*(\d+) \(== (\d+)\) tasks").expect("valid regex")
});
static PER_GROUP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(\d+) sender and receiver (processes|threads) per group").expect("valid regex")
});
static GROUPS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(\d+) groups == (\d+) (processes|threads) run").expect("valid regex")
});
static PIPE_OPS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?:executing|executed) (\d+) pipe operations between two (\w+)")
        .expect("valid regex")
});
static TOTAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^Total time:\s*(\S+?)\s*(?:\[sec\]|sec)?$").expect("valid regex")
});
static BANNER: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^#\s*Running '([\w/-]+)' benchmark").expect("valid regex"));
/// A table row: a name, `=` or `:`, then at least two numbers.
static TABLE_ROW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^([A-Za-z][\w/+.-]*(?: [\w/+.-]+)*)\s*[=:]\s*((?:-?\d+(?:\.\d+)?\s+)+-?\d+(?:\.\d+)?)$",
    )
    .expect("valid regex")
});

impl Format for Hackbench {
    fn name(&self) -> &'static str {
        "hackbench"
    }

    fn description(&self) -> &'static str {
        "hackbench (rt-tests and old) and perf bench sched messaging/pipe output"
    }

    fn sniff(&self, head: &str) -> u32 {
        let mut score = 0;
        let mut time_lines = 0;
        let mut mentions = false;
        for raw in head.lines() {
            let line = strip_mail(raw);
            if line.starts_with("Running in ") && line.contains(" mode with ")
                || line.starts_with("Each sender will pass ")
                || line.starts_with("Running with ") && line.contains(" tasks")
                || line.contains("sender and receiver ")
                || line.contains(" pipe operations between two ")
                // The regex only where it can match: compiling it costs more than sniffing.
                || line.starts_with('#') && line.contains("Running '") && BANNER.is_match(line)
            {
                score = score.max(90);
            }
            if line.contains("perf bench sched") {
                score = score.max(80);
            }
            if line.contains("hackbench") {
                mentions = true;
            }
            if let Some(v) = line.strip_prefix("Time:")
                && parse_number(v).is_some()
            {
                time_lines += 1;
            }
        }
        if time_lines > 0 {
            score = score.max(if mentions { 60 } else { 35 });
        }
        score
    }

    fn parse(&self, lines: &mut Lines<'_>, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        let mut p = Parser::default();
        // The current line is copied out so that a wrapped header can be read ahead.
        let mut buf = String::new();
        while let Some(raw) = lines.next_line()? {
            buf.clear();
            buf.push_str(raw);
            ctx.line = lines.line_no();
            let line = strip_mail(&buf).trim_end();
            if line.is_empty() {
                p.end_table(ctx);
                p.labels.blank();
                continue;
            }
            if line.starts_with("Running in ") && !line.contains("tasks)") {
                // Mailers wrap the header before `each (== N tasks)`.
                let mut joined = line.to_string();
                if let Some(next) = lines.next_line()? {
                    let next = strip_mail(next).trim_end();
                    if next.contains("tasks)") {
                        joined.push(' ');
                        joined.push_str(next);
                    } else {
                        lines.push_back();
                    }
                }
                p.line(&joined, ctx)?;
                ctx.line = lines.line_no();
                continue;
            }
            p.line(line, ctx)?;
        }
        p.end_table(ctx);
        if p.values == 0 && p.meta.len() == 0 {
            return Err(ParseError::nothing(
                "hackbench `Time:` line, header or perf bench sched result",
            ));
        }
        if p.values == 0 {
            ctx.warn_at(0, "a hackbench header without any time");
        }
        p.meta.finish(ctx);
        Ok(())
    }
}

#[derive(Default)]
struct Parser {
    labels: Labeler,
    meta: BlockMeta,
    /// Whether the lines read since the last prose belong to a block already started.
    in_block: bool,
    label: Option<String>,
    values: usize,
    /// The current block already holds a result.
    has_result: bool,
    /// The current block was just opened by a `perf bench` command line.
    explicit: bool,
    table: Option<Table>,
    /// The prose read before a table says its cells are medians.
    prose_median: bool,
}

struct Table {
    param: String,
    columns: Vec<String>,
    line: u64,
    /// The header line also reads as a row; it is one only if no row follows.
    rows: usize,
    name: String,
}

impl Parser {
    fn start_block(&mut self, ctx: &mut Ctx<'_>) {
        if !self.in_block {
            self.has_result = false;
            self.label = self.labels.label();
            self.meta.start(self.label.clone(), ctx.line);
            self.in_block = true;
        }
    }

    /// A perf bench description line: after a result it opens the next run.
    fn new_run(&mut self, ctx: &mut Ctx<'_>) {
        if self.has_result {
            self.in_block = false;
        }
        self.explicit = false;
        self.start_block(ctx);
    }

    fn set(&mut self, key: &str, value: &str) {
        self.meta.set(key, value);
    }

    fn push(&mut self, spec: SeriesSpec, v: f64, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        self.values += 1;
        self.has_result = true;
        self.explicit = false;
        ctx.push(spec, v)
    }

    fn line(&mut self, line: &str, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        if let Some(c) = RUNNING.captures(line) {
            self.end_table(ctx);
            self.in_block = false;
            self.start_block(ctx);
            let mode = if &c[1] == "process" {
                "process"
            } else {
                "thread"
            };
            self.set("mode", mode);
            self.set("groups", &c[2]);
            self.set("fds", &c[3]);
            self.set("tasks", &c[4]);
            return Ok(());
        }
        if let Some(c) = EACH_SENDER.captures(line) {
            self.start_block(ctx);
            self.set("loops", &c[1]);
            self.set("bytes", &c[2]);
            return Ok(());
        }
        if let Some(c) = RUNNING_OLD.captures(line) {
            self.end_table(ctx);
            self.in_block = false;
            self.start_block(ctx);
            self.set("groups", &c[1]);
            self.set("per_group", &c[2]);
            self.set("tasks", &c[3]);
            return Ok(());
        }
        if let Some(v) = line.strip_prefix("Time:") {
            // hackbench prints one number; anything else is someone's prose.
            if v.split_whitespace().count() != 1 {
                ctx.warn(format!("a `Time:` line that is not one number: {line:?}"));
                return Ok(());
            }
            self.end_table(ctx);
            self.start_block(ctx);
            let v = parse_number(v).ok_or_else(|| {
                ParseError::syntax(ctx.line, "a number of seconds after `Time:`", line)
            })?;
            let key = SeriesKey::new("time").label(self.label.clone());
            return self.push(SeriesSpec::duration(key), v, ctx);
        }
        if let Some(c) = BANNER.captures(line) {
            // The banner opens each run of current perf.
            if !self.explicit {
                self.in_block = false;
            }
            self.explicit = false;
            self.start_block(ctx);
            self.set("benchmark", &c[1]);
            return Ok(());
        }
        if let Some(c) = PER_GROUP.captures(line) {
            self.new_run(ctx);
            self.set("benchmark", "sched/messaging");
            self.set("per_group", &c[1]);
            self.set(
                "mode",
                if &c[2] == "processes" {
                    "process"
                } else {
                    "thread"
                },
            );
            return Ok(());
        }
        if let Some(c) = GROUPS.captures(line) {
            self.start_block(ctx);
            self.set("benchmark", "sched/messaging");
            self.set("groups", &c[1]);
            self.set("tasks", &c[2]);
            return Ok(());
        }
        if let Some(c) = PIPE_OPS.captures(line) {
            self.new_run(ctx);
            self.set("benchmark", "sched/pipe");
            self.set("ops", &c[1]);
            return Ok(());
        }
        if let Some(c) = TOTAL.captures(line) {
            self.start_block(ctx);
            let v = parse_number(&c[1]).ok_or_else(|| {
                ParseError::syntax(ctx.line, "a number of seconds after `Total time:`", line)
            })?;
            let key = SeriesKey::new("total_time").label(self.label.clone());
            return self.push(SeriesSpec::duration(key), v, ctx);
        }
        if let Some(v) = line.strip_suffix("usecs/op") {
            self.start_block(ctx);
            let v = parse_number(v).ok_or_else(|| {
                ParseError::syntax(ctx.line, "a number of microseconds before `usecs/op`", line)
            })?;
            let key = SeriesKey::new("time_per_op").label(self.label.clone());
            return self.push(SeriesSpec::duration(key), v / 1e6, ctx);
        }
        if let Some(v) = line.strip_suffix("ops/sec") {
            self.start_block(ctx);
            let v = parse_number(v).ok_or_else(|| {
                ParseError::syntax(ctx.line, "a number of operations before `ops/sec`", line)
            })?;
            let key = SeriesKey::new("ops_per_sec").label(self.label.clone());
            let spec = SeriesSpec::new(key, Unit::Other("ops/s".into()), Direction::HigherIsBetter);
            return self.push(spec, v, ctx);
        }
        if let Some(c) = TABLE_ROW.captures(line) {
            return self.table_row(&c[1], &c[2], ctx);
        }
        if let Some(cmd) = command(line) {
            self.end_table(ctx);
            self.labels.command();
            self.in_block = false;
            self.command(cmd, ctx);
            return Ok(());
        }
        self.end_table(ctx);
        if line.contains("median") {
            self.prose_median = true;
        } else if line.contains("average") || line.contains("mean") {
            self.prose_median = false;
        }
        self.labels.prose(line);
        self.in_block = false;
        Ok(())
    }

    /// A command line: perf bench starts a labelled block; hackbench's arguments are recorded.
    fn command(&mut self, cmd: &str, ctx: &mut Ctx<'_>) {
        let toks: Vec<&str> = cmd.split_whitespace().collect();
        if let Some(i) = toks
            .windows(3)
            .position(|w| w[0] == "perf" && w[1] == "bench")
        {
            let sub = toks[i + 2..]
                .iter()
                .take(2)
                .copied()
                .collect::<Vec<_>>()
                .join("/");
            let opts = toks.get(i + 4..).unwrap_or(&[]).join(" ");
            let label = if opts.is_empty() {
                "default".to_string()
            } else {
                opts
            };
            self.labels.set(Some(label));
            self.start_block(ctx);
            self.explicit = true;
            self.set("command", cmd);
            if !sub.is_empty() {
                self.set("benchmark", &sub);
            }
            return;
        }
        let Some(i) = toks
            .iter()
            .position(|t| t.rsplit('/').next() == Some("hackbench"))
        else {
            return;
        };
        self.meta.next("command", cmd);
        // Values taken from the command line; the output's header, if any, overrides them.
        let args = &toks[i + 1..];
        let mut positional = 0;
        let mut k = 0;
        while k < args.len() {
            let a = args[k];
            let val = args
                .get(k + 1)
                .copied()
                .filter(|v| v.parse::<u64>().is_ok());
            match a {
                "-p" | "--pipe" | "-pipe" => self.meta.next("ipc", "pipe"),
                "-T" | "--threads" | "thread" => self.meta.next("mode", "thread"),
                "-P" | "--process" | "process" => self.meta.next("mode", "process"),
                "-g" | "--groups" | "-l" | "--loops" | "-s" | "--datasize" => {
                    if let Some(v) = val {
                        let key = match a {
                            "-g" | "--groups" => "groups",
                            "-l" | "--loops" => "loops",
                            _ => "bytes",
                        };
                        self.meta.next(key, v);
                        k += 1;
                    }
                }
                _ if a.parse::<u64>().is_ok() => {
                    // Old syntax: hackbench [-pipe] <groups> [process|thread] [loops].
                    let key = if positional == 0 { "groups" } else { "loops" };
                    self.meta.next(key, a);
                    positional += 1;
                }
                _ => {}
            }
            k += 1;
        }
    }

    fn table_row(&mut self, name: &str, values: &str, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        let name = name.trim();
        let cells: Vec<&str> = values.split_whitespace().collect();
        let Some(table) = &mut self.table else {
            self.labels.side_data();
            self.table = Some(Table {
                param: param_name(name),
                columns: cells.iter().map(|c| c.to_string()).collect(),
                line: ctx.line,
                rows: 0,
                name: name.to_string(),
            });
            return Ok(());
        };
        if cells.len() != table.columns.len() {
            ctx.warn(format!(
                "table row `{name}` has {} values for {} columns (header at line {})",
                cells.len(),
                table.columns.len(),
                table.line
            ));
            return Ok(());
        }
        table.rows += 1;
        let statistic = if self.prose_median { "median" } else { "mean" };
        let param = table.param.clone();
        let columns = table.columns.clone();
        for (col, cell) in columns.iter().zip(&cells) {
            let v = parse_number(cell)
                .ok_or_else(|| ParseError::syntax(ctx.line, "a number in the table row", *cell))?;
            let key = SeriesKey::new("time")
                .label(Some(name.to_string()))
                .param(param.clone(), col.clone())
                .statistic(statistic);
            self.push(SeriesSpec::duration(key), v, ctx)?;
        }
        Ok(())
    }

    fn end_table(&mut self, ctx: &mut Ctx<'_>) {
        if let Some(t) = self.table.take()
            && t.rows == 0
        {
            ctx.warn_at(
                t.line,
                format!(
                    "`{}` looks like a table row without a header or a table without rows",
                    t.name
                ),
            );
        }
    }
}

/// Names the swept parameter of a table header after hackbench's options.
fn param_name(name: &str) -> String {
    match name.trim_start_matches('-') {
        "g" | "groups" => "groups".into(),
        "l" | "loops" => "loops".into(),
        "f" | "fds" => "fds".into(),
        "s" | "datasize" => "bytes".into(),
        other => other.to_string(),
    }
}

/// A shell command: `% perf bench ...`, `$ hackbench ...`, ` # /usr/local/bin/hackbench 50`,
/// or a bare `perf bench ...` / `hackbench ...` line; trailing `# comments` removed.
fn command(line: &str) -> Option<&str> {
    let (body, prompted) = match ["$ ", "# ", "% "].iter().find_map(|p| line.strip_prefix(p)) {
        Some(b) => (b, true),
        None => (line, false),
    };
    let body = match body.find(" #") {
        Some(i) => &body[..i],
        None => body,
    }
    .trim();
    let mut toks = body.split_whitespace();
    let first = toks.next()?;
    let second = toks.next();
    // Without a prompt, prose may start with the word too ("hackbench will report ...").
    let bare_ok = match first.rsplit('/').next() {
        Some("perf") => second == Some("bench"),
        Some("hackbench") => second.is_none_or(|s| s.starts_with('-') || s.parse::<u64>().is_ok()),
        _ => false,
    };
    (prompted || bare_ok).then_some(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands() {
        assert_eq!(
            command("% perf bench sched messaging -t -g 20        # be multi-thread"),
            Some("perf bench sched messaging -t -g 20")
        );
        assert_eq!(
            command("# /usr/local/bin/hackbench 50"),
            Some("/usr/local/bin/hackbench 50")
        );
        assert_eq!(command("hackbench will report the time"), None);
    }

    #[test]
    fn table_rows() {
        let c = TABLE_ROW.captures("w/ : 1.1458 1.3309").unwrap();
        assert_eq!(&c[1], "w/");
        let c = TABLE_ROW.captures("g=    6       12    18").unwrap();
        assert_eq!(&c[1], "g");
        assert!(TABLE_ROW.captures("Time: 18.693").is_none());
    }
}
