//! The ftrace function profiler's per-CPU tables (`trace_stat/function<N>`).
//!
//! Variants handled:
//! * a single `functionN` file: the CPU comes from the file name (`function3` -> `cpu3`); a file
//!   whose name carries no CPU number is `cpu0`, noted in meta `cpu_note`;
//! * `head trace_stat/function*` output with `==> path/functionN <==` headers (CPU from the
//!   path), and `cat trace_stat/function*` concatenations where the header simply repeats (each
//!   new table is the next CPU in order); a `# cat .../function0` command line also names the CPU;
//! * the 5-column table (`Function Hit Time Avg s^2`), the 4-column one of kernels before s^2
//!   was added, and the 2-column `Function Hit` one of kernels without the graph tracer;
//! * kernel alignment with trailing padding, whitespace collapsed by mail archives, `> ` quoting;
//! * labels between blocks (`original:`, `apply patch:`, `BEFORE (...)`, `AFTER (...)`): they
//!   become [`SeriesKey::label`] and restart the CPU order of header-less concatenations; a
//!   line of prose after a label's tables ends its section, so later tables are unlabelled.
//!
//! Function names are kept as printed: the kernel cuts them at 30 characters
//! (`rcu_preempt_deferred_qs_handle`) and they may hold `.` or `sym+0xoff`.
//!
//! Series per table row, scope `cpuN`:
//! * `FUNCTION.hit`: calls (count, neutral);
//! * `FUNCTION.time`: total time in the function (s, lower is better; printed in µs);
//! * `FUNCTION.avg`: time per call (s, lower is better);
//! * `FUNCTION.s2`: the variance of the per-call time (s^2, lower is better). The kernel labels
//!   it `us` but prints µs², so the value is multiplied by 1e-12.
//!
//! Each table gives one sample to each of its row series, so a file holding the same CPU twice
//! without a label in between gives two samples.
//!
//! Totals, scope `all`, only when the input itself holds two or more CPUs: per label, hit and
//! time summed over the CPUs of one round of tables, and `avg` = Σtime / Σhit (s^2 cannot be
//! combined without the raw sums). A directory of `function0..N` files arrives here one file at
//! a time, each with one CPU: no totals are made for those, because the per-file total would be
//! that CPU alone; the per-CPU series of all files land in the same run and the totals are the
//! compare side's to compute. Meta `cpus` holds the number of distinct CPUs in the input.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::Format;
use crate::error::ParseError;
use crate::intern::Interner;
use crate::lines::{self, Lines, words};
mod row;

use row::{Row, parse_row, parse_row_fast};

use crate::model::{Cell, Ctx, Direction, RowBatch, SeriesKey, SeriesSpec, Unit};

pub struct TraceStat;

impl Format for TraceStat {
    fn name(&self) -> &'static str {
        "trace_stat"
    }

    fn description(&self) -> &'static str {
        "ftrace function profiler tables (trace_stat/function<N>, head/cat of several CPUs)"
    }

    fn sniff(&self, head: &str) -> u32 {
        let mut score = 0;
        for raw in head.lines().take(2000) {
            let line = lines::strip_mail(raw);
            if header_columns(line).is_some() {
                return 90;
            }
            if line.contains("trace_stat/function") {
                score = 20;
            }
        }
        score
    }

    fn parse(&self, lines: &mut Lines<'_>, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        let file_cpu = ctx.file_name.as_deref().and_then(cpu_from_path);
        let mut p = Parser::new(file_cpu);
        loop {
            match lines.next_numbered() {
                Ok(Some((line_no, line))) => {
                    ctx.line = line_no;
                    p.line(line, ctx)?;
                }
                Ok(None) => break,
                Err(e) => {
                    // The rows read so far reach the sink, as they would unbatched.
                    p.flush(ctx)?;
                    return Err(e);
                }
            }
        }
        p.finish(ctx)
    }
}

/// The number of duration columns announced by a `Function  Hit ...` header line.
fn header_columns(line: &str) -> Option<usize> {
    let mut it = lines::words(line);
    if it.next()? != "Function" || it.next()? != "Hit" {
        return None;
    }
    let rest: Vec<&str> = it.collect();
    match rest.as_slice() {
        [] => Some(0),
        ["Time", "Avg"] => Some(2),
        ["Time", "Avg", "s^2"] => Some(3),
        _ => None,
    }
}

/// The CPU of a `functionN` file name or path (`/sys/.../trace_stat/function3`, `function3.txt`).
fn cpu_from_path(path: &str) -> Option<u32> {
    let base = path.rsplit(['/', '\\']).next()?;
    // Drop extensions such as `.txt` or `.gz`; a name like `function3` has none.
    let mut stem = base;
    while let Some((s, ext)) = stem.rsplit_once('.') {
        if ext.is_empty() || !ext.bytes().all(|b| b.is_ascii_alphabetic()) {
            break;
        }
        stem = s;
    }
    let digits = stem.len() - stem.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 || !stem[..stem.len() - digits].ends_with("function") {
        return None;
    }
    stem[stem.len() - digits..].parse().ok()
}

/// A label line between blocks: `original:`, `apply patch:`, `BEFORE (why)`, `== AFTER ==`.
/// Returns the label (the author's words without `:`, `==` and a trailing parenthesis).
fn label_of(line: &str) -> Option<&str> {
    if line.starts_with(['#', '$', '[']) || line.contains("==>") {
        return None;
    }
    let fenced = line.starts_with("==");
    let s = line.trim_matches('=').trim();
    let colon = s.ends_with(':');
    let s = s.trim_end_matches(':').trim_end();
    let core = match s.strip_suffix(')').and_then(|x| x.rfind(" (")) {
        Some(i) => s[..i].trim_end(),
        None => s,
    };
    let core = core.trim_end_matches(':').trim_end();
    if core.is_empty() || core.len() > 40 || words(core).count() > 5 {
        return None;
    }
    if core
        .split_whitespace()
        .any(|t| lines::parse_number(t).is_some())
    {
        return None;
    }
    let shouting = core.bytes().any(|b| b.is_ascii_uppercase())
        && !core.bytes().any(|b| b.is_ascii_lowercase());
    (colon || fenced || shouting).then_some(core)
}

/// A line of the author's words: not a command (`#`, `$`), a log line (`[`) or a rule.
fn is_prose(line: &str) -> bool {
    let line = line.trim_start();
    !line.starts_with(['#', '$', '[', '-', '='])
        && line
            .split_whitespace()
            .any(|w| w.len() >= 2 && w.bytes().all(|b| b.is_ascii_alphabetic()))
}

/// Looks like a table row that did not parse: a name followed by numbers.
fn looks_like_data(line: &str) -> bool {
    let mut it = lines::words(line);
    it.next().is_some()
        && it
            .next()
            .is_some_and(|t| t.starts_with(|c: char| c.is_ascii_digit() || c == '-'))
}

/// Sums of one round of tables (one table per CPU) under one label.
#[derive(Default)]
struct Group {
    label: Option<String>,
    cpus: BTreeSet<u32>,
    /// The functions, in one buffer: each CPU's table lists them in the same order, so the
    /// next row is most often the next one, found without hashing.
    names: Interner,
    /// By function id: (Σhit, Σtime in µs, whether the rows had a time column)
    sums: Vec<(f64, f64, bool)>,
}

impl Group {
    fn new(label: Option<String>) -> Self {
        Group {
            label,
            ..Group::default()
        }
    }
}

struct Table {
    cpu: u32,
    columns: usize,
    rows: usize,
    header_line: u64,
}

struct Parser {
    file_cpu: Option<u32>,
    label: Option<String>,
    /// CPU named by the last `==> path <==` header or `cat .../functionN` command.
    named_cpu: Option<u32>,
    /// Next CPU for a table nothing names (header-less concatenations).
    next_cpu: u32,
    numbered_by_order: bool,
    table: Option<Table>,
    cpus: BTreeSet<u32>,
    group: Group,
    /// Finished groups kept until the input is known to hold two or more CPUs.
    pending: Vec<Group>,
    tables: u64,
    rows: u64,
    first_line: Option<(u64, String)>,
    /// The spec of the value being stored, reused, and the CPU its scope names.
    spec: SeriesSpec,
    spec_cpu: Option<u32>,
    /// Rows of the current table not yet given to the sink, and their number of cells: a
    /// table's rows reach the sink in batches, which share the work of finding what they
    /// have in common. Pushed before anything else reaches the sink.
    batch: RowBatch,
    batch_cells: usize,
}

/// Rows given to the sink at a time.
const BATCH: usize = 256;

impl Parser {
    fn new(file_cpu: Option<u32>) -> Self {
        Parser {
            file_cpu,
            label: None,
            named_cpu: None,
            next_cpu: 0,
            numbered_by_order: false,
            table: None,
            cpus: BTreeSet::new(),
            group: Group::new(None),
            pending: Vec::new(),
            tables: 0,
            rows: 0,
            first_line: None,
            spec: SeriesSpec::count(SeriesKey::new(String::new())),
            spec_cpu: None,
            batch: RowBatch::default(),
            batch_cells: 0,
        }
    }

    fn line(&mut self, raw: &str, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        // A table row is most lines. One that reads here is none of the lines the checks
        // below look for (it is not empty and its second word is a number), and a table's
        // header already set `first_line`.
        if let Some(table) = &mut self.table
            && let Some(row) = parse_row_fast(raw, table.columns)
        {
            table.rows += 1;
            let cpu = table.cpu;
            return self.row(&row, cpu, ctx);
        }
        self.flush(ctx)?;
        let line = lines::trim_end(lines::strip_mail(raw));
        if line.is_empty() {
            self.end_table(ctx);
            return Ok(());
        }
        if self.first_line.is_none() {
            self.first_line = Some((ctx.line, line.to_string()));
        }
        if let Some(path) = line.strip_prefix("==>").and_then(|s| s.strip_suffix("<==")) {
            self.end_table(ctx);
            self.named_cpu = cpu_from_path(path.trim());
            return Ok(());
        }
        if let Some(columns) = header_columns(line) {
            self.end_table(ctx);
            self.start_table(columns, ctx)?;
            return Ok(());
        }
        if let Some(table) = &mut self.table {
            if line.bytes().all(|b| b == b'-' || b == b' ' || b == b'\t') {
                return Ok(());
            }
            if let Some(row) = parse_row(line, table.columns) {
                table.rows += 1;
                let cpu = table.cpu;
                return self.row(&row, cpu, ctx);
            }
            if looks_like_data(line) {
                let expected = match table.columns {
                    0 => "`NAME HIT`",
                    2 => "`NAME HIT TIME us AVG us`",
                    _ => "`NAME HIT TIME us AVG us S^2 us`",
                };
                ctx.warn(format!(
                    "not a trace_stat row (expected {expected}): {line:?}"
                ));
                return Ok(());
            }
            // Prose right after a table ends it.
            self.end_table(ctx);
        }
        if line.contains("trace_stat/function") {
            // `# cat /sys/kernel/debug/tracing/trace_stat/function0` names the next table's CPU.
            self.named_cpu = line
                .split_whitespace()
                .filter(|t| t.contains("trace_stat/function"))
                .find_map(cpu_from_path);
            return Ok(());
        }
        let label = label_of(line);
        if label.is_none() && self.label.is_some() && !self.group.cpus.is_empty() && is_prose(line)
        {
            // Prose after a label's tables closes its section: a table further down (a commit
            // message's "Sample output" quoting one CPU again) is not one more CPU of that label.
            self.flush_group(ctx)?;
            self.label = None;
            self.group = Group::new(None);
            self.next_cpu = 0;
            self.named_cpu = None;
        }
        if let Some(label) = label {
            self.flush_group(ctx)?;
            if label != line.trim_end_matches(':') {
                ctx.meta(&format!("label.{label}"), line);
            }
            self.label = Some(label.to_string());
            self.group = Group::new(self.label.clone());
            self.next_cpu = 0;
            self.named_cpu = None;
        }
        Ok(())
    }

    fn start_table(&mut self, columns: usize, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        let cpu = match self.named_cpu.take().or(self.file_cpu) {
            Some(c) => c,
            None => {
                self.numbered_by_order = true;
                self.next_cpu
            }
        };
        self.next_cpu = cpu + 1;
        if self.group.cpus.contains(&cpu) {
            // The same CPU again under the same label: a new round of tables.
            self.flush_group(ctx)?;
            self.group = Group::new(self.label.clone());
        }
        self.group.cpus.insert(cpu);
        if self.cpus.insert(cpu) && self.cpus.len() == 2 {
            for g in std::mem::take(&mut self.pending) {
                emit_totals(&g, ctx)?;
            }
        }
        self.tables += 1;
        self.table = Some(Table {
            cpu,
            columns,
            rows: 0,
            header_line: ctx.line,
        });
        Ok(())
    }

    fn end_table(&mut self, ctx: &mut Ctx<'_>) {
        if let Some(t) = self.table.take()
            && t.rows == 0
        {
            ctx.warn_at(
                t.header_line,
                format!(
                    "a trace_stat table with no rows (cpu{}: the profiler recorded no hits)",
                    t.cpu
                ),
            );
        }
    }

    fn row(&mut self, row: &Row<'_>, cpu: u32, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        if !is_whole(row.hit) {
            ctx.warn(format!(
                "trace_stat hit count {} of {} is not a whole number; row skipped",
                row.hit, row.name
            ));
            return Ok(());
        }
        self.rows += 1;
        let n = match row.n {
            0 => 1,
            2 => 3,
            _ => 4,
        };
        if self.spec_cpu != Some(cpu) || self.batch_cells != n {
            self.flush(ctx)?;
            self.batch_cells = n;
        }
        // One spec reused for every value: only a new series costs an allocation (in the sink).
        let spec = &mut self.spec;
        if self.spec_cpu != Some(cpu) {
            spec.key.scope.clear();
            let _ = write!(spec.key.scope, "cpu{cpu}");
            self.spec_cpu = Some(cpu);
        }
        if spec.key.label != self.label {
            // Labels change between tables, with the batch pushed.
            spec.key.label.clone_from(&self.label);
        }
        let d = &row.durations;
        let values = [
            row.hit,
            lines::us_to_s(d[0]),
            lines::us_to_s(d[1]),
            // Printed as `us` but the kernel computes it in µs²: 1 µs² = 1e-12 s².
            d[2] * 1e-12,
        ];
        let values = &values[..n];
        if values.iter().all(|v| v.to_bits() < f64::INFINITY.to_bits()) {
            self.batch.push(&[row.name, "."], values);
            if self.batch.len() == BATCH {
                self.flush(ctx)?;
            }
        } else {
            // A value the sink may refuse: pushed alone, so that the error names its line.
            self.flush(ctx)?;
            let spec = &mut self.spec;
            spec.key.metric.clear();
            spec.key.metric.push_str(row.name);
            spec.key.metric.push('.');
            let stem = spec.key.metric.len();
            let mut cells = CELLS;
            for (c, &v) in cells.iter_mut().zip(values) {
                c.value = v;
            }
            ctx.push_row(spec, stem, &cells[..n])?;
        }
        let g = &mut self.group;
        let i = g.names.id_in_order(row.name) as usize;
        if i == g.sums.len() {
            g.sums.push((0.0, 0.0, false));
        }
        let s = &mut g.sums[i];
        s.0 += row.hit;
        if row.n >= 2 {
            s.1 += row.durations[0];
            s.2 = true;
        }
        Ok(())
    }

    /// Gives the batched rows to the sink.
    fn flush(&mut self, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        if self.batch.is_empty() {
            return Ok(());
        }
        ctx.push_rows(&mut self.spec, &CELLS[..self.batch_cells], &self.batch)?;
        self.batch.clear();
        Ok(())
    }

    fn flush_group(&mut self, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        let g = std::mem::take(&mut self.group);
        if g.sums.is_empty() {
            return Ok(());
        }
        if self.cpus.len() >= 2 {
            emit_totals(&g, ctx)
        } else {
            self.pending.push(g);
            Ok(())
        }
    }

    fn finish(mut self, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        self.flush(ctx)?;
        self.end_table(ctx);
        self.flush_group(ctx)?;
        if self.tables == 0 {
            return Err(match self.first_line {
                Some((line, text)) => ParseError::syntax(
                    line,
                    "a trace_stat table header `Function  Hit  Time  Avg  s^2`",
                    text,
                ),
                None => ParseError::nothing("trace_stat tables"),
            });
        }
        ctx.meta("cpus", self.cpus.len().to_string());
        ctx.meta("tables", self.tables.to_string());
        ctx.meta("rows", self.rows.to_string());
        if self.numbered_by_order {
            ctx.meta(
                "cpu_note",
                if self.tables == 1 {
                    "no CPU number in the file name or the content: the table is taken as cpu0"
                } else {
                    "no CPU number in the file name or the content: tables are numbered cpu0, \
                     cpu1, ... in order, restarting at each label"
                },
            );
        }
        Ok(())
    }
}

/// `x.fract() == 0.0` without the call to `trunc` it makes.
fn is_whole(x: f64) -> bool {
    if x.abs() < (1u64 << 52) as f64 {
        (x as i64) as f64 == x
    } else {
        // From 2^52 on every finite value is whole; NaN and the infinities have a NaN fraction.
        x.is_finite()
    }
}

static COUNT: Unit = Unit::Count;
static SECONDS: Unit = Unit::Seconds;
static SECONDS_SQUARED: Unit = Unit::SecondsSquared;

/// The cells of a row (the first 1, 3 or 4), without their values.
static CELLS: [Cell<'static>; 4] = [
    Cell {
        suffix: "hit",
        unit: &COUNT,
        direction: Direction::Neutral,
        value: 0.0,
    },
    Cell {
        suffix: "time",
        unit: &SECONDS,
        direction: Direction::LowerIsBetter,
        value: 0.0,
    },
    Cell {
        suffix: "avg",
        unit: &SECONDS,
        direction: Direction::LowerIsBetter,
        value: 0.0,
    },
    Cell {
        suffix: "s2",
        unit: &SECONDS_SQUARED,
        direction: Direction::LowerIsBetter,
        value: 0.0,
    },
];

/// The `all` series of one round of tables.
fn emit_totals(g: &Group, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
    // One spec reused for every total: a profile has three per function.
    let mut spec = SeriesSpec::count(SeriesKey::new(String::new()).label(g.label.clone()));
    let mut push = |name: &str, what: &str, duration: bool, value: f64| {
        spec.key.metric.clear();
        spec.key.metric.push_str(name);
        spec.key.metric.push('.');
        spec.key.metric.push_str(what);
        (spec.unit, spec.direction) = if duration {
            (Unit::Seconds, Direction::LowerIsBetter)
        } else {
            (Unit::Count, Direction::Neutral)
        };
        ctx.push_ref(&spec, value).map(|_| ())
    };
    for (i, (hit, time_us, timed)) in g.sums.iter().enumerate() {
        let name = g.names.get(i as u32);
        push(name, "hit", false, *hit)?;
        if *timed {
            push(name, "time", true, lines::us_to_s(*time_us))?;
            if *hit > 0.0 {
                push(name, "avg", true, lines::us_to_s(time_us / hit))?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_numbers() {
        for x in [
            0.0,
            -0.0,
            1.0,
            -3.0,
            0.5,
            -0.5,
            1e15 + 0.5,
            4503599627370495.5,
            4503599627370496.0,
            -4503599627370497.0,
            1e300,
            f64::MAX,
            f64::MIN_POSITIVE,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
        ] {
            assert_eq!(is_whole(x), x.fract() == 0.0, "{x}");
        }
    }

    #[test]
    fn cpu_from_names() {
        assert_eq!(cpu_from_path("function3"), Some(3));
        assert_eq!(
            cpu_from_path("/sys/kernel/tracing/trace_stat/function12"),
            Some(12)
        );
        assert_eq!(cpu_from_path("function0.txt"), Some(0));
        assert_eq!(cpu_from_path("function*"), None);
        assert_eq!(cpu_from_path("x_function0_scenario1.txt"), None);
    }

    #[test]
    fn labels() {
        assert_eq!(label_of("original:"), Some("original"));
        assert_eq!(label_of("apply patch:"), Some("apply patch"));
        assert_eq!(
            label_of("BEFORE (all new blocks are put to the head of a free list)"),
            Some("BEFORE")
        );
        assert_eq!(label_of("== vanilla =="), Some("vanilla"));
        assert_eq!(label_of("original: 56376  apply patch: 33521"), None);
        assert_eq!(
            label_of("Sample output from one of these files is as follows:"),
            None
        );
        assert_eq!(label_of("Signed-off-by: A <a@b>"), None);
    }
}
