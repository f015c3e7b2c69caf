//! Shared by the formats whose files hold several measurement blocks written up by a person:
//! block labels taken from the author's prose, and per-block metadata.
//!
//! A label is the last short, label-like paragraph seen since the previous block (`-vanilla:`,
//! `== original, no patched`, `(without the patchset)`, `With this commit:`); it stays in force
//! for the following blocks until new prose replaces it. Sentences (ending with `.`), command
//! lines, rules (`---`) and sub-headings directly above non-block data (`memory usage:` above
//! `Slab: 7936 kB`) are not labels. A paragraph that continues the previous one (`and with
//! reverted X` after `Results with no load; with X`) is read against it, so that blocks in
//! different sections keep distinct labels.

mod meta;

use std::ops::Range;

use crate::intern::Interner;
use crate::lines::{find_str, words};
pub(crate) use meta::BlockMeta;

/// Longest label accepted; longer paragraphs are prose, not block titles.
const MAX_LABEL: usize = 100;

/// Longest label built from others (a section and its heading, an anchor and its
/// continuation): a longer one is given up for the heading or phrase alone, so that labels
/// stay bounded whatever the prose repeats.
const MAX_BUILT: usize = 3 * MAX_LABEL;

/// Paragraphs kept while waiting for a block, and the longest paragraph kept whole: prose of
/// any length costs bounded memory (longer text is not a label anyway).
const MAX_PENDING: usize = 16;
const MAX_PARAGRAPH: usize = 4 * 1024;

/// Words that open a paragraph continuing the previous label.
const CONTINUATIONS: [&str; 6] = ["and ", "or ", "but ", "vs ", "vs. ", "versus "];

#[derive(Default)]
pub(crate) struct Labeler {
    /// Closed paragraphs since the last block, raw (lines joined by one space): the first
    /// `pending_len`; the buffers after them are kept for the next paragraphs, so that reading
    /// prose allocates nothing per paragraph and moves no buffer between lists.
    pending: Vec<String>,
    pending_len: usize,
    /// The paragraph being read.
    building: String,
    /// Every label given or read so far, once each: the labels below are ids into it, so
    /// that a block's label is set and compared as a number, and a parser can key its series
    /// by [`Labeler::label_id`] without hashing the text. It grows with the labels of the
    /// file's blocks, as the series they name do.
    names: Interner,
    /// The label in force.
    current: Option<u32>,
    /// The label in force as read, before a section was put in front of it: the section a
    /// heading that comes back is read in, so that sections do not nest without end.
    base: Option<u32>,
    /// The last label that was not a continuation.
    anchor: Option<u32>,
    /// Labels found in the prose so far (bounded), each with the label in force before its
    /// first use, to tell a heading that comes back in a new section.
    seen: Vec<(String, Option<String>)>,
    /// Paragraphs already read as labels, with what they gave: files of many blocks repeat
    /// the same few headings, and reading one is much dearer than comparing it.
    read: Vec<Reading>,
    /// Where a qualified label is built before it replaces `current`.
    scratch: String,
    /// Paragraphs read again rather than their remembered labels taken (to test the memo).
    #[cfg(test)]
    memo_off: bool,
}

impl Labeler {
    /// A line of prose (already stripped of mail quoting).
    pub(crate) fn prose(&mut self, line: &str) {
        self.prose_stripped(crate::lines::trim(line));
    }

    /// [`Labeler::prose`] of a line already trimmed at both ends, as [`strip_line`] leaves
    /// it: a parser that reads its lines stripped saves trimming each one again.
    ///
    /// [`strip_line`]: crate::lines::strip_line
    pub(crate) fn prose_stripped(&mut self, line: &str) {
        debug_assert_eq!(line, crate::lines::trim(line));
        if line.is_empty() {
            return self.blank();
        }
        if is_rule(line) {
            return self.blank();
        }
        if self.building.len() + line.len() < MAX_PARAGRAPH {
            if !self.building.is_empty() {
                // Lines stay apart until read, so a numbered first line can be the label.
                self.building.push('\n');
            }
            self.building.push_str(line);
        } else {
            // Too long to be a title: keep a sentence end so it is not taken for one.
            self.building.clear();
            self.building.push('.');
        }
        // A line ending with `:` is a heading: it ends its paragraph.
        if line.ends_with(':') {
            self.blank();
        }
    }

    /// A blank line, a rule or anything else that ends a paragraph.
    #[inline]
    pub(crate) fn blank(&mut self) {
        // Inlined: most blank lines follow data, with no paragraph open.
        if !self.building.is_empty() {
            self.close_paragraph();
        }
    }

    fn close_paragraph(&mut self) {
        if self.pending_len == MAX_PENDING {
            // The oldest paragraph goes; its buffer takes the next one.
            self.pending[..MAX_PENDING].rotate_left(1);
            self.pending_len -= 1;
        }
        if self.pending_len == self.pending.len() {
            self.pending.push(String::new());
        }
        std::mem::swap(&mut self.building, &mut self.pending[self.pending_len]);
        self.building.clear();
        self.pending_len += 1;
    }

    /// A command line (`$ time make`): ends a paragraph, is never a label.
    pub(crate) fn command(&mut self) {
        self.blank();
    }

    /// Data that is not a block (`Slab: 7936 kB` before a `perf stat` block): a heading just
    /// above it titles that data, not the block.
    pub(crate) fn side_data(&mut self) {
        self.blank();
        if self.pending_len > 0 && self.pending[self.pending_len - 1].ends_with(':') {
            self.pending_len -= 1;
        }
    }

    /// Sets the label explicitly (e.g. from a command's options); pending prose is consumed.
    pub(crate) fn set(&mut self, label: Option<String>) {
        self.blank();
        self.clear_pending();
        let id = label.map(|l| self.names.id(&l));
        (self.anchor, self.base, self.current) = (id, id, id);
    }

    fn clear_pending(&mut self) {
        self.pending_len = 0;
    }

    #[cfg(not(test))]
    #[inline(always)]
    fn memo_on(&self) -> bool {
        true
    }

    #[cfg(test)]
    fn memo_on(&self) -> bool {
        !self.memo_off
    }

    /// The label of a block starting now: the pending prose decides, else the label in force.
    pub(crate) fn label(&mut self) -> Option<String> {
        self.label_ref().map(str::to_string)
    }

    /// [`Labeler::label`], borrowed: a block's label costs no allocation once its prose has
    /// been read before.
    pub(crate) fn label_ref(&mut self) -> Option<&str> {
        let id = self.label_id()?;
        Some(self.names.get(id))
    }

    /// The label of a block starting now as an id, the same for the same text throughout the
    /// file: [`Labeler::name`] gives its text.
    pub(crate) fn label_id(&mut self) -> Option<u32> {
        self.blank();
        // The cached reading of the last paragraph that gives a label.
        let mut found = None;
        for j in (0..self.pending_len).rev() {
            let p = &self.pending[j];
            let i = match self.read.iter().position(|r| r.paragraph == *p) {
                Some(i) => i,
                None => {
                    let label = clean_label(p).or_else(|| numbered_first_line(p));
                    let continuation = label.as_deref().and_then(|l| {
                        let phrase = continuation(l)?;
                        let first = words(phrase).next().unwrap_or(phrase);
                        Some((span(l, phrase), span(l, first)))
                    });
                    // The paragraph is kept with its reading; the reading it replaces gives
                    // its buffer to the pending ones.
                    let spare = if self.read.len() == MAX_PENDING {
                        let mut old = self.read.remove(0).paragraph;
                        old.clear();
                        old
                    } else {
                        String::new()
                    };
                    let paragraph = std::mem::replace(&mut self.pending[j], spare);
                    self.read.push(Reading {
                        paragraph,
                        label: label.as_deref().map(|l| self.names.id(l)),
                        continuation,
                        memo: Vec::new(),
                    });
                    self.read.len() - 1
                }
            };
            if self.read[i].label.is_some() {
                found = Some(i);
                break;
            }
        }
        self.clear_pending();
        if let Some(i) = found {
            let r = &self.read[i];
            // The same paragraph read in the same state as last time gives the same label.
            let state = match r.continuation {
                Some(_) => self.anchor,
                None => self.base,
            };
            if let Some(m) = r.memo.iter().find(|m| m.state == state)
                && self.memo_on()
            {
                // As read below: a continuation's label is also the base; a heading is the
                // base, and its label the anchor.
                match r.continuation {
                    Some(_) => self.base = Some(m.out),
                    None => (self.base, self.anchor) = (r.label, Some(m.out)),
                }
                self.current = Some(m.out);
                return self.current;
            }
            let label = r.label.map_or("", |l| self.names.get(l));
            let out = &mut self.scratch;
            out.clear();
            match &r.continuation {
                Some((phrase, first)) => {
                    let phrase = &label[phrase.clone()];
                    match self.anchor {
                        Some(anchor) => join_continuation(
                            self.names.get(anchor),
                            phrase,
                            &label[first.clone()],
                            out,
                        ),
                        None => out.push_str(phrase),
                    }
                    if out.len() > MAX_BUILT {
                        out.clear();
                        out.push_str(phrase);
                    }
                    let id = self.names.id(out);
                    // A continuation's label is a function of the anchor alone.
                    remember(&mut self.read[i].memo, self.anchor, id);
                    self.base = Some(id);
                    self.current = Some(id);
                }
                None => {
                    let section = self.base.map(|b| self.names.get(b));
                    qualify(&mut self.seen, section, label, out);
                    let id = self.names.id(out);
                    // A heading's label is a function of the section it comes in: the entry of
                    // `seen` it is read against is written once, at its first reading, with
                    // that reading's section, which gives the same label.
                    remember(&mut self.read[i].memo, self.base, id);
                    self.base = self.read[i].label;
                    self.anchor = Some(id);
                    self.current = Some(id);
                }
            }
        }
        self.current
    }

    /// The text of a label id given by [`Labeler::label_id`].
    pub(crate) fn name(&self, id: u32) -> &str {
        self.names.get(id)
    }
}

/// A paragraph already read, with the label it gave.
#[derive(Debug)]
struct Reading {
    paragraph: String,
    /// The label it gives as read, an id of [`Labeler::names`].
    label: Option<u32>,
    /// For a continuation, where in the label its phrase and the phrase's first word lie.
    continuation: Option<(Range<usize>, Range<usize>)>,
    /// Labels it gave in the last few states it was read in (the anchor for a continuation,
    /// the section for a heading): read again in one of those, it gives that label again. A
    /// paragraph repeated in each section of a mail (`and with reverted X`) has a few.
    memo: Vec<Memo>,
}

/// A state a paragraph was read in and the label it gave then.
#[derive(Debug)]
struct Memo {
    state: Option<u32>,
    out: u32,
}

/// States remembered for each paragraph.
const MEMOS: usize = 4;

/// Remembers that a paragraph read in `state` gave `out`, in place of the oldest state when
/// [`MEMOS`] are remembered.
fn remember(memo: &mut Vec<Memo>, state: Option<u32>, out: u32) {
    if memo.len() == MEMOS {
        memo.remove(0);
    }
    memo.push(Memo { state, out });
}

/// Where `part`, a slice of `whole`, lies in it.
fn span(whole: &str, part: &str) -> Range<usize> {
    let start = part.as_ptr() as usize - whole.as_ptr() as usize;
    start..start + part.len()
}

/// Sets `dst` to `src`, reusing its buffer.
pub(crate) fn set_str(dst: &mut Option<String>, src: &str) {
    match dst {
        Some(d) => {
            d.clear();
            d.push_str(src);
        }
        None => *dst = Some(src.to_string()),
    }
}

/// A label already used that comes back after a label it never followed before starts a
/// new section (`openSUSE config:` `Patched:` `allmodconfig:` `Patched:`): it is read as
/// that section's, `allmodconfig: Patched`, so that the two sections' blocks are not pooled.
/// Labels alternating as before (`original` `patched` `original` `patched`) still pool, and
/// so does the mail's first label. `section` is the label in force as read, never one already
/// put in a section: a mail pasted twice gives each heading one section, not a chain of them.
/// The label to use is written to `out`.
fn qualify(
    seen: &mut Vec<(String, Option<String>)>,
    section: Option<&str>,
    label: &str,
    out: &mut String,
) {
    out.clear();
    let first = seen.iter().find(|(l, _)| l == label);
    match (first, section) {
        (Some((_, before)), Some(section))
            if section != label
                && before.as_deref().is_some_and(|b| b != section)
                && section.len() + 2 + label.len() <= MAX_BUILT =>
        {
            out.push_str(section);
            out.push_str(": ");
            out.push_str(label);
        }
        _ => out.push_str(label),
    }
    if first.is_none() && seen.len() < MAX_PENDING * 4 {
        seen.push((label.to_string(), section.map(str::to_string)));
    }
}

/// `---`, `=====`, `*****`: separators, not words.
fn is_rule(line: &str) -> bool {
    line.len() >= 3
        && line
            .bytes()
            .all(|b| matches!(b, b'-' | b'=' | b'*' | b'_' | b'~'))
}

/// A paragraph too long to be a label whose first line is numbered (`(4) tip/sched/core +
/// opt_skip_uclamp_v2`, then the configuration and commands that made it): that first line.
fn numbered_first_line(paragraph: &str) -> Option<String> {
    let (first, _) = paragraph.split_once('\n')?;
    let rest = first
        .trim_start_matches('(')
        .trim_start_matches(|c: char| c.is_ascii_digit());
    let numbered = rest.len() < first.len() - first.starts_with('(') as usize
        && rest.starts_with([')', '.', ' ']);
    numbered.then(|| clean_label(first)).flatten()
}

/// Turns a paragraph into a label, or None when it is prose rather than a title.
pub(crate) fn clean_label(paragraph: &str) -> Option<String> {
    let joined = paragraph.replace('\n', " ");
    let p = joined.trim();
    // Sentences are prose (an ellipsis too).
    if p.ends_with(['.', '!', '?']) {
        return None;
    }
    let p = last_sentence(p);
    let p = p.trim_end_matches(':').trim();
    let p = trim_decoration(p);
    let p = unwrap_parens(p);
    let p = remove_asides(p);
    let p = trim_decoration(p.trim_end_matches(':').trim()).to_string();
    if p.is_empty() || p.len() > MAX_LABEL || !p.bytes().any(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    Some(p)
}

/// The last sentence of a paragraph (`... repositories.  For example, before this commit:`).
fn last_sentence(p: &str) -> &str {
    let bytes = p.as_bytes();
    let mut start = 0;
    for i in 0..bytes.len() {
        if matches!(bytes[i], b'.' | b'!' | b'?')
            && bytes.get(i + 1) == Some(&b' ')
            && let Some(next) = p[i + 1..].trim_start().chars().next()
            && next.is_uppercase()
        {
            start = i + 1;
        }
    }
    p[start..].trim()
}

/// Strips `== x`, `--- x ---`, `** x **` decorations; a single leading `-` stays (`-vanilla`).
fn trim_decoration(p: &str) -> &str {
    let mut s = p.trim();
    loop {
        let before = s;
        s = s.trim_start_matches('=').trim_end_matches('=').trim();
        for d in ["--", "**", "##"] {
            while let Some(r) = s.strip_prefix(d) {
                s = r.trim_start_matches(d.as_bytes()[0] as char).trim();
            }
            while let Some(r) = s.strip_suffix(d) {
                s = r.trim_end_matches(d.as_bytes()[0] as char).trim();
            }
        }
        if s == before {
            return s;
        }
    }
}

/// `(with the patchset)` -> `with the patchset`, when the parentheses enclose the whole label.
fn unwrap_parens(p: &str) -> &str {
    if p.starts_with('(') && p.ends_with(')') && matching_paren(p, 0) == Some(p.len() - 1) {
        p[1..p.len() - 1].trim()
    } else {
        p
    }
}

/// Index of the `)` matching the `(` at `open`.
fn matching_paren(p: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, b) in p.bytes().enumerate().skip(open) {
        match b {
            b'(' => depth += 1,
            b')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Removes parenthesised asides (`(rcu: Throttle ...)`, `(started the script make-load
/// once)`): a group opening after a space and holding several words. `foo()` stays.
fn remove_asides(p: &str) -> String {
    let mut out = String::with_capacity(p.len());
    let mut i = 0;
    let bytes = p.as_bytes();
    while i < bytes.len() {
        if bytes[i] == b'('
            && (i == 0 || bytes[i - 1] == b' ')
            && let Some(close) = matching_paren(p, i)
            && p[i..close].contains(' ')
        {
            i = close + 1;
            continue;
        }
        let ch = p[i..].chars().next().unwrap_or(' ');
        out.push(ch);
        i += ch.len_utf8();
    }
    words(&out).collect::<Vec<_>>().join(" ")
}

/// The phrase after a continuation word (`and with reverted X` -> `with reverted X`).
fn continuation(label: &str) -> Option<&str> {
    CONTINUATIONS
        .iter()
        .find_map(|w| label.strip_prefix(w))
        .map(str::trim)
        .filter(|s| !s.is_empty())
}

/// Reads a continuation against its anchor: the phrase replaces the anchor's parallel part,
/// found as the last occurrence of the phrase's first word `first` (`Results with no load;
/// with X` + `with reverted X` -> `Results with no load; with reverted X`). Written to `out`.
fn join_continuation(anchor: &str, phrase: &str, first: &str, out: &mut String) {
    let mut found = None;
    // The occurrences `match_indices` gives, without setting up a searcher per call.
    let mut from = 0;
    while !first.is_empty()
        && let Some(j) = find_str(&anchor[from..], first)
    {
        let i = from + j;
        let before_ok = i == 0 || anchor.as_bytes()[i - 1] == b' ';
        let after = anchor.as_bytes().get(i + first.len());
        if before_ok && after.is_none_or(|b| *b == b' ') {
            found = Some(i);
        }
        from = i + first.len();
    }
    if let Some(i) = found {
        out.push_str(&anchor[..i]);
    }
    out.push_str(phrase);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_from_headings_and_parens() {
        assert_eq!(clean_label("-vanilla:").as_deref(), Some("-vanilla"));
        assert_eq!(
            clean_label("== original, no patched").as_deref(),
            Some("original, no patched")
        );
        assert_eq!(
            clean_label("(without the patchset)").as_deref(),
            Some("without the patchset")
        );
        assert_eq!(
            clean_label("repositories.  For example, before this commit:").as_deref(),
            Some("For example, before this commit")
        );
        assert_eq!(clean_label("i.e. almost 20x speed-up."), None);
        assert_eq!(clean_label("---"), None);
        assert_eq!(
            clean_label("call foo() twice (slow path)").as_deref(),
            Some("call foo() twice")
        );
    }

    #[test]
    fn a_numbered_first_line_names_a_long_paragraph() {
        let mut l = Labeler::default();
        l.prose("(4) tip/sched/core + opt_skip_uclamp_v2");
        l.prose("CONFIG_UCLAMP_TASK=y");
        l.prose("echo 512 > /proc/sys/kernel/sched_util_clamp_min (enable uclamp) and more words");
        assert_eq!(
            l.label().as_deref(),
            Some("(4) tip/sched/core + opt_skip_uclamp_v2")
        );
        let mut l = Labeler::default();
        l.prose("On a workload consisting of running duperemove on a fully-duplicated");
        l.prose("dataset, consisting of 80g spread among 20k 4m files I get the following");
        assert_eq!(l.label(), None);
    }

    #[test]
    fn continuation_reads_against_anchor() {
        let mut l = Labeler::default();
        l.prose("Results with 100% load on both CPUs (started script make-load twice)");
        l.prose("with c229828ca6bc62d (rcu: Throttle rcu_try_advance_all_cbs() execution)");
        assert_eq!(
            l.label().as_deref(),
            Some("Results with 100% load on both CPUs with c229828ca6bc62d")
        );
        l.prose("and with reverted c229828ca6bc62d (rcu: Throttle rcu_try_advance_all_cbs()");
        l.prose("execution)");
        assert_eq!(
            l.label().as_deref(),
            Some("Results with 100% load on both CPUs with reverted c229828ca6bc62d")
        );
        // No new prose: the label stays in force.
        assert_eq!(
            l.label().as_deref(),
            Some("Results with 100% load on both CPUs with reverted c229828ca6bc62d")
        );
    }

    #[test]
    fn a_heading_that_comes_back_is_read_in_its_section() {
        let mut l = Labeler::default();
        for (prose, want) in [
            ("openSUSE config:", "openSUSE config"),
            ("Patched:", "Patched"),
            ("allmodconfig:", "allmodconfig"),
            ("Patched:", "allmodconfig: Patched"),
        ] {
            l.prose(prose);
            assert_eq!(l.label().as_deref(), Some(want));
        }
        let mut l = Labeler::default();
        for prose in ["original:", "patched:", "original:", "patched:"] {
            l.prose(prose);
            assert_eq!(l.label().as_deref(), Some(prose.trim_end_matches(':')));
        }
    }

    /// Paragraphs from a small pool, headings and continuations coming back in sections
    /// of all kinds: the labels taken from the memo are the labels read afresh.
    #[test]
    fn remembered_labels_are_the_labels_read_again() {
        const POOL: [&str; 10] = [
            "Results with no load; with c229828ca6bc62d (rcu: Throttle)",
            "and with reverted c229828ca6bc62d",
            "Results with 100% load on one CPU with c229828ca6bc62d",
            "or with the other fix",
            "Patched:",
            // Another paragraph with the same label.
            "(Patched)",
            "allmodconfig:",
            "openSUSE config:",
            "This is a sentence.",
            "== original, no patched",
        ];
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..200 {
            let (mut memo, mut fresh) = (Labeler::default(), Labeler::default());
            fresh.memo_off = true;
            let mut texts = std::collections::HashMap::new();
            let mut ids = std::collections::HashMap::new();
            for step in 0..60 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                for l in [&mut memo, &mut fresh] {
                    match x % 8 {
                        0 => l.blank(),
                        1 => l.side_data(),
                        2 if x % 64 == 2 => l.set(Some("set".to_string())),
                        _ => l.prose(POOL[(x >> 8) as usize % POOL.len()]),
                    }
                    if x.is_multiple_of(3) {
                        l.blank();
                    }
                }
                if (x >> 20).is_multiple_of(2) {
                    let want = fresh.label();
                    let id = memo.label_id();
                    assert_eq!(id.map(|i| memo.name(i).to_string()), want, "step {step}");
                    // An id stands for one text throughout, and a text for one id.
                    if let (Some(i), Some(t)) = (id, &want) {
                        assert_eq!(texts.entry(i).or_insert_with(|| t.clone()), t);
                        assert_eq!(*ids.entry(t.clone()).or_insert(i), i);
                    }
                }
            }
        }
    }

    /// A line as the parsers strip it is already trimmed, whatever blanks (ASCII or not) and
    /// quoting it came with, so that both ways in (the line without its quoting, trimmed
    /// here, or stripped) read the same labels.
    #[test]
    fn stripped_lines_read_as_trimmed_ones() {
        let lines = [
            "> With this commit:",
            ">\t== original, no patched ==  ",
            "\u{a0}\u{2003}(without the patchset)\u{3000}",
            "  > >  Patched:\r",
            "and with reverted X \u{85}",
            ">",
            "  ",
            "---",
            "This is a sentence.",
            "\u{2003}",
        ];
        let (mut plain, mut stripped) = (Labeler::default(), Labeler::default());
        for (i, line) in lines.iter().cycle().take(40).enumerate() {
            let s = crate::lines::strip_line(line);
            assert_eq!(crate::lines::trim(s), s, "{line:?}");
            plain.prose(crate::lines::strip_mail(line));
            stripped.prose_stripped(s);
            if i % 3 == 2 {
                assert_eq!(plain.label(), stripped.label(), "{i}");
            }
        }
    }

    /// Only the last [`MAX_PENDING`] paragraphs before a block are read for its label, the
    /// buffers of older ones taking the newer ones', again and again.
    #[test]
    fn only_the_last_paragraphs_are_read() {
        let mut l = Labeler::default();
        let mut in_force = None;
        for round in 0..3 {
            l.prose("Old heading:");
            for i in 0..MAX_PENDING {
                l.prose(&format!("Sentence number {i} of round {round}."));
                l.blank();
            }
            // The old heading is gone: the label in force stays.
            assert_eq!(l.label(), in_force, "{round}");
            l.prose(&format!("Kept heading {round}:"));
            for i in 0..MAX_PENDING - 1 {
                l.prose(&format!("Sentence number {i}."));
                l.blank();
            }
            in_force = Some(format!("Kept heading {round}"));
            assert_eq!(l.label(), in_force);
        }
    }

    #[test]
    fn sub_headings_above_side_data_are_not_labels() {
        let mut l = Labeler::default();
        l.prose("current SLOB:");
        l.prose("memory usage:");
        l.side_data();
        l.prose("hackbench:");
        l.blank();
        l.side_data();
        assert_eq!(l.label().as_deref(), Some("current SLOB"));
    }
}
