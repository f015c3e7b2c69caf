//! A streaming line reader and the helpers every format needs for mail artefacts.

use std::io::{BufRead, Read};

use crate::error::{ErrorKind, ParseError};

/// Longest line accepted. A "line" longer than this is a binary or corrupt file, and reading it
/// whole would make memory grow with the input.
pub const MAX_LINE: usize = 1 << 20;

/// Reads lines one at a time: CRLF and LF accepted, a NUL byte is an error (binary input),
/// invalid UTF-8 is replaced rather than fatal (mail archives mix encodings). Input is read in
/// large chunks cut at the last line ending; each chunk is checked for NUL and UTF-8 once and
/// kept as one `String`, so lines are handed out as slices of it with no per-line validation.
pub struct Lines<'r> {
    reader: &'r mut dyn BufRead,
    /// The complete lines of the current chunk.
    text: String,
    /// Start of the unread part of `text`.
    pos: usize,
    /// Bytes read after the last line ending of the current chunk (the start of the next).
    tail: Vec<u8>,
    eof: bool,
    /// A NUL byte after the lines of `text`: its offset in the input, reported when the line
    /// that holds it is reached.
    nul_at: Option<u64>,
    /// Offset in the input of the first byte of `tail`.
    tail_offset: u64,
    /// Where the current line is in `text`.
    start: usize,
    stop: usize,
    line_no: u64,
    pushed_back: bool,
}

const READ_CHUNK: usize = 256 * 1024;

impl<'r> Lines<'r> {
    pub fn new(reader: &'r mut dyn BufRead) -> Self {
        Lines {
            reader,
            text: String::new(),
            pos: 0,
            tail: Vec::with_capacity(READ_CHUNK),
            eof: false,
            nul_at: None,
            tail_offset: 0,
            start: 0,
            stop: 0,
            line_no: 0,
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

    fn io_error(&self, e: &std::io::Error) -> ParseError {
        ParseError::new(ErrorKind::Io(e.to_string()), self.line_no + 1)
    }

    /// Appends up to [`READ_CHUNK`] bytes to `tail`; false at the end of the input.
    fn read_more(&mut self) -> Result<bool, ParseError> {
        let limit = READ_CHUNK as u64;
        match std::io::Read::by_ref(&mut self.reader)
            .take(limit)
            .read_to_end(&mut self.tail)
        {
            Ok(0) => Ok(false),
            Ok(_) => Ok(true),
            Err(e) => Err(self.io_error(&e)),
        }
    }

    /// Reads the next chunk of complete lines into `text`; false when the input is done.
    fn refill(&mut self) -> Result<bool, ParseError> {
        if let Some(offset) = self.nul_at {
            return Err(ParseError::new(
                ErrorKind::Binary { offset },
                self.line_no + 1,
            ));
        }
        // Read until the buffer holds a line ending, the input ends, or the line is too long.
        let mut searched = 0;
        let cut = loop {
            if let Some(i) = memchr::memrchr(b'\n', &self.tail[searched..]) {
                break searched + i + 1;
            }
            searched = self.tail.len();
            if self.tail.len() > MAX_LINE {
                let length = self.skip_long_line()?;
                return Err(ParseError::new(
                    ErrorKind::LineTooLong {
                        length,
                        max: MAX_LINE,
                    },
                    self.line_no + 1,
                ));
            }
            if self.eof || !self.read_more()? {
                self.eof = true;
                break self.tail.len();
            }
        };
        if cut == 0 {
            return Ok(false);
        }
        // Lines up to the first NUL are served; the line holding it is an error.
        let mut cut = cut;
        if let Some(p) = memchr::memchr(0, &self.tail[..cut]) {
            let line_start = memchr::memrchr(b'\n', &self.tail[..p]).map_or(0, |i| i + 1);
            self.nul_at = Some(self.tail_offset + p as u64);
            cut = line_start;
        }
        // The bytes after the cut become the next tail; the previous chunk's buffer is reused.
        let mut next = std::mem::take(&mut self.text).into_bytes();
        next.clear();
        if self.nul_at.is_none() {
            next.extend_from_slice(&self.tail[cut..]);
        }
        let mut chunk = std::mem::replace(&mut self.tail, next);
        chunk.truncate(cut);
        self.tail_offset += cut as u64;
        // A line ending is ASCII and never part of an invalid sequence, so repairing the chunk
        // as a whole repairs each line as it would alone.
        self.text = match String::from_utf8(chunk) {
            Ok(s) => s,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        self.pos = 0;
        if self.text.is_empty() {
            // Nothing before the NUL: report it now.
            return self.refill();
        }
        Ok(true)
    }

    /// Reads to the end of an over-long line, discarding it, and returns its length (without
    /// the line ending): the error can then say how long it is, in bounded memory.
    fn skip_long_line(&mut self) -> Result<u64, ParseError> {
        let mut length = 0u64;
        loop {
            if let Some(i) = memchr::memchr(b'\n', &self.tail) {
                length += i as u64;
                if i > 0 && self.tail[i - 1] == b'\r' {
                    length -= 1;
                }
                self.tail.clear();
                return Ok(length);
            }
            length += self.tail.len() as u64;
            self.tail.clear();
            if !self.read_more()? {
                return Ok(length);
            }
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
            Some(n) => Ok(Some((n, &self.text[self.start..self.stop]))),
            None => Ok(None),
        }
    }

    /// Moves to the next line; returns its number.
    fn advance(&mut self) -> Result<Option<u64>, ParseError> {
        if self.pushed_back {
            self.pushed_back = false;
            return Ok(Some(self.line_no));
        }
        if self.pos == self.text.len() && !self.refill()? {
            return Ok(None);
        }
        let bytes = self.text.as_bytes();
        let start = self.pos;
        let (mut stop, next) = match memchr::memchr(b'\n', &bytes[start..]) {
            Some(i) => (start + i, start + i + 1),
            None => (bytes.len(), bytes.len()),
        };
        self.pos = next;
        if stop > start && bytes[stop - 1] == b'\r' {
            stop -= 1;
        }
        self.start = start;
        self.stop = stop;
        self.line_no += 1;
        Ok(Some(self.line_no))
    }
}

/// `str::trim_start`, with the common ASCII spaces skipped as bytes.
pub fn trim_start(s: &str) -> &str {
    let b = s.as_bytes();
    let i = b.iter().position(|&c| !is_space(c)).unwrap_or(b.len());
    let rest = &s[i..];
    if rest.as_bytes().first().is_some_and(|c| !c.is_ascii()) {
        rest.trim_start()
    } else {
        rest
    }
}

/// `str::trim_end`, with the common ASCII spaces skipped as bytes.
pub fn trim_end(s: &str) -> &str {
    let b = s.as_bytes();
    let i = b.iter().rposition(|&c| !is_space(c)).map_or(0, |i| i + 1);
    let rest = &s[..i];
    if rest.as_bytes().last().is_some_and(|c| !c.is_ascii()) {
        rest.trim_end()
    } else {
        rest
    }
}

/// `str::trim`, with the common ASCII spaces skipped as bytes.
pub fn trim(s: &str) -> &str {
    trim_end(trim_start(s))
}

/// Strips what mail and documents put in front of a line: a run of `>` quote marks with their
/// spaces and tabs, and leading indentation. Never removes anything after the first other
/// character.
pub fn strip_mail(line: &str) -> &str {
    let mut s = trim_start(line);
    while let Some(rest) = s.strip_prefix('>') {
        s = trim_start(rest);
    }
    s
}

/// Strips a dmesg timestamp prefix like `[   12.920044] ` (after mail stripping).
pub fn strip_dmesg(line: &str) -> &str {
    let s = trim_start(line);
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
        if let Some(pos) = find_str(line, flag) {
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

/// The words of `s` exactly as `str::split_whitespace` gives them, found faster on the common
/// ASCII line by looking at bytes instead of decoding characters.
pub fn words(s: &str) -> Words<'_> {
    if s.is_ascii() {
        Words::Ascii { s, pos: 0 }
    } else {
        Words::Unicode(s.split_whitespace())
    }
}

/// The iterator of [`words`].
#[derive(Clone)]
pub enum Words<'a> {
    Ascii { s: &'a str, pos: usize },
    Unicode(std::str::SplitWhitespace<'a>),
}

/// The ASCII characters `char::is_whitespace` accepts (`u8::is_ascii_whitespace` lacks `\x0b`).
pub(crate) fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

impl<'a> Iterator for Words<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        match self {
            Words::Ascii { s, pos } => {
                let b = s.as_bytes();
                let mut i = *pos;
                while i < b.len() && is_space(b[i]) {
                    i += 1;
                }
                if i == b.len() {
                    *pos = i;
                    return None;
                }
                let start = i;
                while i < b.len() && !is_space(b[i]) {
                    i += 1;
                }
                *pos = i;
                Some(&s[start..i])
            }
            Words::Unicode(it) => it.next(),
        }
    }
}

/// Where `needle` first occurs in `hay`. For the short lines of a trace this is cheaper than
/// `str::find`, whose searcher is set up anew on every call.
pub fn find_str(hay: &str, needle: &str) -> Option<usize> {
    let n = needle.as_bytes();
    let h = hay.as_bytes();
    if n.is_empty() {
        return Some(0);
    }
    // Candidates are found by a byte of the needle that is not a space: spaces are common.
    let k = n.iter().position(|&b| b != b' ').unwrap_or(0);
    let anchor = *n.get(k)?;
    memchr::memchr_iter(anchor, h.get(k..)?).find(|&i| h[i..].starts_with(n))
}

/// `hay.split_once(needle)` through [`find_str`].
pub fn split_once_str<'a>(hay: &'a str, needle: &str) -> Option<(&'a str, &'a str)> {
    let i = find_str(hay, needle)?;
    Some((&hay[..i], &hay[i + needle.len()..]))
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
    fn words_split_as_split_whitespace_does() {
        for s in [
            "",
            "   ",
            "a",
            " a  b\tc\x0bd\x0ce\r\nf ",
            "kfunc_000001   123    45.6 us",
            "caf\u{e9} \u{a0}x\u{2003}y  z",
            "\u{85}a",
        ] {
            let a: Vec<&str> = words(s).collect();
            let b: Vec<&str> = s.split_whitespace().collect();
            assert_eq!(a, b, "{s:?}");
        }
    }

    #[test]
    fn trims_as_str_trims() {
        for s in [
            "",
            " ",
            "\t a b \r",
            "\u{a0} x \u{2003}",
            " \u{a0}\u{85}",
            "\u{e9}t\u{e9}",
            "\x0b\x0cx\x0b",
        ] {
            assert_eq!(trim_start(s), s.trim_start(), "{s:?}");
            assert_eq!(trim_end(s), s.trim_end(), "{s:?}");
            assert_eq!(trim(s), s.trim(), "{s:?}");
        }
    }

    #[test]
    fn finds_as_str_find() {
        for (hay, needle) in [
            ("a grace-period duration: 5", " grace-period duration:"),
            ("x = y = 3", " = "),
            ("  ", " "),
            ("abc", ""),
            ("", "a"),
            ("ab", "abc"),
            ("rcu-scale: rcu-scale:", "-scale:"),
            ("aaab", "aab"),
            ("\u{e9}t\u{e9} \u{e9}", " \u{e9}"),
        ] {
            assert_eq!(
                find_str(hay, needle),
                hay.find(needle),
                "{hay:?} {needle:?}"
            );
        }
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
