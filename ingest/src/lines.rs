//! A streaming line reader and the helpers every format needs for mail artefacts.

mod chunks;

use std::io::{BufRead, Read};

use crate::error::ParseError;
use chunks::{Chunk, Chunker, Produced, Source};

/// Longest line accepted. A "line" longer than this is a binary or corrupt file, and reading it
/// whole would make memory grow with the input.
pub const MAX_LINE: usize = 1 << 20;

/// Reads lines one at a time: CRLF and LF accepted, a NUL byte is an error (binary input),
/// invalid UTF-8 is replaced rather than fatal (mail archives mix encodings). Input arrives in
/// chunks of whole lines, each checked for NUL and UTF-8 once with its line ends found
/// ([`chunks`]), so a line is handed out as a slice with no per-line search or validation.
pub struct Lines<'r> {
    source: Box<dyn Source + 'r>,
    /// What the source gave before the first line was asked for.
    first: Option<Option<Produced>>,
    chunk: Chunk,
    /// Index in `chunk.ends` of the next line.
    next: usize,
    /// Start in `chunk.text` of the next line.
    pos: usize,
    /// The error the input ended with, given again if asked again.
    failed: Option<ParseError>,
    /// Where the current line is in `chunk.text`.
    start: usize,
    stop: usize,
    line_no: u64,
    pushed_back: bool,
}

/// Runs `parse` over the lines of `reader`. An input longer than one chunk is read, checked and
/// cut into lines on a thread of its own while `parse` works; with `strip`, that thread also
/// strips the lines for [`Lines::next_stripped`].
pub fn with_lines<R: Read + Send, T>(
    reader: R,
    strip: bool,
    parse: impl FnOnce(&mut Lines<'_>) -> T,
) -> T {
    let mut chunker = Chunker::new(reader);
    let first = chunker.next(Chunk::default());
    chunker.probe_end();
    if chunker.read_all() {
        return parse(&mut Lines::from_source(Box::new(chunker), Some(first)));
    }
    if strip {
        chunker.strip_lines();
    }
    std::thread::scope(|scope| {
        let received = chunks::spawn(scope, chunker);
        // Dropped before the scope ends, which stops a cutter that is ahead of an early return.
        let mut lines = Lines::from_source(Box::new(received), Some(first));
        parse(&mut lines)
    })
}

impl<'r> Lines<'r> {
    /// Lines of a reader, all read on this thread.
    pub fn new(reader: &'r mut dyn BufRead) -> Self {
        Self::from_source(Box::new(Chunker::new(reader)), None)
    }

    fn from_source(source: Box<dyn Source + 'r>, first: Option<Option<Produced>>) -> Self {
        Lines {
            source,
            first,
            chunk: Chunk::default(),
            next: 0,
            pos: 0,
            failed: None,
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

    /// Moves to the next chunk; false when the input is done.
    fn refill(&mut self) -> Result<bool, ParseError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let spent = std::mem::take(&mut self.chunk);
        self.next = 0;
        self.pos = 0;
        let produced = match self.first.take() {
            Some(first) => first,
            None => self.source.next(spent),
        };
        match produced {
            None => Ok(false),
            Some(Err(e)) => {
                self.failed = Some(e.clone());
                Err(e)
            }
            Some(Ok(chunk)) => {
                self.chunk = chunk;
                Ok(true)
            }
        }
    }

    /// The next line without its line ending, or `None` at the end of the input.
    #[inline]
    pub fn next_line(&mut self) -> Result<Option<&str>, ParseError> {
        Ok(self.next_numbered()?.map(|(_, line)| line))
    }

    /// The next line with its 1-based number (the number is a copy, so a parser can record
    /// it while it holds the line).
    #[inline]
    pub fn next_numbered(&mut self) -> Result<Option<(u64, &str)>, ParseError> {
        // The common case, inlined into the parser's loop: the next line of the chunk.
        if !self.pushed_back && self.next < self.chunk.ends.len() {
            self.take_line();
            return Ok(Some((
                self.line_no,
                &self.chunk.text[self.start..self.stop],
            )));
        }
        self.next_slow()
    }

    /// [`Lines::next_numbered`] with the line stripped ([`strip_line`]), most often already
    /// by the thread that cut it.
    #[inline]
    pub fn next_stripped(&mut self) -> Result<Option<(u64, &str)>, ParseError> {
        if !self.pushed_back && self.next < self.chunk.ends.len() {
            let i = self.next;
            self.take_line();
            let text = &self.chunk.text;
            let line = match self.chunk.stripped.get(i) {
                Some(&(start, stop)) => &text[start as usize..stop as usize],
                None => strip_line(&text[self.start..self.stop]),
            };
            return Ok(Some((self.line_no, line)));
        }
        Ok(self.next_slow()?.map(|(no, line)| (no, strip_line(line))))
    }

    #[inline(never)]
    fn next_slow(&mut self) -> Result<Option<(u64, &str)>, ParseError> {
        if self.pushed_back {
            self.pushed_back = false;
        } else {
            // A chunk is never empty, so one refill is enough.
            if self.next == self.chunk.ends.len() && !self.refill()? {
                return Ok(None);
            }
            self.take_line();
        }
        Ok(Some((
            self.line_no,
            &self.chunk.text[self.start..self.stop],
        )))
    }

    /// Moves to the next line of the chunk, which has one.
    #[inline]
    fn take_line(&mut self) {
        let start = self.pos;
        let mut stop = self.chunk.ends[self.next] as usize;
        self.next += 1;
        self.pos = stop + 1;
        if stop > start && self.chunk.text.as_bytes()[stop - 1] == b'\r' {
            stop -= 1;
        }
        self.start = start;
        self.stop = stop;
        self.line_no += 1;
    }
}

/// `str::trim_start`, with the common ASCII spaces skipped as bytes.
pub fn trim_start(s: &str) -> &str {
    let b = s.as_bytes();
    if b.first().is_some_and(u8::is_ascii_graphic) {
        return s;
    }
    // Plain spaces are skipped eight at a time (indentation and padding are mostly spaces),
    // the other ASCII spaces one at a time.
    let mut i = skip_spaces(b, 0);
    while i < b.len() && is_space(b[i]) {
        i = skip_spaces(b, i + 1);
    }
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
    if b.last().is_some_and(u8::is_ascii_graphic) {
        return s;
    }
    let mut n = skip_spaces_back(b, b.len());
    while n > 0 && is_space(b[n - 1]) {
        n = skip_spaces_back(b, n - 1);
    }
    let rest = &s[..n];
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

/// A line as most parsers read it: without mail quoting, indentation or trailing spaces.
#[inline]
pub fn strip_line(line: &str) -> &str {
    trim_end(strip_mail(line))
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

/// Powers of ten an `f64` holds exactly (10^0 to 10^22). An integer below 2^53 divided by one
/// of them is correctly rounded: the value a full parser gives for the same decimal, which is
/// what the parsers' byte-level number readers rely on.
pub const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// 10^0 to 10^19 as integers (10^19 is the largest a `u64` holds).
pub const POW10_INT: [u64; 20] = {
    let mut p = [1u64; 20];
    let mut k = 1;
    while k < 20 {
        p[k] = p[k - 1] * 10;
        k += 1;
    }
    p
};

/// Where the run of plain spaces (` ` only) from `i` ends; eight are looked at at a time, as
/// columns are padded with long runs of them.
#[inline(always)]
pub fn skip_spaces(b: &[u8], mut i: usize) -> usize {
    const SPACES: u64 = u64::from_le_bytes([b' '; 8]);
    while let Some(chunk) = b.get(i..i + 8) {
        let diff = u64::from_le_bytes(chunk.try_into().unwrap_or_default()) ^ SPACES;
        if diff != 0 {
            return i + diff.trailing_zeros() as usize / 8;
        }
        i += 8;
    }
    while b.get(i) == Some(&b' ') {
        i += 1;
    }
    i
}

/// Where the run of plain spaces ending at `end` (exclusive) starts: [`skip_spaces`]
/// backwards.
#[inline(always)]
fn skip_spaces_back(b: &[u8], mut end: usize) -> usize {
    const SPACES: u64 = u64::from_le_bytes([b' '; 8]);
    while end >= 8 {
        let chunk = &b[end - 8..end];
        let diff = u64::from_le_bytes(chunk.try_into().unwrap_or_default()) ^ SPACES;
        if diff != 0 {
            // The last byte that is not a space is the highest non-zero byte of `diff`.
            return end - diff.leading_zeros() as usize / 8;
        }
        end -= 8;
    }
    while end > 0 && b[end - 1] == b' ' {
        end -= 1;
    }
    end
}

/// Whether each of the eight bytes of `w` is printable ASCII other than the space (`!` to
/// `~`) and none is one of `refused`: eight bytes of a token tested at once. Each test is one
/// of "Bit Twiddling Hacks" (`hasless`, `hasmore`, `haszero`), exact about whether any byte
/// matches: a borrow or carry between bytes only starts at a byte that matches itself.
#[inline(always)]
pub fn graphic_word<const N: usize>(w: u64, refused: [u8; N]) -> bool {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    // Below `!` (spaces, controls), or `\x7f` and above (DEL, non-ASCII).
    let mut hit = (w.wrapping_sub(ONES * 0x21) & !w) | w.wrapping_add(ONES) | w;
    for r in refused {
        let v = w ^ (ONES * u64::from(r));
        hit |= v.wrapping_sub(ONES) & !v;
    }
    hit & HIGH == 0
}

/// Parses an ftrace duration in microseconds as `trace_print_graph_duration` prints it
/// (`182650.3`, `0.217`, `1371819`) and returns seconds.
pub fn us_to_s(us: f64) -> f64 {
    us / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

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
            "                  x   \t             ",
            "         \u{a0}        ",
            "                ",
        ] {
            assert_eq!(trim_start(s), s.trim_start(), "{s:?}");
            assert_eq!(trim_end(s), s.trim_end(), "{s:?}");
            assert_eq!(trim(s), s.trim(), "{s:?}");
        }
    }

    proptest::proptest! {
        // Runs of spaces across the eight-byte steps, mixed with tabs, other ASCII spaces,
        // Unicode spaces and letters.
        #[test]
        fn trims_as_str_trims_any_mix(
            pieces in proptest::collection::vec(
                (0usize..20, "[\\t\\r\\x0B\\x0Cax\\x{a0}\\x{3000}]"),
                0..5,
            ),
            tail in 0usize..20,
        ) {
            let mut s: String = pieces.iter().map(|(n, c)| " ".repeat(*n) + c).collect();
            s.push_str(&" ".repeat(tail));
            proptest::prop_assert_eq!(trim_start(&s), s.trim_start());
            proptest::prop_assert_eq!(trim_end(&s), s.trim_end());
            proptest::prop_assert_eq!(trim(&s), s.trim());
        }
    }

    /// The byte-at-a-time definition [`graphic_word`] stands for.
    fn graphic_bytes(w: [u8; 8], refused: &[u8]) -> bool {
        w.iter()
            .all(|&c| (0x21..=0x7e).contains(&c) && !refused.contains(&c))
    }

    #[test]
    fn graphic_word_agrees_with_one_byte_at_a_time() {
        // Every byte value in every position, beside graphic bytes, for one refused byte
        // (latency's tokens) and two (function_graph's call names).
        for pos in 0..8 {
            for v in 0..=255u8 {
                let mut w = *b"abcdefgh";
                w[pos] = v;
                let word = u64::from_le_bytes(w);
                for refused in [b':', b'|'] {
                    assert_eq!(
                        graphic_word(word, [refused]),
                        graphic_bytes(w, &[refused]),
                        "{w:?}"
                    );
                }
                assert_eq!(graphic_word(word, *b"(/"), graphic_bytes(w, b"(/"), "{w:?}");
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn graphic_word_any_eight_bytes(
            w in proptest::prelude::any::<[u8; 8]>(),
            refused in 0x21..0x7fu8,
        ) {
            proptest::prop_assert_eq!(
                graphic_word(u64::from_le_bytes(w), [refused]),
                graphic_bytes(w, &[refused])
            );
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
        let big = "y".repeat(chunks::READ_CHUNK * 3);
        data.extend_from_slice(big.as_bytes());
        data.extend_from_slice(b"\nlast");
        let mut r: &[u8] = &data;
        let mut lines = Lines::new(&mut r);
        for i in 0..50_000 {
            let l = lines.next_line().unwrap().unwrap();
            assert!(l.starts_with(&format!("line {i} ")), "{l}");
            assert_eq!(l.len(), format!("line {i} ").len() + i % 97);
        }
        assert_eq!(
            lines.next_line().unwrap().unwrap().len(),
            chunks::READ_CHUNK * 3
        );
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

    /// Every line with its number, and the error the input ends with, through [`with_lines`].
    fn read_all(data: &[u8]) -> (Vec<(u64, String)>, Option<ParseError>) {
        with_lines(data, false, |lines| {
            let mut out = Vec::new();
            loop {
                match lines.next_numbered() {
                    Ok(Some((n, l))) => out.push((n, l.to_string())),
                    Ok(None) => return (out, None),
                    Err(e) => {
                        // Asked again, the input ends with the same error.
                        assert_eq!(lines.next_line().unwrap_err(), e);
                        return (out, Some(e));
                    }
                }
            }
        })
    }

    #[test]
    fn a_large_input_reads_as_a_small_one() {
        // Many chunks, cut on a thread: lines, numbers, CRLF and a last line without an
        // ending come out as the reader on one thread gives them.
        let mut data = Vec::new();
        for i in 0..200_000 {
            data.extend_from_slice(format!("row {i} {}\r\n", "v".repeat(i % 41)).as_bytes());
        }
        data.extend_from_slice(b"last");
        assert!(data.len() > 4 * chunks::READ_CHUNK);
        let (lines, err) = read_all(&data);
        assert!(err.is_none());
        let mut r: &[u8] = &data;
        let mut inline = Lines::new(&mut r);
        let mut n = 0;
        while let Some((no, l)) = inline.next_numbered().unwrap() {
            assert_eq!((no, l), (lines[n].0, lines[n].1.as_str()));
            n += 1;
        }
        assert_eq!(n, lines.len());
        assert_eq!(lines[1234].1, format!("row 1234 {}", "v".repeat(1234 % 41)));
        assert_eq!(lines.last().unwrap(), &(200_001, "last".to_string()));
    }

    #[test]
    fn errors_far_into_a_large_input_name_their_line() {
        let mut data = Vec::new();
        for i in 0..100_000 {
            data.extend_from_slice(format!("line {i}\n").as_bytes());
        }
        let head = data.clone();
        // A NUL: the lines before it are read, then the error names its line.
        data.extend_from_slice(b"bad\0x\nmore\n");
        data.extend_from_slice(&b"after\n".repeat(50_000));
        let (lines, err) = read_all(&data);
        assert_eq!(lines.len(), 100_000);
        let err = err.expect("a NUL is an error");
        assert_eq!(err.pos.line, 100_001);
        assert_eq!(
            err.kind,
            ErrorKind::Binary {
                offset: head.len() as u64 + 3
            }
        );
        // A line too long, then more lines.
        let mut data = head;
        data.extend_from_slice(&vec![b'y'; 2 * MAX_LINE + 5]);
        data.extend_from_slice(b"\nafter\n");
        let (lines, err) = read_all(&data);
        assert_eq!(lines.len(), 100_000);
        let err = err.expect("a line too long is an error");
        assert_eq!(err.pos.line, 100_001);
        assert_eq!(
            err.kind,
            ErrorKind::LineTooLong {
                length: 2 * MAX_LINE as u64 + 5,
                max: MAX_LINE
            }
        );
    }

    #[test]
    fn a_parser_that_stops_early_stops_the_reader() {
        // The cutting thread is blocked on a full queue when the parser returns: it must end,
        // or this test never does.
        let data = b"0123456789\n".repeat(2_000_000);
        let first = with_lines(&data[..], false, |lines| {
            lines.next_line().unwrap().map(str::len)
        });
        assert_eq!(first, Some(10));
    }
}
