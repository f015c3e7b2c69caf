//! The shapes of summary and table lines: statistic words, unit words, `k=v` tokens, table
//! rows and column rows.

use crate::lines::{is_space, parse_number, split_once_str, words};

/// `k=v` tokens of a line, or None if any token is something else.
pub(super) fn kv_tokens(s: &str) -> Option<Vec<(&str, &str)>> {
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
pub(super) fn time_unit(word: &str) -> Option<f64> {
    match word.trim_matches(|c| c == '(' || c == ')' || c == '[' || c == ']') {
        "us" | "usec" | "usecs" | "µs" | "microseconds" | "microsecond" => Some(1e-6),
        "ms" | "msec" | "msecs" | "milliseconds" => Some(1e-3),
        "ns" | "nsec" | "nsecs" | "nanoseconds" => Some(1e-9),
        "s" | "sec" | "secs" | "seconds" => Some(1.0),
        _ => None,
    }
}

/// The statistic a row or summary word names.
pub(super) fn statistic_word(w: &str) -> Option<String> {
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
pub(super) fn parse_stat_row(line: &str) -> Option<(String, f64, Vec<f64>)> {
    // Statistic words start with `m`, `a` or `p`: most lines are refused by their first byte.
    if line
        .as_bytes()
        .first()
        .is_some_and(|&b| b.is_ascii() && !(matches!(b | 0x20, b'm' | b'a' | b'p') || is_space(b)))
    {
        return None;
    }
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
pub(super) fn parse_column_row(line: &str) -> Option<(String, Vec<String>)> {
    // Every column is digits (or dots) then letters: most lines are refused by the byte after
    // their leading digits; spaces and other chars there are left to the general reading.
    let b = line.as_bytes();
    let k = b
        .iter()
        .position(|&c| !(c.is_ascii_digit() || c == b'.'))
        .unwrap_or(b.len());
    match b.get(k) {
        None => return None,
        Some(&c) if !c.is_ascii() || (k == 0 && is_space(c)) => {}
        Some(&c) if k == 0 || !c.is_ascii_alphabetic() => return None,
        Some(_) => {}
    }
    let mut unit: Option<&str> = None;
    let mut values = Vec::new();
    for tok in words(line) {
        // Bytes, not chars: no byte of a multi-byte char is a digit or a dot.
        let split = tok
            .bytes()
            .position(|b| !(b.is_ascii_digit() || b == b'.'))?;
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
pub(super) fn param_name(heading: Option<&str>, unit: &str) -> String {
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
pub(super) fn gp_summary(line: &str) -> Option<(String, &str)> {
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

pub(super) fn parse_u64(s: &str) -> Option<u64> {
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
    fn column_param_name() {
        assert_eq!(
            param_name(Some("(preempt disable duration)"), "ms"),
            "preempt_off_ms"
        );
        assert_eq!(param_name(None, "ms"), "column_ms");
    }
}
