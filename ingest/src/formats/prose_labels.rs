//! Block labels read from the prose around console-log data (rcuscale, refscale): the
//! heading before a run of data lines, and the section a pair of headings opens.

use super::blocks::set_str;
use super::recent::Recent;
use crate::lines::words;

/// Tracks prose between blocks so that a block can be labelled by the author's words before it.
///
/// A paragraph (lines without a blank or data line between them) whose last line ends with `:`
/// (or a `== label ==` line) becomes the label of the data that follows. Lines are joined
/// backwards while parentheses are unbalanced, so a label wrapped by the mailer stays whole.
///
/// Two headings before one block (`with SLAB:`, blank, `with Ulad's patch:`) are a section and
/// a label: the section stays in force and prefixes the labels after it (`with SLAB: with
/// Ulad's patch`), so that the same label in two sections does not pool. Within a section a
/// short line without `:` alone in its paragraph is a label too (`with Ulad's patch`).
#[derive(Debug, Default)]
pub(crate) struct Prose {
    para: Para,
    /// The paragraph before `para`, when both came after the last data.
    prev: Para,
    open: bool,
    fresh: bool,
    /// `para` ends with a line of dots (an elision in a posted log), which no reading takes
    /// for a label: see [`Prose::data`].
    dots: bool,
    label: Option<String>,
    section: Option<String>,
    /// Paragraphs of one line read lately: whether a section was in force, and where in the
    /// text the label they gave lies, if they gave one.
    read: Recent<(bool, Option<(usize, usize)>)>,
}

/// Lines of a paragraph kept for a label: labels are short, prose can be long.
const PARA_KEEP: usize = 8;

/// The last lines of a paragraph, trimmed, in one buffer joined by one space (a heading is
/// a run of last lines joined so), with where each line starts.
#[derive(Debug, Default)]
struct Para {
    text: String,
    starts: Vec<usize>,
}

impl Para {
    fn clear(&mut self) {
        self.text.clear();
        self.starts.clear();
    }

    fn push(&mut self, line: &str) {
        if self.starts.len() == PARA_KEEP {
            let cut = self.starts[1];
            self.text.drain(..cut);
            self.starts.remove(0);
            for s in &mut self.starts {
                *s -= cut;
            }
        }
        if !self.starts.is_empty() {
            self.text.push(' ');
        }
        self.starts.push(self.text.len());
        self.text.push_str(line);
    }

    fn len(&self) -> usize {
        self.starts.len()
    }

    fn line(&self, i: usize) -> &str {
        let end = match self.starts.get(i + 1) {
            Some(next) => next - 1,
            None => self.text.len(),
        };
        &self.text[self.starts[i]..end]
    }

    fn last(&self) -> Option<&str> {
        self.len().checked_sub(1).map(|i| self.line(i))
    }

    /// Lines `i..` joined by one space.
    fn from(&self, i: usize) -> &str {
        &self.text[self.starts[i]..]
    }
}

impl Prose {
    /// A line of prose.
    pub(crate) fn text(&mut self, line: &str) {
        if !self.open {
            if self.fresh {
                std::mem::swap(&mut self.prev, &mut self.para);
            } else {
                self.prev.clear();
            }
            self.para.clear();
        }
        self.para.push(trim(line));
        self.open = true;
        self.fresh = true;
        self.dots = false;
    }

    /// [`Prose::text`] of a line of dots alone (`......`), which the caller has checked.
    pub(crate) fn text_dots(&mut self, line: &str) {
        debug_assert!(!line.is_empty() && line.bytes().all(|b| b == b'.'));
        self.text(line);
        self.dots = true;
    }

    /// A blank line: ends the paragraph.
    pub(crate) fn blank(&mut self) {
        self.open = false;
    }

    /// A data line: the prose seen since the last data (if it ends with `:`) becomes the label.
    /// Returns true when the label changed.
    #[inline]
    pub(crate) fn data(&mut self) -> bool {
        self.open = false;
        // Inlined: most data lines follow data, with no prose to read.
        if !self.fresh {
            return false;
        }
        // What `read_prose` comes to for a paragraph whose last line is dots: that line ends
        // with `.` and without `:`, so it is neither a heading nor a short label, and the
        // paragraph opens no section (its heading would end with `:`). A tenth of some
        // console logs' lines are dots, each run of them read before the next data line.
        if self.dots {
            self.fresh = false;
            self.prev.clear();
            return false;
        }
        self.read_prose()
    }

    fn read_prose(&mut self) -> bool {
        self.fresh = false;
        // A section is titled in a few words; a sentence ending with `:` introduces results.
        if self.prev.len() > 0
            && let Some(section) =
                heading(&self.prev).filter(|h| h.len() <= 40 && words(h).count() <= 6)
            && heading(&self.para).is_some()
        {
            set_str(&mut self.section, section);
        }
        self.prev.clear();
        let in_section = self.section.is_some();
        let l = if self.para.len() == 1 {
            // A label is a function of the paragraph and whether a section is in force.
            let text = self.para.text.as_str();
            match self.read.find(text, |&(s, _)| s == in_section) {
                Some((_, span)) => span.map(|(a, b)| &text[a..b]),
                None => {
                    let l = candidate(&self.para, in_section);
                    let span = l.map(|l| {
                        let a = l.as_ptr() as usize - text.as_ptr() as usize;
                        (a, a + l.len())
                    });
                    self.read.remember(text, (in_section, span));
                    l
                }
            }
        } else {
            candidate(&self.para, in_section)
        };
        let Some(l) = l else {
            return false;
        };
        let section = self.section.as_deref();
        let same = self.label.as_deref().is_some_and(|cur| match section {
            Some(sec) => cur.strip_prefix(sec).and_then(|r| r.strip_prefix(": ")) == Some(l),
            None => cur == l,
        });
        if same {
            return false;
        }
        let out = self.label.get_or_insert_with(String::new);
        out.clear();
        if let Some(sec) = section {
            out.push_str(sec);
            out.push_str(": ");
        }
        out.push_str(l);
        true
    }

    pub(crate) fn label(&self) -> Option<&str> {
        self.label.as_deref()
    }
}

fn candidate(para: &Para, in_section: bool) -> Option<&str> {
    let last = para.last()?;
    if last.len() > 4 && last.starts_with("==") && last.ends_with("==") {
        let l = last.trim_matches('=').trim();
        return (!l.is_empty()).then_some(l);
    }
    if !last.ends_with(':') {
        let short = para.len() == 1
            && last.len() <= 40
            && !last.starts_with('[')
            && !last.ends_with(['.', '!', '?', ')'])
            && words(last).count() <= 6;
        return (in_section && short).then_some(last);
    }
    heading(para)
}

/// The heading a paragraph ends with (`with SLAB:`), joined backwards while parentheses are
/// unbalanced so that a wrapped heading stays whole.
fn heading(para: &Para) -> Option<&str> {
    let last = para.last()?;
    if !last.ends_with(':') {
        return None;
    }
    let mut first = para.len() - 1;
    // A paragraph of one line is its heading whatever its parentheses: nothing to join.
    if para.len() > 1 {
        let mut balance = 0i32;
        for i in (0..para.len()).rev() {
            first = i;
            let l = para.line(i).as_bytes();
            if balance == 0 && find_byte(l, b')').is_none() {
                // Nothing to close: the heading is this line alone.
                break;
            }
            balance += l
                .iter()
                .map(|&b| i32::from(b == b')') - i32::from(b == b'('))
                .sum::<i32>();
            if balance <= 0 {
                break;
            }
        }
    }
    let label = trim(para.from(first));
    let label = trim(trim_bytes(label, b':', false));
    let label = trim(trim_bytes(label, b'=', true));
    (!label.is_empty()).then_some(label)
}

/// Where `c` first is in `b`, eight bytes at a time: lines and headings are short, too short
/// for a vectorised search to pay for its setup.
#[inline]
pub(super) fn find_byte(b: &[u8], c: u8) -> Option<usize> {
    const LOW: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let pattern = LOW * u64::from(c);
    let mut chunks = b.chunks_exact(8);
    let mut at = 0;
    for chunk in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        let x = u64::from_le_bytes(w) ^ pattern;
        // The lowest byte flagged is the first zero byte of `x` (a borrow only runs upwards).
        let found = x.wrapping_sub(LOW) & !x & HIGH;
        if found != 0 {
            return Some(at + (found.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&x| x == c)
        .map(|i| at + i)
}

/// `str::trim`, without its char-by-char scan when both ends are visible ASCII.
fn trim(s: &str) -> &str {
    match (s.as_bytes().first(), s.as_bytes().last()) {
        (Some(a), Some(b)) if a.is_ascii_graphic() && b.is_ascii_graphic() => s,
        _ => s.trim(),
    }
}

/// `trim_end_matches(c)` (or `trim_matches(c)` with `start`) for an ASCII `c`, bytewise:
/// an ASCII byte is never part of a longer UTF-8 character.
fn trim_bytes(s: &str, c: u8, start: bool) -> &str {
    let b = s.as_bytes();
    let end = b.len() - b.iter().rev().take_while(|&&x| x == c).count();
    let begin = if start {
        b[..end].iter().take_while(|&&x| x == c).count()
    } else {
        0
    };
    &s[begin..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block(p: &mut Prose, lines: &[&str]) -> Option<String> {
        for l in lines {
            if l.is_empty() {
                p.blank();
            } else {
                p.text(l);
            }
        }
        p.data();
        p.label().map(str::to_string)
    }

    #[test]
    fn byte_search_as_position() {
        let text = b"abc)defghij)klmnopq\x80\xff)rstuvwxyz0123456789";
        for start in 0..text.len() {
            for end in start..=text.len() {
                let hay = &text[start..end];
                for c in [b')', b'a', b'z', b'9', 0x80, 0xff, 0x7f, 0] {
                    assert_eq!(
                        find_byte(hay, c),
                        hay.iter().position(|&x| x == c),
                        "{start}..{end} {c}"
                    );
                }
            }
        }
    }

    #[test]
    fn sections_keep_the_same_label_apart() {
        let mut p = Prose::default();
        let slab = block(&mut p, &["with SLAB:", "", "with patch:"]);
        assert_eq!(slab.as_deref(), Some("with SLAB: with patch"));
        let l = block(&mut p, &["", "without patch:"]);
        assert_eq!(l.as_deref(), Some("with SLAB: without patch"));
        let l = block(&mut p, &["", "with SLUB:", "", "without patch:"]);
        assert_eq!(l.as_deref(), Some("with SLUB: without patch"));
        // No colon, alone in its paragraph, inside a section.
        let l = block(&mut p, &["", "", "with patch"]);
        assert_eq!(l.as_deref(), Some("with SLUB: with patch"));
    }

    /// Headings, short lines and a wrapped heading: what the sequences below are drawn from,
    /// with the lines each test is about.
    const LINES: [&str; 6] = [
        "with SLAB:",
        "with patch:",
        "with patch",
        "== base ==",
        "(wrapped",
        "heading):",
    ];

    /// Every sequence of five lines drawn from `pool` (`""` is a blank line).
    fn sequences<'a>(pool: &'a [&'a str]) -> impl Iterator<Item = Vec<&'a str>> + 'a {
        let n = pool.len();
        (0..n.pow(5)).map(move |seq| (0..5).map(|k| pool[seq / n.pow(k) % n]).collect())
    }

    /// A line of prose, or a blank.
    fn give(p: &mut Prose, line: &str) {
        if line.is_empty() {
            p.blank();
        } else {
            p.text(line);
        }
    }

    /// A line of dots given as such reads as the same line given as prose: every sequence of
    /// five lines drawn from headings, short lines, dots and blanks, each ended by a data
    /// line, repeated so that what a block leaves behind meets the next.
    #[test]
    fn dots_read_as_prose_does() {
        let pool = [&LINES[..], &["......", ".", ""]].concat();
        let mut runs = 0;
        for lines in sequences(&pool) {
            let (mut plain, mut dots) = (Prose::default(), Prose::default());
            for round in 0..3 {
                for l in &lines {
                    give(&mut plain, l);
                    if !l.is_empty() && l.bytes().all(|b| b == b'.') {
                        dots.text_dots(l);
                    } else {
                        give(&mut dots, l);
                    }
                }
                assert_eq!(plain.data(), dots.data(), "{lines:?} round {round}");
                assert_eq!(plain.label(), dots.label(), "{lines:?} round {round}");
                assert_eq!(plain.section, dots.section, "{lines:?} round {round}");
                runs += 1;
            }
        }
        assert_eq!(runs, 3 * pool.len().pow(5));
    }

    /// Paragraphs of one line read again give what the readings remembered: every sequence
    /// of five lines drawn from headings, short lines, sentences, blanks and data lines,
    /// ended by a data line, read five times over, with the readings on and off.
    #[test]
    fn remembered_readings_give_what_reading_gives() {
        let pool = [&LINES[..], &["A sentence.", "", "DATA"]].concat();
        let mut hits = 0;
        for lines in sequences(&pool) {
            let mut on = Prose::default();
            let mut off = Prose::default();
            off.read.off = true;
            for round in 0..5 {
                for l in &lines {
                    if *l == "DATA" {
                        assert_eq!(on.data(), off.data(), "{lines:?} round {round}");
                        continue;
                    }
                    give(&mut on, l);
                    give(&mut off, l);
                }
                // A reading taken from the memo, at the data line below.
                let para = on.para.len();
                let in_section = on.section.is_some();
                hits += usize::from(
                    on.fresh
                        && para == 1
                        && on
                            .read
                            .find(&on.para.text, |&(s, _)| s == in_section)
                            .is_some(),
                );
                assert_eq!(on.data(), off.data(), "{lines:?} round {round}");
                assert_eq!(on.label(), off.label(), "{lines:?} round {round}");
                assert_eq!(on.section, off.section, "{lines:?} round {round}");
            }
        }
        assert!(hits > 10_000, "{hits}");
    }

    #[test]
    fn an_introduction_is_not_a_section_and_no_colon_needs_one() {
        let mut p = Prose::default();
        let intro =
            "Other comparisons between RCU and shazptr, the rcuscale results (using kvm.sh):";
        assert_eq!(block(&mut p, &[intro, "", "RCU:"]).as_deref(), Some("RCU"));
        let mut p = Prose::default();
        assert_eq!(block(&mut p, &["with patch"]), None);
    }
}
