//! A streaming line reader and the helpers every format needs for mail artefacts.

use std::io::BufRead;

use crate::error::{ErrorKind, ParseError};

/// Longest line accepted. A "line" longer than this is a binary or corrupt file, and reading it
/// whole would make memory grow with the input.
pub const MAX_LINE: usize = 1 << 20;

/// Reads lines one at a time from a large reused buffer: CRLF and LF accepted, a NUL byte is
/// an error (binary input), invalid UTF-8 is replaced rather than fatal (mail archives mix
/// encodings). Lines are handed out as slices of the buffer, so the common case copies nothing.
pub struct Lines<'r> {
    reader: &'r mut dyn BufRead,
    buf: Vec<u8>,
    /// Start of the unread part of `buf`.
    pos: usize,
    /// End of the valid bytes in `buf`.
    end: usize,
    eof: bool,
    /// The current line when it had to be repaired (invalid UTF-8).
    lossy: String,
    /// Where the current line is: `buf[start..stop]`, or `lossy` when `is_lossy`.
    start: usize,
    stop: usize,
    is_lossy: bool,
    line_no: u64,
    offset: u64,
    pushed_back: bool,
}

const READ_CHUNK: usize = 256 * 1024;

impl<'r> Lines<'r> {
    pub fn new(reader: &'r mut dyn BufRead) -> Self {
        Lines {
            reader,
            buf: vec![0; READ_CHUNK],
            pos: 0,
            end: 0,
            eof: false,
            lossy: String::new(),
            start: 0,
            stop: 0,
            is_lossy: false,
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

    fn current(&self) -> &str {
        if self.is_lossy {
            &self.lossy
        } else {
            // Validated when the line was read.
            std::str::from_utf8(&self.buf[self.start..self.stop]).unwrap_or_default()
        }
    }

    /// Reads more input, keeping the unread tail at the front of the buffer.
    fn refill(&mut self) -> Result<(), ParseError> {
        if self.pos > 0 {
            self.buf.copy_within(self.pos..self.end, 0);
            self.end -= self.pos;
            self.pos = 0;
        }
        if self.end == self.buf.len() {
            let grown = (self.buf.len() * 2).min(MAX_LINE + READ_CHUNK);
            self.buf.resize(grown, 0);
        }
        loop {
            match self.reader.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(ParseError::new(
                        ErrorKind::Io(e.to_string()),
                        self.line_no + 1,
                    ));
                }
            }
        }
    }

    /// Reads to the end of an over-long line, discarding it, and returns its length (without
    /// the line ending): the error can then say how long it is, in bounded memory.
    fn skip_long_line(&mut self) -> Result<u64, ParseError> {
        let mut length = 0u64;
        loop {
            let chunk = &self.buf[self.pos..self.end];
            if let Some(i) = memchr::memchr(b'\n', chunk) {
                length += i as u64;
                if i > 0 && chunk[i - 1] == b'\r' {
                    length -= 1;
                }
                self.pos += i + 1;
                return Ok(length);
            }
            length += chunk.len() as u64;
            self.pos = self.end;
            if self.eof {
                return Ok(length);
            }
            self.refill()?;
        }
    }

    /// The next line without its line ending, or `None` at the end of the input.
    pub fn next_line(&mut self) -> Result<Option<&str>, ParseError> {
        Ok(self.next_numbered()?.map(|(_, line)| line))
    }

    /// The next line with its 1-based number (the number is a copy, so a parser can record
    /// it while it holds the line).
    pub fn next_numbered(&mut self) -> Result<Option<(u64, &str)>, ParseError> {
        match self.advance()? {
            Some(n) => Ok(Some((n, self.current()))),
            None => Ok(None),
        }
    }

    /// Moves to the next line; returns its number.
    fn advance(&mut self) -> Result<Option<u64>, ParseError> {
        if self.pushed_back {
            self.pushed_back = false;
            return Ok(Some(self.line_no));
        }
        // Find the end of the next line, reading more as needed.
        let mut searched = self.pos;
        let nl = loop {
            if let Some(i) = memchr::memchr(b'\n', &self.buf[searched..self.end]) {
                break Some(searched + i);
            }
            if self.end - self.pos > MAX_LINE {
                let length = self.skip_long_line()?;
                return Err(ParseError::new(
                    ErrorKind::LineTooLong {
                        length,
                        max: MAX_LINE,
                    },
                    self.line_no + 1,
                ));
            }
            if self.eof {
                break None;
            }
            let consumed = self.pos;
            searched = self.end - consumed;
            self.refill()?;
            searched += self.pos;
        };
        let (start, mut stop, next) = match nl {
            Some(i) => (self.pos, i, i + 1),
            None if self.pos < self.end => (self.pos, self.end, self.end),
            None => return Ok(None),
        };
        self.line_no += 1;
        if let Some(p) = memchr::memchr(0, &self.buf[start..stop]) {
            return Err(ParseError::new(
                ErrorKind::Binary {
                    offset: self.offset + p as u64,
                },
                self.line_no,
            ));
        }
        self.offset += (next - start) as u64;
        self.pos = next;
        if stop > start && self.buf[stop - 1] == b'\r' {
            stop -= 1;
        }
        self.start = start;
        self.stop = stop;
        self.is_lossy = std::str::from_utf8(&self.buf[start..stop]).is_err();
        if self.is_lossy {
            self.lossy.clear();
            self.lossy
                .push_str(&String::from_utf8_lossy(&self.buf[start..stop]));
        }
        Ok(Some(self.line_no))
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

/// Splits a kernel console prefix such as `rcu-scale:` or `srcu-ref-perf:` off a line: the
/// first of `flags` found decides, and the text before it must look like a scale type
/// (letters, digits, `-`, `_`). Returns (type, rest).
pub fn split_console_prefix<'a>(line: &'a str, flags: &[&str]) -> Option<(&'a str, &'a str)> {
    for flag in flags {
        if let Some(pos) = line.find(flag) {
            let ty = &line[..pos];
            let plausible = !ty.is_empty()
                && ty
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
            return plausible.then(|| (ty, &line[pos + flag.len()..]));
        }
    }
    None
}

/// Parses a plain decimal number token (`18.693`, `1e3` refused), allowing a leading sign.
/// Thousands separators (`3,228,188`) are removed.
pub fn parse_number(token: &str) -> Option<f64> {
    parse_number_bytes(token.trim().as_bytes())
}

/// [`parse_number`] on bytes, without allocating: the common token (digits and one dot) goes
/// straight to a fast float parser.
pub fn parse_number_bytes(t: &[u8]) -> Option<f64> {
    let digits = match t.first()? {
        b'-' | b'+' => &t[1..],
        _ => t,
    };
    if digits.is_empty() {
        return None;
    }
    let mut commas = false;
    for &b in digits {
        match b {
            b'0'..=b'9' | b'.' => {}
            b',' => commas = true,
            _ => return None,
        }
    }
    if !commas {
        return fast_float2::parse(t).ok();
    }
    // Only accept commas as thousands separators: groups of three digits.
    let mut parts = t.split(|&b| b == b',');
    let first = parts.next()?;
    if first.is_empty() || digits.iter().position(|&b| b == b',')? > 3 {
        return None;
    }
    let mut out = Vec::with_capacity(t.len());
    out.extend_from_slice(first);
    for p in parts {
        let group = p.split(|&b| b == b'.').next().unwrap_or(&[]);
        if group.len() != 3 || !group.iter().all(u8::is_ascii_digit) {
            return None;
        }
        out.extend_from_slice(p);
    }
    fast_float2::parse(&out).ok()
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
        assert_eq!(parse_number("1.2.3"), None);
        assert_eq!(parse_number("."), None);
        assert_eq!(parse_number("-.5"), Some(-0.5));
        assert_eq!(parse_number("+1,234.5"), Some(1234.5));
        assert_eq!(parse_number("1234,567"), None);
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
    fn long_lines_across_refills_and_limits() {
        let mut data = Vec::new();
        for i in 0..50_000 {
            data.extend_from_slice(format!("line {i} {}\n", "x".repeat(i % 97)).as_bytes());
        }
        let big = "y".repeat(READ_CHUNK * 3);
        data.extend_from_slice(big.as_bytes());
        data.extend_from_slice(b"\nlast");
        let mut r: &[u8] = &data;
        let mut lines = Lines::new(&mut r);
        for i in 0..50_000 {
            let l = lines.next_line().unwrap().unwrap();
            assert!(l.starts_with(&format!("line {i} ")), "{l}");
            assert_eq!(l.len(), format!("line {i} ").len() + i % 97);
        }
        assert_eq!(lines.next_line().unwrap().unwrap().len(), READ_CHUNK * 3);
        assert_eq!(lines.next_line().unwrap(), Some("last"));
        assert_eq!(lines.next_line().unwrap(), None);

        let huge = vec![b'z'; MAX_LINE * 3 + 10];
        let mut r: &[u8] = &huge;
        let mut lines = Lines::new(&mut r);
        let err = lines.next_line().unwrap_err();
        assert_eq!(err.pos.line, 1);
        assert_eq!(
            err.kind,
            ErrorKind::LineTooLong {
                length: (MAX_LINE * 3 + 10) as u64,
                max: MAX_LINE
            }
        );
    }

    #[test]
    fn invalid_utf8_is_replaced_and_push_back_repeats() {
        let data = b"ok\nbad \xff byte\n";
        let mut r: &[u8] = data;
        let mut lines = Lines::new(&mut r);
        lines.next_line().unwrap();
        assert_eq!(lines.next_line().unwrap(), Some("bad \u{fffd} byte"));
        lines.push_back();
        assert_eq!(lines.next_line().unwrap(), Some("bad \u{fffd} byte"));
        assert_eq!(lines.line_no(), 2);
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
