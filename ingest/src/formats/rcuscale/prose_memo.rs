//! Lines lately read as plain prose, so that a log's repeated headings are not told from
//! every other kind of line again each time they come.

/// Lines remembered, and the longest remembered: headings are short.
const LINES: usize = 4;
const LONGEST: usize = 160;

/// The last few distinct lines that the general reading took for prose and nothing else (no
/// console prefix, no measurement, no `k = v`, no kvm.sh command), in a ring of buffers kept
/// across lines.
#[derive(Default)]
pub(super) struct ProseMemo {
    lines: [String; LINES],
    /// The slot the next line goes to.
    next: usize,
    /// Nothing held (to test the memo against the checks it saves).
    #[cfg(test)]
    pub(super) off: bool,
}

impl ProseMemo {
    /// Whether `line` is one of the remembered lines.
    #[inline]
    pub(super) fn holds(&self, line: &str) -> bool {
        #[cfg(test)]
        if self.off {
            return false;
        }
        // An empty slot never matches: the lines given are never empty.
        self.lines.iter().any(|l| l == line)
    }

    /// Remembers `line` (not empty), in place of the oldest.
    pub(super) fn remember(&mut self, line: &str) {
        if line.is_empty() || line.len() > LONGEST || self.holds(line) {
            return;
        }
        let slot = &mut self.lines[self.next];
        slot.clear();
        slot.push_str(line);
        self.next = (self.next + 1) % LINES;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_the_last_four_short_lines() {
        let mut m = ProseMemo::default();
        assert!(!m.holds("a"));
        for l in ["a", "b", "c", "d"] {
            m.remember(l);
        }
        m.remember("b");
        assert!(["a", "b", "c", "d"].iter().all(|l| m.holds(l)));
        m.remember("e");
        assert!(!m.holds("a") && m.holds("e") && m.holds("b"));
        let long = "x".repeat(LONGEST + 1);
        m.remember(&long);
        assert!(!m.holds(&long) && m.holds("b"));
        m.remember("");
        assert!(!m.holds(""));
    }
}
