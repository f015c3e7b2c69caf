//! A large file parsed in two halves at once, one on each core.
//!
//! The second half (the tail) is parsed from a fresh state: nothing in a prose-labelled file
//! resets a parser's state (a heading's label depends on every label before it), so that is
//! a guess. It is checked rather than trusted. For its first [`WINDOW`] lines the tail keeps
//! its state at each line and records what it passes on instead of storing it. The first
//! half (the head) parses on past the cut until its own state at one of those lines equals
//! the tail's: from there on the tail gives what a parse of the whole file would give, since
//! the same state reading the same lines gives the same output. The head stops there; the
//! tail's records from that line on, then its stored series, are passed on after the head's
//! ([`merge`]). When the states never meet in the window the head parses the whole file and
//! the tail's work is dropped; when the merge finds something it cannot place as a whole
//! parse would, the file is parsed again on one thread. Either way the output is the one
//! thread's.

use std::any::Any;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use crate::ParseSummary;
use crate::error::{Error, ErrorKind, ParseError};
use crate::formats::Format;
use crate::lines::{self, MAX_LINE};
use crate::model::{Ctx, Tally};
use crate::summary::SeriesTable;

mod merge;
mod record;

use record::{Event, Recorder};

/// Inputs smaller than this are parsed on one thread: a thread and the merge cost more than
/// they save.
pub const SPLIT_BYTES: u64 = 32 << 20;

/// Lines at the start of the tail at which it keeps its state for the head to meet. A prose
/// block of a few dozen lines is enough for the labels to agree.
pub const WINDOW: u64 = 2_000;

/// Heads this short are counted before the halves start ([`parse_halves`]).
const COUNT_FIRST: u64 = 4 << 20;

/// A reader of the input from a byte offset on.
pub type Open<'a> = &'a (dyn Fn(u64) -> std::io::Result<Box<dyn Read + Send + 'a>> + Sync);

/// A parser's state as [`lines::Lines::sync`] is given it, comparable across threads.
pub trait State: Any + Send + Sync {
    fn same(&self, other: &dyn State) -> bool;
    fn as_any(&self) -> &dyn Any;
}

impl<T: PartialEq + Any + Send + Sync> State for T {
    fn same(&self, other: &dyn State) -> bool {
        other.as_any().downcast_ref::<T>() == Some(self)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// The tail at the top of its loop at one of its first lines.
pub(crate) struct Mark {
    line: u64,
    state: Box<dyn State>,
    /// Events recorded and series declared before the line.
    events: usize,
    series: usize,
    tally: Tally,
}

/// Where the head met the tail: which mark, and what the head had counted before that line.
pub(crate) struct Verdict {
    mark: usize,
    tally: Tally,
}

#[derive(Default)]
pub(crate) struct Shared {
    /// The number of the tail's first line, once the tail has counted the lines before it.
    cut_line: AtomicU64,
    marks: Mutex<Option<Arc<Vec<Mark>>>>,
    ready: Condvar,
    /// Set when the head parses the whole file: the tail's work is not needed.
    cancel: AtomicBool,
    verdict: Mutex<Option<Verdict>>,
}

impl Shared {
    /// Gives the tail's marks to the head; only the first call counts.
    fn publish(&self, marks: Vec<Mark>) {
        let mut m = self.marks.lock().unwrap_or_else(|e| e.into_inner());
        if m.is_none() {
            *m = Some(Arc::new(marks));
            self.ready.notify_all();
        }
    }

    fn wait_marks(&self) -> Arc<Vec<Mark>> {
        let mut m = self.marks.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(marks) = &*m {
                return marks.clone();
            }
            m = self.ready.wait(m).unwrap_or_else(|e| e.into_inner());
        }
    }
}

fn stopped(line: u64) -> ParseError {
    ParseError::new(ErrorKind::Stopped, line)
}

/// What a half does at [`lines::Lines::sync`].
pub(crate) enum Role {
    Head(Head),
    Tail(Tail),
}

pub(crate) struct Head {
    shared: Arc<Shared>,
    marks: Option<Arc<Vec<Mark>>>,
    /// The first mark not behind the head.
    next: usize,
    /// Gave up meeting the tail: parses on to the end.
    done: bool,
}

pub(crate) struct Tail {
    shared: Arc<Shared>,
    /// The first line past the window.
    until: u64,
    marks: Vec<Mark>,
}

impl Drop for Tail {
    /// A tail that ends (or fails) inside its window gives what it has.
    fn drop(&mut self) {
        self.shared.publish(std::mem::take(&mut self.marks));
    }
}

impl Role {
    /// The first line offered to [`Role::sync`]: the head's is known once the tail has counted.
    pub(crate) fn first_sync(&self, before: u64) -> u64 {
        match self {
            Role::Head(_) => u64::MAX,
            Role::Tail(_) => before + 1,
        }
    }

    /// At each chunk of lines: the head learns where the tail starts, the tail whether to stop.
    pub(crate) fn refilled(&mut self, sync_from: &mut u64) -> Result<(), ParseError> {
        match self {
            Role::Head(h) => {
                if *sync_from == u64::MAX && !h.done {
                    let cut = h.shared.cut_line.load(Ordering::Acquire);
                    if cut != 0 {
                        *sync_from = cut;
                    }
                }
            }
            Role::Tail(t) => {
                if t.shared.cancel.load(Ordering::Relaxed) {
                    return Err(stopped(0));
                }
            }
        }
        Ok(())
    }

    pub(crate) fn sync(
        &mut self,
        line: u64,
        ctx: &mut Ctx<'_>,
        state: Box<dyn State>,
        sync_from: &mut u64,
    ) -> Result<(), ParseError> {
        match self {
            Role::Head(h) => {
                let marks = h.marks.get_or_insert_with(|| h.shared.wait_marks());
                while marks.get(h.next).is_some_and(|m| m.line < line) {
                    h.next += 1;
                }
                match marks.get(h.next) {
                    None => {
                        h.done = true;
                        *sync_from = u64::MAX;
                        h.shared.cancel.store(true, Ordering::Relaxed);
                    }
                    Some(m) if m.line == line && m.state.same(&*state) => {
                        *h.shared.verdict.lock().unwrap_or_else(|e| e.into_inner()) =
                            Some(Verdict {
                                mark: h.next,
                                tally: ctx.tally(),
                            });
                        return Err(stopped(line));
                    }
                    Some(_) => {}
                }
            }
            Role::Tail(t) => {
                let end = line >= t.until;
                let (events, series) = ctx
                    .sink()
                    .split_mark(end)
                    .expect("the tail records into a Recorder");
                if end {
                    t.shared.publish(std::mem::take(&mut t.marks));
                    *sync_from = u64::MAX;
                } else {
                    t.marks.push(Mark {
                        line,
                        state,
                        events,
                        series,
                        tally: ctx.tally(),
                    });
                }
            }
        }
        Ok(())
    }
}

/// Where to cut a file of `len` bytes: just after the middle, at the start of the line after
/// the first blank line there (a parser forgets most at a blank line), else after the first
/// line end; `None` when there is no line end near the middle.
pub fn find_cut(open: Open<'_>, len: u64) -> std::io::Result<Option<u64>> {
    // A little past the middle: the tail also counts the lines before it.
    let from = len / 2 + len / 50;
    let mut buf = Vec::new();
    open(from)?
        .take(2 * MAX_LINE as u64)
        .read_to_end(&mut buf)?;
    let blank = memchr::memmem::find(&buf, b"\n\n").map(|i| i + 2);
    let cut = blank.or_else(|| memchr::memchr(b'\n', &buf).map(|i| i + 1));
    Ok(cut.map(|c| from + c as u64).filter(|&c| c > 0 && c < len))
}

/// Lines before byte `cut` (its `\n`s), stopping early when the head no longer needs them.
fn count_lines(open: Open<'_>, cut: u64, shared: &Shared) -> std::io::Result<u64> {
    let mut r = open(0)?.take(cut);
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0;
    loop {
        let got = r.read(&mut buf)?;
        if got == 0 || shared.cancel.load(Ordering::Relaxed) {
            return Ok(n);
        }
        n += memchr::memchr_iter(b'\n', &buf[..got]).count() as u64;
    }
}

/// How a split parse went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The head met the tail at this line; the tail's output from there on was passed on.
    Met { line: u64 },
    /// The head parsed the whole file (the halves did not meet in the window, or it failed).
    Whole,
    /// The halves met but did not fit together: the file was parsed again on one thread.
    Again,
}

/// What the tail hands back.
struct TailOut {
    result: Result<(), ParseError>,
    table: SeriesTable,
    events: Vec<Event>,
    /// Series declared before the window ended, and which of those were used after it.
    window_series: usize,
    used_after: Vec<bool>,
    tally: Tally,
}

/// Publishes no marks when the tail ends before it has any (an I/O error, a panic), so that
/// the head never waits for them in vain.
struct PublishOnExit<'a>(&'a Shared);

impl Drop for PublishOnExit<'_> {
    fn drop(&mut self) {
        self.0.publish(Vec::new());
    }
}

fn tail_half(
    fmt: &'static dyn Format,
    open: Open<'_>,
    (cut, window): (u64, u64),
    mut table: SeriesTable,
    file_name: Option<String>,
    shared: &Arc<Shared>,
) -> TailOut {
    let _publish = PublishOnExit(shared);
    let io = |e: std::io::Error| ParseError::new(ErrorKind::Io(e.to_string()), 0);
    let counted = match shared.cut_line.load(Ordering::Acquire) {
        0 => count_lines(open, cut, shared),
        line => Ok(line - 1),
    };
    let start = counted.and_then(|n| Ok((n, open(cut)?)));
    let (before, reader) = match start {
        Ok(s) => s,
        Err(e) => {
            return TailOut {
                result: Err(io(e)),
                table,
                events: Vec::new(),
                window_series: 0,
                used_after: Vec::new(),
                tally: Tally::default(),
            };
        }
    };
    shared.cut_line.store(before + 1, Ordering::Release);
    let role = Role::Tail(Tail {
        shared: shared.clone(),
        until: before + 1 + window,
        marks: Vec::new(),
    });
    let mut rec = Recorder::new(&mut table);
    let mut ctx = Ctx::relaying(&mut rec, file_name);
    let result = lines::with_lines_split(reader, fmt.reads_stripped(), before, Some(role), |l| {
        fmt.parse(l, &mut ctx)
    });
    let tally = ctx.tally();
    drop(ctx);
    let (events, window_series, used_after) = rec.into_parts();
    table.finish();
    TailOut {
        result,
        table,
        events,
        window_series,
        used_after,
        tally,
    }
}

/// Parses the input `open` gives in two halves at once into `table` (see the module's
/// documentation): the tail from byte `cut`, where a line starts, its state kept at its first
/// `window` lines. `fresh` makes the tail's table and, should the halves not fit together,
/// the one the file is parsed into again.
pub fn parse_halves(
    name: &Path,
    fmt: &'static dyn Format,
    open: Open<'_>,
    (cut, window): (u64, u64),
    table: &mut SeriesTable,
    fresh: &(dyn Fn() -> SeriesTable + Sync),
) -> Result<(ParseSummary, Outcome), Error> {
    let file_name = name.file_name().map(|s| s.to_string_lossy().into_owned());
    let parse_err = |source: ParseError| Error::Parse {
        path: name.to_path_buf(),
        format: fmt.name(),
        source,
    };
    let io_err = |source| Error::Io {
        path: name.to_path_buf(),
        source,
    };
    let shared = Arc::new(Shared::default());
    // The head looks for the tail's first line as it reads each chunk: an input of a few
    // chunks may be read before the tail has counted, so a short head is counted here.
    if cut <= COUNT_FIRST {
        let n = count_lines(open, cut, &shared).map_err(io_err)?;
        shared.cut_line.store(n + 1, Ordering::Release);
    }
    // Two tables filled at once keep half as much in memory each.
    table.share_memory(2);
    let half = || {
        let mut t = fresh();
        t.share_memory(2);
        t
    };
    let merged = std::thread::scope(|scope| {
        let tail =
            scope.spawn(|| tail_half(fmt, open, (cut, window), half(), file_name.clone(), &shared));
        let head = Role::Head(Head {
            shared: shared.clone(),
            marks: None,
            next: 0,
            done: false,
        });
        let mut ctx = Ctx::new(&mut *table, file_name.clone());
        let result = open(0).map_err(io_err).and_then(|reader| {
            lines::with_lines_split(reader, fmt.reads_stripped(), 0, Some(head), |l| {
                fmt.parse(l, &mut ctx)
            })
            .map_err(parse_err)
        });
        let met = matches!(&result, Err(Error::Parse { source, .. }) if source.kind == ErrorKind::Stopped);
        if !met {
            // The head read the whole file (or failed): its output is a whole parse's.
            shared.cancel.store(true, Ordering::Relaxed);
            let _ = tail.join();
            let summary = ParseSummary {
                format: fmt.name(),
                samples: ctx.samples(),
                warnings: ctx.warnings(),
            };
            return Some(result.map(|()| (summary, Outcome::Whole)));
        }
        let tail = tail.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        let head_tally = ctx.tally();
        drop(ctx);
        let verdict = shared
            .verdict
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()?;
        let marks = shared.wait_marks();
        let mark = &marks[verdict.mark];
        let line = mark.line;
        merge::merge(table, file_name.clone(), head_tally, &verdict, mark, tail).map(|tally| {
            let summary = ParseSummary {
                format: fmt.name(),
                samples: tally.samples,
                warnings: tally.warnings,
            };
            Ok((summary, Outcome::Met { line }))
        })
    });
    match merged {
        Some(summary) => summary,
        None => {
            *table = fresh();
            let reader = open(0).map_err(io_err)?;
            crate::parse_reader(name, reader, Some(fmt.name()), table).map(|s| (s, Outcome::Again))
        }
    }
}
