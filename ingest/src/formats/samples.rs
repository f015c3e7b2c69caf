//! The generic input, for measurements no other format covers (boot-time counters, numbers
//! copied from a mail).
//!
//! Variants handled:
//! - plain numbers as ministat takes them: one per line, `#` comment lines and blank lines
//!   ignored, whitespace-separated columns allowed (the first is taken). Metric `value`, unit
//!   `1` (dimensionless: a plain number says nothing about its unit), lower is better;
//! - CSV with a header naming at least `metric` and `value`, and optionally `unit`, `scope`,
//!   `direction`, `statistic`, `label` and `param.NAME` columns (a sweep: params go into the
//!   series key, so each combination becomes its own run). Units `s`, `ms`, `us`, `ns` are
//!   converted to seconds, `KiB`/`MiB`/`GiB` to bytes; `count`, `bytes`, `%`, `s^2` are kept;
//!   anything else is kept as named. Without a direction, durations, bytes and other units
//!   are lower-is-better, counts neutral and rates (`.../s`) higher-is-better;
//! - JSON as `quiescent parse --json` prints it: an object, or an array of objects, each with
//!   `series: [{metric, unit, direction, scope, label?, params?, statistic?, samples: [...]}]`
//!   and optional `meta`. JSON is read whole (at most 256 MiB).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::Format;
use crate::error::{ErrorKind, ParseError};
use crate::lines::{Lines, parse_number, strip_mail};
use crate::model::{Ctx, Direction, SeriesKey, SeriesSpec, Unit};

pub struct Samples;

/// Largest JSON input read into memory.
pub const MAX_JSON_BYTES: usize = 256 << 20;

impl Format for Samples {
    fn name(&self) -> &'static str {
        "samples"
    }

    fn description(&self) -> &'static str {
        "generic samples: one number per line (as ministat reads), CSV (metric,value[,unit][,scope][,param.NAME]...) or quiescent JSON"
    }

    fn sniff(&self, head: &str) -> u32 {
        let mut numbers = 0;
        for raw in head.lines().take(200) {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if numbers == 0 {
                if line.starts_with('{') || line.starts_with('[') {
                    return if head.contains("\"series\"") { 60 } else { 0 };
                }
                if line.contains(',') && csv_header(line).is_some() {
                    return 60;
                }
            }
            match line.split_whitespace().next().and_then(number) {
                Some(_) => numbers += 1,
                None => return 0,
            }
        }
        if numbers > 0 { 10 } else { 0 }
    }

    fn parse(&self, lines: &mut Lines<'_>, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        let mut skipped = 0usize;
        let first = loop {
            let Some(line) = lines.next_line()? else {
                return Err(ParseError::nothing("numbers"));
            };
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                skipped += 1;
                continue;
            }
            break t.to_string();
        };
        ctx.line = lines.line_no();
        if first.starts_with('{') || first.starts_with('[') {
            parse_json(&first, skipped, lines, ctx)
        } else if let Some(cols) = first.contains(',').then(|| csv_header(&first)).flatten() {
            parse_csv(cols, lines, ctx)
        } else {
            parse_plain(&first, lines, ctx)
        }
    }
}

/// Numbers as ministat (strtod) reads them, plus thousands separators. Infinities and NaN
/// parse here and are refused by the sink with the line.
fn number(tok: &str) -> Option<f64> {
    parse_number(tok).or_else(|| {
        let t = tok.trim();
        // Only forms strtod would take: digits, sign, point, exponent, or inf/nan words.
        let ok = t.bytes().any(|b| b.is_ascii_digit())
            && t.bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'));
        let word = matches!(
            t.to_ascii_lowercase().trim_start_matches(['-', '+']),
            "inf" | "infinity" | "nan"
        );
        if ok || word { t.parse().ok() } else { None }
    })
}

fn plain_spec() -> SeriesSpec {
    SeriesSpec::new(
        SeriesKey::new("value"),
        Unit::Other("1".into()),
        Direction::LowerIsBetter,
    )
}

fn parse_plain(first: &str, lines: &mut Lines<'_>, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
    let id = ctx.series(plain_spec());
    let push = |line: &str, ctx: &mut Ctx<'_>| -> Result<(), ParseError> {
        let tok = line.split_whitespace().next().unwrap_or("");
        let v = number(tok).ok_or_else(|| ParseError::syntax(ctx.line, "a number", line))?;
        ctx.sample(id, in_range(tok, v, ctx.line)?)
    };
    push(first, ctx)?;
    while let Some((line_no, raw)) = lines.next_numbered()? {
        ctx.line = line_no;
        let line = strip_mail(raw).trim_end();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        push(line, ctx)?;
    }
    Ok(())
}

/// Column roles of a CSV header.
#[derive(Debug, Default)]
struct Columns {
    metric: usize,
    value: usize,
    unit: Option<usize>,
    scope: Option<usize>,
    direction: Option<usize>,
    statistic: Option<usize>,
    label: Option<usize>,
    params: Vec<(usize, String)>,
    unknown: Vec<String>,
    width: usize,
}

fn csv_header(line: &str) -> Option<Columns> {
    let fields = split_csv(line)?;
    let mut c = Columns {
        width: fields.len(),
        ..Default::default()
    };
    let (mut metric, mut value) = (None, None);
    for (i, f) in fields.iter().enumerate() {
        let name = f.trim();
        match name.to_ascii_lowercase().as_str() {
            "metric" => metric = Some(i),
            "value" => value = Some(i),
            "unit" => c.unit = Some(i),
            "scope" => c.scope = Some(i),
            "direction" => c.direction = Some(i),
            "statistic" => c.statistic = Some(i),
            "label" => c.label = Some(i),
            _ => match name.strip_prefix("param.") {
                Some(p) if !p.is_empty() => c.params.push((i, p.to_string())),
                _ => c.unknown.push(name.to_string()),
            },
        }
    }
    c.metric = metric?;
    c.value = value?;
    Some(c)
}

/// Splits one CSV line (RFC 4180 quoting, no embedded newlines). None if a quote is unbalanced.
fn split_csv(line: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    let mut at_start = true;
    while let Some(c) = chars.next() {
        if quoted {
            if c == '"' {
                if chars.peek() == Some(&'"') {
                    chars.next();
                    cur.push('"');
                } else {
                    quoted = false;
                }
            } else {
                cur.push(c);
            }
        } else if c == '"' && at_start {
            quoted = true;
            at_start = false;
        } else if c == ',' {
            out.push(std::mem::take(&mut cur));
            at_start = true;
        } else {
            if !c.is_whitespace() {
                at_start = false;
            }
            cur.push(c);
        }
    }
    if quoted {
        return None;
    }
    out.push(cur);
    Some(out)
}

/// Canonical unit and the factor converting a value to it.
pub(crate) fn unit_of(name: &str) -> (Unit, f64) {
    match name.trim() {
        "" | "1" => (Unit::Other("1".into()), 1.0),
        "s" | "sec" | "secs" | "seconds" => (Unit::Seconds, 1.0),
        "ms" | "msec" | "msecs" => (Unit::Seconds, 1e-3),
        "us" | "µs" | "usec" | "usecs" => (Unit::Seconds, 1e-6),
        "ns" | "nsec" | "nsecs" => (Unit::Seconds, 1e-9),
        "s^2" => (Unit::SecondsSquared, 1.0),
        "count" => (Unit::Count, 1.0),
        "bytes" | "B" => (Unit::Bytes, 1.0),
        "KiB" => (Unit::Bytes, 1024.0),
        "MiB" => (Unit::Bytes, 1024.0 * 1024.0),
        "GiB" => (Unit::Bytes, 1024.0 * 1024.0 * 1024.0),
        "%" => (Unit::Percent, 1.0),
        other => (Unit::Other(other.to_string()), 1.0),
    }
}

/// The direction a unit implies when none is given.
fn default_direction(unit: &Unit) -> Direction {
    match unit {
        Unit::Count => Direction::Neutral,
        Unit::Other(u) if u.contains("/s") || u.contains("per ") => Direction::HigherIsBetter,
        _ => Direction::LowerIsBetter,
    }
}

fn parse_direction(line: u64, s: &str) -> Result<Direction, ParseError> {
    Direction::parse(s.trim()).ok_or_else(|| {
        ParseError::bad_value(
            line,
            "direction",
            s,
            "expected lower_is_better, higher_is_better or neutral",
        )
    })
}

fn parse_csv(cols: Columns, lines: &mut Lines<'_>, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
    if !cols.unknown.is_empty() {
        ctx.warn(format!(
            "columns ignored (not metric, value, unit, scope, direction, statistic, label or param.NAME): {}",
            cols.unknown.join(", ")
        ));
    }
    let mut rows = 0u64;
    while let Some((line_no, raw)) = lines.next_numbered()? {
        ctx.line = line_no;
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields = split_csv(line)
            .ok_or_else(|| ParseError::syntax(ctx.line, "a CSV row with balanced quotes", line))?;
        if fields.len() != cols.width {
            return Err(ParseError::syntax(
                ctx.line,
                format!("{} comma-separated fields as in the header", cols.width),
                format!("{} fields: {line}", fields.len()),
            ));
        }
        let get = |i: Option<usize>| i.map(|i| fields[i].trim()).filter(|s| !s.is_empty());
        let metric = fields[cols.metric].trim();
        if metric.is_empty() {
            return Err(ParseError::syntax(ctx.line, "a metric name", line));
        }
        let value_text = fields[cols.value].trim();
        let value = number(value_text).ok_or_else(|| {
            ParseError::syntax(ctx.line, "a number in the value column", value_text)
        })?;
        let (unit, factor) = unit_of(get(cols.unit).unwrap_or(""));
        let direction = match get(cols.direction) {
            Some(d) => parse_direction(ctx.line, d)?,
            None => default_direction(&unit),
        };
        let mut key = SeriesKey::new(metric)
            .scope(get(cols.scope).unwrap_or("all"))
            .label(get(cols.label).map(str::to_string));
        if let Some(s) = get(cols.statistic) {
            key = key.statistic(s);
        }
        for (i, name) in &cols.params {
            if let Some(v) = get(Some(*i)) {
                key = key.param(name.clone(), v);
            }
        }
        let value = in_range(value_text, value * factor, ctx.line)?;
        ctx.push(SeriesSpec::new(key, unit, direction), value)?;
        rows += 1;
    }
    if rows == 0 {
        return Err(ParseError::nothing("CSV rows after the header"));
    }
    Ok(())
}

#[derive(Deserialize)]
struct JsonFile {
    #[serde(default)]
    meta: BTreeMap<String, serde_json::Value>,
    series: Vec<JsonSeries>,
}

#[derive(Deserialize)]
struct JsonSeries {
    metric: String,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    label: Option<String>,
    #[serde(default)]
    params: BTreeMap<String, serde_json::Value>,
    #[serde(default)]
    statistic: Option<String>,
    #[serde(default)]
    unit: Option<String>,
    #[serde(default)]
    direction: Option<String>,
    samples: Vec<f64>,
}

fn json_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn parse_json(
    first: &str,
    skipped: usize,
    lines: &mut Lines<'_>,
    ctx: &mut Ctx<'_>,
) -> Result<(), ParseError> {
    // Keep line numbers: serde reports positions in the text as read.
    let mut text = "\n".repeat(skipped);
    text.push_str(first);
    text.push('\n');
    while let Some(line) = lines.next_line()? {
        if text.len() + line.len() + 1 > MAX_JSON_BYTES {
            return Err(ParseError::new(
                ErrorKind::Unsupported(format!(
                    "JSON input larger than {} MiB; use CSV or one number per line for large inputs",
                    MAX_JSON_BYTES >> 20
                )),
                lines.line_no(),
            ));
        }
        text.push_str(line);
        text.push('\n');
    }
    let files: Vec<JsonFile> = if first.starts_with('[') {
        serde_json::from_str(&text)
    } else {
        serde_json::from_str(&text).map(|f| vec![f])
    }
    .map_err(|e| {
        // serde counts the newline added after the last line: never past the input's end.
        let line = (e.line() as u64).min(lines.line_no().max(1));
        if let Some(token) = out_of_range_token(&text, &e) {
            return out_of_range(line, token);
        }
        ParseError::syntax(
            line,
            "JSON as `quiescent parse --json` prints it (objects with a `series` array)",
            e.to_string(),
        )
    })?;
    drop(text);
    ctx.line = 0;
    for f in files {
        for (k, v) in &f.meta {
            ctx.meta(k, json_text(v));
        }
        for s in f.series {
            let (unit, factor) = unit_of(s.unit.as_deref().unwrap_or(""));
            let direction = match s.direction.as_deref() {
                Some(d) => parse_direction(0, d)?,
                None => default_direction(&unit),
            };
            let mut key = SeriesKey::new(s.metric)
                .scope(s.scope.unwrap_or_else(|| "all".into()))
                .label(s.label);
            key.statistic = s.statistic;
            for (k, v) in &s.params {
                key.params.insert(k.clone(), json_text(v));
            }
            let id = ctx.series(SeriesSpec::new(key, unit, direction));
            for v in s.samples {
                ctx.sample(id, v * factor)?;
            }
        }
    }
    if ctx.samples() == 0 {
        return Err(ParseError::nothing("samples in the JSON series"));
    }
    Ok(())
}

/// Refuses a value that overflowed to infinity although its text is a finite number (`1e999`,
/// or `1e308` MiB in bytes); a written `inf` is left to the sink's check.
fn in_range(text: &str, value: f64, line: u64) -> Result<f64, ParseError> {
    let word = text
        .bytes()
        .any(|b| b.is_ascii_alphabetic() && !matches!(b, b'e' | b'E'));
    if value.is_infinite() && !word {
        return Err(out_of_range(line, text));
    }
    Ok(value)
}

/// The error for a number that is no finite `f64` (`1e999`), naming it as written.
fn out_of_range(line: u64, token: &str) -> ParseError {
    ParseError::bad_value(
        line,
        "the value",
        token,
        "out of range (the largest magnitude accepted is 1.8e308)",
    )
}

/// The number serde_json found out of range, as written in the text.
fn out_of_range_token<'t>(text: &'t str, e: &serde_json::Error) -> Option<&'t str> {
    if !e.to_string().starts_with("number out of range") {
        return None;
    }
    let line = text.lines().nth(e.line().checked_sub(1)?)?;
    let is_num = |b: u8| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E');
    let bytes = line.as_bytes();
    // serde_json's column points into or just after the number.
    let mut end = e.column().min(bytes.len());
    while end > 0 && !is_num(bytes[end - 1]) {
        end -= 1;
    }
    while end < bytes.len() && is_num(bytes[end]) {
        end += 1;
    }
    let mut start = end;
    while start > 0 && is_num(bytes[start - 1]) {
        start -= 1;
    }
    (start < end).then(|| &line[start..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_split() {
        assert_eq!(
            split_csv(r#"a,"b, c","d ""q""",e"#).unwrap(),
            vec!["a", "b, c", "d \"q\"", "e"]
        );
        assert!(split_csv(r#"a,"b"#).is_none());
    }

    #[test]
    fn numbers() {
        assert_eq!(number("1e3"), Some(1000.0));
        assert_eq!(number("3,228,188"), Some(3228188.0));
        assert!(number("nan").unwrap().is_nan());
        assert_eq!(number("e"), None);
        assert_eq!(number("abc"), None);
    }

    #[test]
    fn units() {
        assert_eq!(unit_of("ms"), (Unit::Seconds, 1e-3));
        assert_eq!(unit_of("MiB"), (Unit::Bytes, 1048576.0));
        assert_eq!(unit_of("ops/sec").0, Unit::Other("ops/sec".into()));
        assert_eq!(
            default_direction(&Unit::Other("ops/sec".into())),
            Direction::HigherIsBetter
        );
    }
}
