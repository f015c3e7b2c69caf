//! One module per input format behind the [`Format`] trait, and content sniffing to pick one.

use crate::error::ParseError;
use crate::lines::Lines;
use crate::model::Ctx;

mod blocks;
pub mod cyclictest;
pub mod function_graph;
pub mod hackbench;
pub mod latency;
pub mod lkp;
pub mod mmtests;
pub mod other;
pub mod perf_stat;
mod prose_labels;
pub mod rcuscale;
mod recent;
pub mod refscale;
pub mod samples;
pub mod time;
pub mod trace_stat;

/// How many bytes of the start of a file the sniffers see.
pub const SNIFF_BYTES: usize = 64 * 1024;

/// One input format.
pub trait Format: Sync + Send {
    /// The name used by `--format` and reported in output (`time`, `trace_stat`, ...).
    fn name(&self) -> &'static str;

    /// One line saying what the format is, for `--help` and error messages.
    fn description(&self) -> &'static str;

    /// How sure this format is that `head` (the first [`SNIFF_BYTES`] of the input, as text)
    /// is its own: 0 = not mine, 100 = certainly mine. Cheap: no allocation per line.
    fn sniff(&self, head: &str) -> u32;

    /// Parses the whole input, streaming samples into `ctx`. Lines that are not understood
    /// become warnings through `ctx.warn`; an input that holds nothing of this format, or holds
    /// malformed values, is an error with the line number.
    fn parse(&self, lines: &mut Lines<'_>, ctx: &mut Ctx<'_>) -> Result<(), ParseError>;

    /// Whether [`Format::parse`] reads its lines with [`Lines::next_stripped`]: the thread
    /// that cuts a large input into lines then strips them ahead of the parser.
    fn reads_stripped(&self) -> bool {
        false
    }

    /// What the thread that cuts a large input reads of each stripped line ahead of
    /// [`Format::parse`], which finds it with [`Lines::next_stripped_ahead`]: None for nothing.
    fn read_ahead(&self) -> Option<crate::lines::ReadAhead> {
        None
    }
}

/// Whether `phrase` occurs in `head`. Every line a sniffer reads is a slice of its head, so a
/// phrase the head lacks is in none of its lines: a sniffer looks for its phrases in the head
/// once and searches its lines only for those found (most heads hold none).
pub(super) fn head_holds(head: &str, phrase: &str) -> bool {
    memchr::memmem::find(head.as_bytes(), phrase.as_bytes()).is_some()
}

/// Every supported format, in the order detection breaks ties.
pub fn all() -> &'static [&'static dyn Format] {
    &[
        &latency::Latency,
        &cyclictest::Cyclictest,
        &mmtests::Mmtests,
        &lkp::Lkp,
        &trace_stat::TraceStat,
        &function_graph::FunctionGraph,
        &perf_stat::PerfStat,
        &rcuscale::RcuScale,
        &refscale::RefScale,
        &hackbench::Hackbench,
        &time::Time,
        &samples::Samples,
    ]
}

/// The format with this name.
pub fn by_name(name: &str) -> Option<&'static dyn Format> {
    all().iter().copied().find(|f| f.name() == name)
}

/// Comma-separated names of all formats, for error messages.
pub fn supported_names() -> String {
    all()
        .iter()
        .map(|f| f.name())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The start of `s` (at most 120 bytes, on a character boundary), for quoting a line in a
/// warning.
pub(crate) fn truncate(s: &str) -> &str {
    let mut end = s.len().min(120);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Picks the format for `head`, or says why none fits.
pub fn detect(head: &str) -> Result<&'static dyn Format, String> {
    if head.trim().is_empty() {
        return Err("the file is empty".into());
    }
    if let Some(what) = other::refuse(head) {
        return Err(format!(
            "this looks like {what}, which quiescent does not import; supported formats: {}",
            supported_names()
        ));
    }
    let mut best: Option<(&'static dyn Format, u32)> = None;
    for f in all() {
        let score = f.sniff(head);
        if score > 0 && best.is_none_or(|(_, s)| score > s) {
            best = Some((*f, score));
        }
    }
    best.map(|(f, _)| f).ok_or_else(|| {
        format!(
            "no parser recognises this content; supported formats: {} (use --format to force one)",
            supported_names()
        )
    })
}
