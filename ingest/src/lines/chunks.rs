//! Input cut into chunks of whole lines, each checked once for NUL bytes and UTF-8, with its
//! line ends found in one pass. A large input is cut on a thread of its own while the parser
//! works on the chunk before: reading, checking and finding line ends then cost the parser
//! nothing, and for a parser that reads lines stripped ([`super::strip_line`]) that thread
//! strips them too.

use std::io::Read;
use std::sync::mpsc;

use super::{MAX_LINE, ReadAhead};
use crate::error::{ErrorKind, ParseError};

/// Bytes asked of the reader at a time.
pub(super) const READ_CHUNK: usize = 256 * 1024;

/// Bytes asked of the reader first: each read asks twice the one before, up to [`READ_CHUNK`],
/// so a small input (an upload's file) zeroes a few KiB of buffer rather than a whole chunk.
const FIRST_READ: usize = 4 * 1024;

/// Where each read's bytes land is a multiple of this: on the machines measured, the kernel
/// copies a file's bytes into memory several times slower when the destination is not on a
/// cache line (16 bytes into a page, say, where a large allocation starts).
const ALIGN: usize = 64;

/// Most bytes moved to align the next read ([`Chunker::align_end`]).
const MAX_MOVED: usize = 4 * 1024;

/// Chunks cut ahead of the parser: enough to keep both threads busy, few enough that memory
/// stays a few MiB whatever the input.
const AHEAD: usize = 4;

/// Whole lines of the input, as text, and where each ends.
#[derive(Default)]
pub(super) struct Chunk {
    /// The lines, after `begin` bytes of padding (spaces) that are not part of the input.
    pub text: String,
    /// Where the first line starts in `text`.
    pub begin: usize,
    /// Offset in `text` of each line's `\n`, or `text.len()` for a last line without one.
    pub ends: Vec<u32>,
    /// Where each line lies in `text` once stripped ([`super::strip_line`]): filled only on
    /// the cutting thread, for a parser that asked ([`Chunker::strip_lines`]); else empty.
    pub stripped: Vec<(u32, u32)>,
    /// For each stripped line, the [`ReadAhead`] tag and where its values start in `values`:
    /// filled only on the cutting thread, for a parser that asked ([`Chunker::read_ahead`]).
    pub ahead: Vec<(u32, u32)>,
    pub values: Vec<f64>,
}

impl Chunk {
    /// What [`ReadAhead`] made of line `i` of the chunk: its tag and values, None where it
    /// was not read ahead or left to the parser (tag 0).
    #[inline]
    pub fn ahead_of(&self, i: usize) -> Option<(u32, &[f64])> {
        let &(tag, start) = self.ahead.get(i)?;
        if tag == 0 {
            return None;
        }
        let end = self
            .ahead
            .get(i + 1)
            .map_or(self.values.len(), |a| a.1 as usize);
        Some((tag, &self.values[start as usize..end]))
    }
}

/// A chunk, or the error the input ends with (reported at the line after the chunks before).
pub(super) type Produced = Result<Chunk, ParseError>;

/// Where [`Lines`](super::Lines) gets its chunks: `spent` is the chunk it is done with, whose
/// buffers the next one reuses. `None` at the end of the input.
pub(super) trait Source {
    fn next(&mut self, spent: Chunk) -> Option<Produced>;
}

/// Cuts a reader's bytes into chunks.
pub(super) struct Chunker<R> {
    reader: R,
    /// Bytes read after the last line ending of the chunk before (the start of the next),
    /// from `begin` on: the padding before them puts the next read's bytes on an [`ALIGN`]
    /// boundary.
    tail: Vec<u8>,
    begin: usize,
    eof: bool,
    done: bool,
    /// A NUL byte after the lines handed out: its offset in the input.
    nul_at: Option<u64>,
    /// Offset in the input of the first byte of `tail` after its padding.
    tail_offset: u64,
    /// Lines in the chunks handed out: an error is reported at the line after them.
    lines: u64,
    /// Bytes the next read asks for.
    next_read: usize,
    /// A read error met by [`Chunker::probe_end`] or after bytes that are served first,
    /// reported (at the line after the lines served) by the next read.
    failed: Option<ErrorKind>,
    /// Whether each chunk's lines are stripped too.
    strip: bool,
    /// The format's reading of each stripped line ahead of its parser.
    ahead: Option<ReadAhead>,
}

impl<R: Read> Chunker<R> {
    pub fn new(reader: R) -> Self {
        Chunker {
            reader,
            tail: Vec::new(),
            begin: 0,
            eof: false,
            done: false,
            nul_at: None,
            tail_offset: 0,
            lines: 0,
            next_read: FIRST_READ,
            failed: None,
            strip: false,
            ahead: None,
        }
    }

    /// Strips each line of the chunks cut from now on ([`Chunk::stripped`]): worth it only
    /// on a thread of its own, where it costs the parser nothing.
    pub fn strip_lines(&mut self) {
        self.strip = true;
    }

    /// Reads each stripped line of the chunks cut from now on with `f` ([`Chunk::ahead`]);
    /// with [`Chunker::strip_lines`], and on a thread of its own, like it.
    pub fn read_ahead(&mut self, f: ReadAhead) {
        self.ahead = Some(f);
    }

    /// Whether the reader has nothing more to give, so that no thread is worth starting.
    pub fn read_all(&self) -> bool {
        self.eof || self.done
    }

    /// After a chunk that took every byte read so far, asks the reader for more: a reader
    /// at its end says so now, so that [`Chunker::read_all`] is true for an input that fit in
    /// one read. A read error is kept for the next cut, which reports it at its line.
    pub fn probe_end(&mut self) {
        if self.eof || self.done || self.tail.len() > self.begin {
            return;
        }
        match self.read_more() {
            Ok(true) => {}
            Ok(false) => self.eof = true,
            Err(e) => self.failed = Some(e.kind),
        }
    }

    fn error(&self, kind: ErrorKind) -> ParseError {
        ParseError::new(kind, self.lines + 1)
    }

    /// Appends up to [`READ_CHUNK`] bytes to `tail`, read into its spare room (a buffered
    /// reader hands reads this large straight to the file); false at the end of the input.
    fn read_more(&mut self) -> Result<bool, ParseError> {
        if let Some(kind) = self.failed.take() {
            return Err(self.error(kind));
        }
        let want = self.next_read;
        self.next_read = (want * 2).min(READ_CHUNK);
        // Room for the padding too, so that the bytes do not move again once aligned.
        self.tail.reserve(ALIGN + want);
        self.align_end();
        let len = self.tail.len();
        // Read into the spare room as it is: a reader that can fill uninitialised memory (a
        // file) then costs no zeroing of each chunk first.
        match (&mut self.reader)
            .take(want as u64)
            .read_to_end(&mut self.tail)
        {
            Ok(_) => Ok(self.tail.len() > len),
            // Bytes read before the error are served first: the error is kept for the next
            // read, once their lines are cut, so that it is reported at the line it cut.
            Err(e) if self.tail.len() > len => {
                self.failed = Some(ErrorKind::Io(e.to_string()));
                Ok(true)
            }
            Err(e) => Err(self.error(ErrorKind::Io(e.to_string()))),
        }
    }

    /// Moves the bytes held (most often the start of a line carried from the chunk before)
    /// behind a padding that puts the next read's bytes on an [`ALIGN`] boundary. Many bytes
    /// held (a line longer than a read) stay where they are.
    fn align_end(&mut self) {
        let held = self.tail.len() - self.begin;
        if held > MAX_MOVED {
            return;
        }
        let begin = (ALIGN - (self.tail.as_ptr() as usize + held) % ALIGN) % ALIGN;
        if begin == self.begin {
            return;
        }
        if begin > self.begin {
            self.tail.resize(begin + held, b' ');
        }
        self.tail.copy_within(self.begin..self.begin + held, begin);
        self.tail.truncate(begin + held);
        self.tail[..begin].fill(b' ');
        self.begin = begin;
    }

    /// The next chunk of complete lines, built in `spent`'s buffers.
    fn cut(&mut self, mut spent: Chunk) -> Result<Option<Chunk>, ParseError> {
        loop {
            if let Some(offset) = self.nul_at {
                return Err(self.error(ErrorKind::Binary { offset }));
            }
            // Read until the buffer holds a line ending, the input ends, or the line is too long.
            // Counted from `begin`: a read may move the bytes held.
            let mut searched = 0;
            let cut = loop {
                let from = self.begin + searched;
                if let Some(i) = memchr::memrchr(b'\n', &self.tail[from..]) {
                    break from + i + 1;
                }
                searched = self.tail.len() - self.begin;
                if self.tail.len() - self.begin > MAX_LINE {
                    let length = self.skip_long_line()?;
                    return Err(self.error(ErrorKind::LineTooLong {
                        length,
                        max: MAX_LINE,
                    }));
                }
                if self.eof || !self.read_more()? {
                    self.eof = true;
                    break self.tail.len();
                }
            };
            if cut == self.begin {
                return Ok(None);
            }
            // Lines up to the first NUL are served; the line holding it is an error.
            let mut cut = cut;
            let begin = self.begin;
            if let Some(p) = memchr::memchr(0, &self.tail[begin..cut]) {
                let p = begin + p;
                let line_start =
                    memchr::memrchr(b'\n', &self.tail[begin..p]).map_or(begin, |i| begin + i + 1);
                self.nul_at = Some(self.tail_offset + (p - begin) as u64);
                cut = line_start;
            }
            // The bytes after the cut move to the spent chunk's buffer, which becomes the next
            // tail: only a partial line is copied.
            let mut next = std::mem::take(&mut spent.text).into_bytes();
            next.clear();
            if self.nul_at.is_none() {
                next.extend_from_slice(&self.tail[cut..]);
            }
            self.begin = 0;
            let mut bytes = std::mem::replace(&mut self.tail, next);
            bytes.truncate(cut);
            self.tail_offset += (cut - begin) as u64;
            // A line ending is ASCII and never part of an invalid sequence, so repairing the
            // chunk as a whole repairs each line as it would alone.
            let text = match String::from_utf8(bytes) {
                Ok(s) => s,
                Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
            };
            if text.len() == begin {
                // Nothing before the NUL: report it now.
                spent.text = text;
                continue;
            }
            let mut ends = std::mem::take(&mut spent.ends);
            ends.clear();
            line_ends(text.as_bytes(), begin, &mut ends);
            if !text.ends_with('\n') {
                ends.push(text.len() as u32);
            }
            self.lines += ends.len() as u64;
            let mut stripped = std::mem::take(&mut spent.stripped);
            stripped.clear();
            if self.strip {
                strip_each(&text, begin, &ends, &mut stripped);
            }
            let mut ahead = std::mem::take(&mut spent.ahead);
            let mut values = std::mem::take(&mut spent.values);
            ahead.clear();
            values.clear();
            if let Some(f) = self.ahead {
                for &(start, stop) in &stripped {
                    let at = values.len();
                    // A blank line holds nothing to read ahead (many do: blocks are set apart
                    // by them), and is left to the parser without a call.
                    let tag = if start == stop {
                        0
                    } else {
                        f(&text[start as usize..stop as usize], &mut values)
                    };
                    if tag == 0 {
                        values.truncate(at);
                    }
                    ahead.push((tag, at as u32));
                }
            }
            return Ok(Some(Chunk {
                text,
                begin,
                ends,
                stripped,
                ahead,
                values,
            }));
        }
    }

    /// Reads to the end of an over-long line, discarding it, and returns its length (without
    /// the line ending): the error can then say how long it is, in bounded memory.
    fn skip_long_line(&mut self) -> Result<u64, ParseError> {
        let mut length = 0u64;
        loop {
            let held = &self.tail[self.begin..];
            let end = memchr::memchr(b'\n', held);
            length += end.unwrap_or(held.len()) as u64;
            if let Some(i) = end
                && i > 0
                && held[i - 1] == b'\r'
            {
                length -= 1;
            }
            self.tail.clear();
            self.begin = 0;
            if end.is_some() {
                return Ok(length);
            }
            if !self.read_more()? {
                return Ok(length);
            }
        }
    }
}

impl<R: Read> Source for Chunker<R> {
    fn next(&mut self, spent: Chunk) -> Option<Produced> {
        if self.done {
            return None;
        }
        let out = self.cut(spent).transpose();
        if !matches!(out, Some(Ok(_))) {
            self.done = true;
        }
        out
    }
}

/// Appends the offset of every `\n` of `b` from `from` on to `ends`, 32 bytes at a time: two
/// vector comparisons give a block's newlines as a mask of bits, one push per bit. Eight bytes
/// at a time (below) took two and a half times the instructions on 20 MB of perf_stat output.
#[cfg(target_feature = "sse2")]
fn line_ends(b: &[u8], from: usize, ends: &mut Vec<u32>) {
    use safe_arch::{
        cmp_eq_mask_i8_m128i, load_unaligned_m128i, move_mask_i8_m128i, set_splat_i8_m128i,
    };
    let nl = set_splat_i8_m128i(b'\n' as i8);
    let newlines = |half: &[u8]| {
        let half: &[u8; 16] = half.try_into().unwrap_or(&[0; 16]);
        move_mask_i8_m128i(cmp_eq_mask_i8_m128i(load_unaligned_m128i(half), nl)) as u32
    };
    let mut blocks = b[from..].chunks_exact(32);
    let mut at = from as u32;
    for block in &mut blocks {
        let mut found = newlines(&block[..16]) | newlines(&block[16..]) << 16;
        while found != 0 {
            ends.push(at + found.trailing_zeros());
            found &= found - 1;
        }
        at += 32;
    }
    line_ends_by_words(b, b.len() - blocks.remainder().len(), ends);
}

#[cfg(not(target_feature = "sse2"))]
fn line_ends(b: &[u8], from: usize, ends: &mut Vec<u32>) {
    line_ends_by_words(b, from, ends);
}

/// [`line_ends`] eight bytes at a time, where no vector comparison is at hand (and for the
/// last bytes).
fn line_ends_by_words(b: &[u8], from: usize, ends: &mut Vec<u32>) {
    const NL: u64 = u64::from_le_bytes([b'\n'; 8]);
    const LOW7: u64 = u64::from_le_bytes([0x7f; 8]);
    let mut words = b[from..].chunks_exact(8);
    let mut at = from as u32;
    for w in &mut words {
        let x = u64::from_le_bytes(w.try_into().unwrap_or_default()) ^ NL;
        // The top bit of each byte that was `\n`: no carry crosses a byte, so it is exact.
        let mut found = !(((x & LOW7) + LOW7) | x | LOW7);
        while found != 0 {
            ends.push(at + found.trailing_zeros() / 8);
            found &= found - 1;
        }
        at += 8;
    }
    let rest = words.remainder().iter().enumerate();
    ends.extend(
        rest.filter(|(_, c)| **c == b'\n')
            .map(|(i, _)| at + i as u32),
    );
}

/// Where each line of `text` (from `begin`, ending at `ends`) lies once stripped. A `\r`
/// before a line's `\n`, which [`super::Lines`] leaves out, goes with the other trailing spaces.
fn strip_each(text: &str, begin: usize, ends: &[u32], out: &mut Vec<(u32, u32)>) {
    let base = text.as_ptr() as usize;
    let mut start = begin;
    out.extend(ends.iter().map(|&end| {
        let end = end as usize;
        // The bytes first, as `strip_line` does, without making the line a `str`.
        let (at, stop) = match super::strip_ascii(&text.as_bytes()[start..end]) {
            Some((at, stop)) => (start + at, start + stop),
            None => {
                let s = super::strip_line(&text[start..end]);
                let at = s.as_ptr() as usize - base;
                (at, at + s.len())
            }
        };
        start = end + 1;
        (at as u32, stop as u32)
    }));
}

/// Chunks cut on another thread: spent chunks go back to it for their buffers.
pub(super) struct Received {
    chunks: mpsc::Receiver<Produced>,
    spent: mpsc::SyncSender<Chunk>,
}

impl Source for Received {
    fn next(&mut self, spent: Chunk) -> Option<Produced> {
        // Full means the cutter has buffers enough: this one is dropped.
        let _ = self.spent.try_send(spent);
        self.chunks.recv().ok()
    }
}

/// Starts cutting `chunker`'s input on a thread of `scope`.
pub(super) fn spawn<'scope, R: Read + Send + 'scope>(
    scope: &'scope std::thread::Scope<'scope, '_>,
    mut chunker: Chunker<R>,
) -> Received {
    let (chunks_tx, chunks) = mpsc::sync_channel::<Produced>(AHEAD);
    let (spent, spent_rx) = mpsc::sync_channel::<Chunk>(AHEAD + 2);
    scope.spawn(move || {
        loop {
            let buffers = spent_rx.try_recv().unwrap_or_default();
            let Some(produced) = chunker.next(buffers) else {
                break;
            };
            let last = produced.is_err();
            // A parser that stopped early dropped the receiver: nothing more to cut.
            if chunks_tx.send(produced).is_err() || last {
                break;
            }
        }
    });
    Received { chunks, spent }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_ends_are_every_newline_whatever_the_alignment() {
        // Runs of newlines, lines of every length around a word, and tails of 0-31 bytes.
        let mut text = Vec::new();
        for n in 0..40 {
            text.extend(std::iter::repeat_n(b'x', n % 19));
            text.extend(std::iter::repeat_n(b'\n', 1 + n % 3));
            text.push(0x8a); // `\n` with the top bit set is not a newline
        }
        for len in text.len() - 32..=text.len() {
            let b = &text[..len];
            let expected: Vec<u32> = memchr::memchr_iter(b'\n', b).map(|i| i as u32).collect();
            for from in [0, 1, 7, 31, 33] {
                let want: Vec<u32> = expected.iter().copied().filter(|&i| i >= from).collect();
                let mut ends = Vec::new();
                line_ends(b, from as usize, &mut ends);
                assert_eq!(ends, want, "{len} bytes from {from}");
                ends.clear();
                line_ends_by_words(b, from as usize, &mut ends);
                assert_eq!(ends, want, "{len} bytes from {from}, by words");
            }
        }
    }

    /// Serves `text` as asked and records where each read's bytes went.
    struct Recorder<'a> {
        text: &'a [u8],
        at: usize,
        misaligned: Vec<usize>,
        reads: usize,
    }

    impl Read for Recorder<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = buf.len().min(self.text.len() - self.at);
            buf[..n].copy_from_slice(&self.text[self.at..self.at + n]);
            self.at += n;
            if n > 0 {
                self.reads += 1;
                let off = buf.as_ptr() as usize % ALIGN;
                if off != 0 {
                    self.misaligned.push(off);
                }
            }
            Ok(n)
        }
    }

    #[test]
    fn reads_land_aligned_and_lines_are_kept_whole() {
        // Lines of every length from 0 to 200 bytes, so that the partial line carried to the
        // next chunk (and the padding before it) varies; a few thousand chunks' worth.
        let mut text = String::new();
        for i in 0..60_000usize {
            let len = (i * 37) % 201;
            text.extend(std::iter::repeat_n(char::from(b'a' + (i % 26) as u8), len));
            text.push('\n');
        }
        let mut chunker = Chunker::new(Recorder {
            text: text.as_bytes(),
            at: 0,
            misaligned: Vec::new(),
            reads: 0,
        });
        chunker.strip_lines();
        let mut got = String::new();
        let mut spent = Chunk::default();
        while let Some(produced) = chunker.next(spent) {
            let chunk = produced.expect("no error");
            let mut start = chunk.begin;
            assert!(chunk.text[..chunk.begin].bytes().all(|b| b == b' '));
            for (&end, &(a, b)) in chunk.ends.iter().zip(&chunk.stripped) {
                got.push_str(&chunk.text[start..end as usize]);
                got.push('\n');
                assert_eq!(
                    &chunk.text[a as usize..b as usize],
                    chunk.text[start..end as usize].trim()
                );
                start = end as usize + 1;
            }
            spent = chunk;
        }
        assert_eq!(got, text);
        let r = &chunker.reader;
        assert!(r.reads > 100, "{} reads", r.reads);
        // Every read's bytes start on a line of the cache, the first chunk's too.
        assert!(
            r.misaligned.is_empty(),
            "{} of {} reads misaligned: {:?}",
            r.misaligned.len(),
            r.reads,
            &r.misaligned[..r.misaligned.len().min(10)]
        );
    }
}
