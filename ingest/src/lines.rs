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
    with_lines_ahead(reader, strip, None, parse)
}

/// A line's number, the line stripped, and what [`ReadAhead`] made of it
/// ([`Lines::next_stripped_ahead`]).
pub type StrippedAhead<'a> = (u64, &'a str, Option<(u32, &'a [f64])>);

/// A format's reading of one stripped line done ahead of its parser, on the thread that cuts
/// the input (see [`with_lines_ahead`]): a function of the line alone, it appends what it read
/// to the values and returns a tag for the parser, 0 for "nothing read ahead: read it all".
/// A line stripped to nothing is not given to it (its tag is 0).
pub type ReadAhead = fn(&str, &mut Vec<f64>) -> u32;

/// [`with_lines`], and when the input is cut on a thread of its own and `ahead` is given, that
/// thread also strips each line and reads it with `ahead`: the parser finds the tag and values
/// with [`Lines::next_stripped_ahead`]. The parser's thread is often the one that sets the
/// parse's time while the cutting thread waits for it; what is read ahead must cost that thread
/// less than it saves.
pub fn with_lines_ahead<R: Read + Send, T>(
    reader: R,
    strip: bool,
    ahead: Option<ReadAhead>,
    parse: impl FnOnce(&mut Lines<'_>) -> T,
) -> T {
    let mut chunker = Chunker::new(reader);
    let first = chunker.next(Chunk::default());
    chunker.probe_end();
    if chunker.read_all() {
        return parse(&mut Lines::from_source(Box::new(chunker), Some(first)));
    }
    if strip || ahead.is_some() {
        chunker.strip_lines();
    }
    if let Some(f) = ahead {
        chunker.read_ahead(f);
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
                self.pos = chunk.begin;
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
    #[inline(always)]
    pub fn next_numbered(&mut self) -> Result<Option<(u64, &str)>, ParseError> {
        if !self.advance()? {
            return Ok(None);
        }
        Ok(Some((
            self.line_no,
            &self.chunk.text[self.start..self.stop],
        )))
    }

    /// [`Lines::next_numbered`] with the line stripped ([`strip_line`]), most often already
    /// by the thread that cut it.
    #[inline]
    pub fn next_stripped(&mut self) -> Result<Option<(u64, &str)>, ParseError> {
        if !self.advance()? {
            return Ok(None);
        }
        Ok(Some((self.line_no, self.stripped())))
    }

    /// [`Lines::next_stripped`] with what [`ReadAhead`] made of the line: its tag (never 0)
    /// and the values it appended. None when the line was not read ahead (a small input read
    /// on one thread, the first chunk of a large one, or a tag of 0), so that the parser reads
    /// the line itself.
    #[inline]
    pub fn next_stripped_ahead(&mut self) -> Result<Option<StrippedAhead<'_>>, ParseError> {
        if !self.advance()? {
            return Ok(None);
        }
        let ahead = self.chunk.ahead_of(self.next - 1);
        Ok(Some((self.line_no, self.stripped(), ahead)))
    }

    /// The line last taken, stripped: as the cutting thread found it, else here.
    #[inline(always)]
    fn stripped(&self) -> &str {
        let text = &self.chunk.text;
        match self.chunk.stripped.get(self.next - 1) {
            Some(&(start, stop)) => &text[start as usize..stop as usize],
            None => strip_line(&text[self.start..self.stop]),
        }
    }

    /// Moves to the next line (the same one again after [`Lines::push_back`]), whose place is
    /// then `start..stop` and whose index in the chunk is `next - 1`; false at the end of the
    /// input.
    #[inline(always)]
    fn advance(&mut self) -> Result<bool, ParseError> {
        // The common case, inlined into the parser's loop: the next line of the chunk.
        if !self.pushed_back && self.next < self.chunk.ends.len() {
            self.take_line();
            return Ok(true);
        }
        self.advance_slow()
    }

    #[inline(never)]
    fn advance_slow(&mut self) -> Result<bool, ParseError> {
        if self.pushed_back {
            self.pushed_back = false;
        } else {
            // A chunk is never empty, so one refill is enough.
            if self.next == self.chunk.ends.len() && !self.refill()? {
                return Ok(false);
            }
            self.take_line();
        }
        Ok(true)
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
    match strip_ascii(line.as_bytes()) {
        Some((start, end)) => &line[start..end],
        None => trim_end(strip_mail(line)),
    }
}

/// Where [`strip_line`] cuts `b`, read as bytes in one pass, for a line whose stripped ends
/// are ASCII (nearly every line): None when either end meets a byte that is not, for the
/// general path (which knows Unicode's spaces) to decide.
#[inline]
pub(super) fn strip_ascii(b: &[u8]) -> Option<(usize, usize)> {
    let (mut start, mut end) = (0, b.len());
    loop {
        while start < end && is_space(b[start]) {
            start += 1;
        }
        if start < end && b[start] == b'>' {
            start += 1;
            continue;
        }
        break;
    }
    while end > start && is_space(b[end - 1]) {
        end -= 1;
    }
    let ascii = |i: usize| b.get(i).is_none_or(u8::is_ascii);
    (start == end || (ascii(start) && ascii(end - 1))).then_some((start, end))
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
#[inline(always)]
pub(crate) fn is_space(b: u8) -> bool {
    // One load where the six comparisons took a range check and a bit test: the runs of
    // padding between a row's values are read a byte at a time.
    SPACE[usize::from(b)]
}

/// [`is_space`] of every byte.
static SPACE: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        t[c] = matches!(c as u8, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r');
        c += 1;
    }
    t
};

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

/// The bytes of `w` equal to `b`, each as its high bit ("Bit Twiddling Hacks" `haszero`):
/// the lowest one set is exactly the first such byte, higher ones can be false.
#[inline(always)]
pub(crate) fn byte_marks(w: u64, b: u8) -> u64 {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    let v = w ^ (ONES * u64::from(b));
    v.wrapping_sub(ONES) & !v & HIGH
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

/// A run of 1 to 15 digits of `t` from `i` (few enough for its value to be exact in an
/// `f64`): where it ends and its value.
#[inline(always)]
pub fn digits(t: &[u8], mut i: usize) -> Option<(usize, u64)> {
    let start = i;
    let mut acc = 0u64;
    while let Some(&b) = t.get(i)
        && b.is_ascii_digit()
    {
        // Wraps only on runs too long to be accepted below.
        acc = acc.wrapping_mul(10).wrapping_add(u64::from(b - b'0'));
        i += 1;
    }
    (i > start && i - start <= 15).then_some((i, acc))
}

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
    other_bytes(w, refused) == 0
}

/// Whether every byte of `b` is printable ASCII other than the space and none is one of
/// `refused` ([`graphic_word`] eight bytes at a time, the last word overlapping the one before).
#[inline(always)]
pub fn all_graphic<const N: usize>(b: &[u8], refused: [u8; N]) -> bool {
    let n = b.len();
    if n < 8 {
        return b
            .iter()
            .all(|c| c.is_ascii_graphic() && !refused.contains(c));
    }
    let word = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().unwrap_or_default());
    let mut i = 0;
    while i + 8 < n {
        if !graphic_word(word(i), refused) {
            return false;
        }
        i += 8;
    }
    graphic_word(word(n - 8), refused)
}

/// The bytes of `w` that [`graphic_word`] refuses, each as its high bit. The lowest one set
/// is exactly the first such byte (higher ones can be false): `trailing_zeros() / 8` is its
/// index.
#[inline(always)]
pub fn other_bytes<const N: usize>(w: u64, refused: [u8; N]) -> u64 {
    const ONES: u64 = u64::from_le_bytes([1; 8]);
    const HIGH: u64 = u64::from_le_bytes([0x80; 8]);
    // Below `!` (spaces, controls), or `\x7f` and above (DEL, non-ASCII).
    let mut hit = (w.wrapping_sub(ONES * 0x21) & !w) | w.wrapping_add(ONES) | w;
    for r in refused {
        hit |= byte_marks(w, r);
    }
    hit & HIGH
}

/// Parses an ftrace duration in microseconds as `trace_print_graph_duration` prints it
/// (`182650.3`, `0.217`, `1371819`) and returns seconds.
pub fn us_to_s(us: f64) -> f64 {
    us / 1e6
}

#[cfg(test)]
mod tests;
