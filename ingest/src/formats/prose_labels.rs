//! Block labels read from the prose around console-log data (rcuscale, refscale): the
//! heading before a run of data lines, and the section a pair of headings opens.

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
    para: Vec<String>,
    /// The paragraph before `para`, when both came after the last data.
    prev: Vec<String>,
    open: bool,
    fresh: bool,
    label: Option<String>,
    section: Option<String>,
}

/// Lines of a paragraph kept for a label: labels are short, prose can be long.
const PARA_KEEP: usize = 8;

impl Prose {
    /// A line of prose.
    pub(crate) fn text(&mut self, line: &str) {
        if !self.open {
            if self.fresh {
                self.prev = std::mem::take(&mut self.para);
            } else {
                self.prev.clear();
            }
            self.para.clear();
        }
        if self.para.len() == PARA_KEEP {
            self.para.remove(0);
        }
        self.para.push(line.trim().to_string());
        self.open = true;
        self.fresh = true;
    }

    /// A blank line: ends the paragraph.
    pub(crate) fn blank(&mut self) {
        self.open = false;
    }

    /// A data line: the prose seen since the last data (if it ends with `:`) becomes the label.
    /// Returns true when the label changed.
    pub(crate) fn data(&mut self) -> bool {
        self.open = false;
        if !self.fresh {
            return false;
        }
        self.fresh = false;
        let prev = std::mem::take(&mut self.prev);
        // A section is titled in a few words; a sentence ending with `:` introduces results.
        if let Some(section) = heading(&prev).filter(|h| h.len() <= 40 && words(h).count() <= 6)
            && heading(&self.para).is_some()
        {
            self.section = Some(section);
        }
        let found = self.candidate().map(|l| match &self.section {
            Some(sec) => format!("{sec}: {l}"),
            None => l,
        });
        match found {
            Some(l) if self.label.as_deref() != Some(l.as_str()) => {
                self.label = Some(l);
                true
            }
            _ => false,
        }
    }

    pub(crate) fn label(&self) -> Option<&str> {
        self.label.as_deref()
    }

    fn candidate(&self) -> Option<String> {
        let last = self.para.last()?;
        if last.len() > 4 && last.starts_with("==") && last.ends_with("==") {
            let l = last.trim_matches('=').trim();
            return (!l.is_empty()).then(|| l.to_string());
        }
        if !last.ends_with(':') {
            let short = self.para.len() == 1
                && last.len() <= 40
                && !last.starts_with('[')
                && !last.ends_with(['.', '!', '?', ')'])
                && words(last).count() <= 6;
            return (self.section.is_some() && short).then(|| last.to_string());
        }
        heading(&self.para)
    }
}

/// The heading a paragraph ends with (`with SLAB:`), joined backwards while parentheses are
/// unbalanced so that a wrapped heading stays whole.
fn heading(para: &[String]) -> Option<String> {
    let last = para.last()?;
    if !last.ends_with(':') {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    let mut balance = 0i32;
    for l in para.iter().rev() {
        parts.push(l);
        balance += l.matches(')').count() as i32 - l.matches('(').count() as i32;
        if balance <= 0 {
            break;
        }
    }
    parts.reverse();
    let joined = parts.join(" ");
    let label = joined
        .trim()
        .trim_end_matches(':')
        .trim()
        .trim_matches('=')
        .trim();
    (!label.is_empty()).then(|| label.to_string())
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
