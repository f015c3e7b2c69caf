//! A streaming line reader and the helpers every format needs for mail artefacts.

use std::io::{BufRead, Read};

use crate::error::{ErrorKind, ParseError};

/// Longest line accepted. A "line" longer than this is a binary or corrupt file, and reading it
/// whole would make memory grow with the input.
pub const MAX_LINE: usize = 1 << 20;

/// Reads lines one at a time with a reused buffer: CRLF and LF accepted, a NUL byte is an error
/// (binary input), invalid UTF-8 is replaced rather than fatal (mail archives mix encodings).
pub struct Lines<'r> {
    reader: &'r mut dyn BufRead,
    raw: Vec<u8>,
    text: String,
    line_no: u64,
    offset: u64,
    pushed_back: bool,
}

impl<'r> Lines<'r> {
    pub fn new(reader: &'r mut dyn BufRead) -> Self {
        Lines {
            reader,
            raw: Vec::with_capacity(256),
            text: String::with_capacity(256),
            line_no: 0,
            offset: 0,
            pushed_back: false,
        }
    }

    /// The 1-based number of the line last returned.
    pub fn line_no(&self) -> u64 {
        self.line_no
    }

    /// Makes the next call to [`Lines::next_line`] return the current line again.
    pub fn push_back(&mut self) {
        self.pushed_back = true;
    }

    /// The next line without its line ending, or `None` at the end of the input.
    pub fn next_line(&mut self) -> Result<Option<&str>, ParseError> {
        if self.pushed_back {
            self.pushed_back = false;
            return Ok(Some(&self.text));
        }
        self.raw.clear();
        let n = (&mut *self.reader)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut self.raw)
            .map_err(|e| ParseError::new(ErrorKind::Io(e.to_string()), self.line_no + 1))?;
        if n == 0 {
            return Ok(None);
        }
        self.line_no += 1;
        if self.raw.len() > MAX_LINE {
            return Err(ParseError::new(
                ErrorKind::Syntax {
                    expected: format!("a text line shorter than {} bytes", MAX_LINE),
                    found: "a longer line (binary or corrupt input?)".into(),
                },
                self.line_no,
            ));
        }
        if let Some(pos) = memchr::memchr(0, &self.raw) {
            return Err(ParseError::new(
                ErrorKind::Binary {
                    offset: self.offset + pos as u64,
                },
                self.line_no,
            ));
        }
        self.offset += n as u64;
        if self.raw.last() == Some(&b'\n') {
            self.raw.pop();
        }
        if self.raw.last() == Some(&b'\r') {
            self.raw.pop();
        }
        self.text.clear();
        match std::str::from_utf8(&self.raw) {
            Ok(s) => self.text.push_str(s),
            Err(_) => self.text.push_str(&String::from_utf8_lossy(&self.raw)),
        }
        Ok(Some(&self.text))
    }
}

/// Strips what mail and documents put in front of a line: a run of `>` quote marks with their
/// spaces and tabs, and leading indentation. Never removes anything after the first other
/// character.
pub fn strip_mail(line: &str) -> &str {
    let mut s = line.trim_start();
    while let Some(rest) = s.strip_prefix('>') {
        s = rest.trim_start();
    }
    s
}

/// Strips a dmesg timestamp prefix like `[   12.920044] ` (after mail stripping).
pub fn strip_dmesg(line: &str) -> &str {
    let s = line.trim_start();
    if let Some(rest) = s.strip_prefix('[')
        && let Some(end) = rest.find(']')
    {
        let inner = rest[..end].trim();
        if inner.bytes().any(|b| b.is_ascii_digit())
            && inner.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        {
            return rest[end + 1..].trim_start();
        }
    }
    s
}

/// Parses a plain decimal number token (`18.693`, `1e3` refused), allowing a leading sign.
/// Thousands separators (`3,228,188`) are removed.
pub fn parse_number(token: &str) -> Option<f64> {
    let t = token.trim();
    if t.is_empty() {
        return None;
    }
    let cleaned: std::borrow::Cow<'_, str> = if t.contains(',') {
        // Only accept commas as thousands separators: groups of three digits.
        let mut parts = t.split(',');
        let first = parts.next()?;
        if first.is_empty() || first.trim_start_matches(['-', '+']).len() > 3 {
            return None;
        }
        let mut out = first.to_string();
        for p in parts {
            let digits = p.split('.').next().unwrap_or("");
            if digits.len() != 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            out.push_str(p);
        }
        out.into()
    } else {
        t.into()
    };
    let ok = cleaned
        .trim_start_matches(['-', '+'])
        .bytes()
        .all(|b| b.is_ascii_digit() || b == b'.');
    if !ok || cleaned.trim_start_matches(['-', '+']).is_empty() {
        return None;
    }
    cleaned.parse::<f64>().ok()
}

/// Parses an ftrace duration in microseconds as `trace_print_graph_duration` prints it
/// (`182650.3`, `0.217`, `1371819`) and returns seconds.
pub fn us_to_s(us: f64) -> f64 {
    us / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strips_quotes_and_indent() {
        assert_eq!(strip_mail("> > real\t0m1.0s"), "real\t0m1.0s");
        assert_eq!(strip_mail(">>\tTime: 1.0"), "Time: 1.0");
        assert_eq!(strip_mail("    plain"), "plain");
    }

    #[test]
    fn strips_dmesg() {
        assert_eq!(strip_dmesg("[   12.920044] rcu-scale: x"), "rcu-scale: x");
        assert_eq!(strip_dmesg("[...] keep"), "[...] keep");
    }

    #[test]
    fn numbers() {
        assert_eq!(parse_number("3,228,188"), Some(3228188.0));
        assert_eq!(parse_number("12451963"), Some(12451963.0));
        assert_eq!(parse_number("83723.452481"), Some(83723.452481));
        assert_eq!(parse_number("1,2"), None);
        assert_eq!(parse_number("abc"), None);
        assert_eq!(parse_number("nan"), None);
        assert_eq!(parse_number("-"), None);
    }

    #[test]
    fn reads_crlf_and_counts_lines() {
        let data = b"a\r\nb\nc";
        let mut r: &[u8] = data;
        let mut lines = Lines::new(&mut r);
        assert_eq!(lines.next_line().unwrap(), Some("a"));
        assert_eq!(lines.next_line().unwrap(), Some("b"));
        assert_eq!(lines.next_line().unwrap(), Some("c"));
        assert_eq!(lines.line_no(), 3);
        assert_eq!(lines.next_line().unwrap(), None);
    }

    #[test]
    fn nul_is_binary() {
        let data = b"ok\nbad\0x\n";
        let mut r: &[u8] = data;
        let mut lines = Lines::new(&mut r);
        lines.next_line().unwrap();
        let err = lines.next_line().unwrap_err();
        assert_eq!(err.pos.line, 2);
        assert!(matches!(err.kind, ErrorKind::Binary { offset: 6 }));
    }
}
