//! The last few texts a parser read, each with what it made of them: logs repeat their
//! headings, and reading one again costs more than comparing it.

/// Texts remembered, and the longest remembered: headings are short.
const SLOTS: usize = 4;
const LONGEST: usize = 160;

/// A ring of the last few distinct (text, value) pairs remembered, in buffers kept across
/// lines.
#[derive(Debug)]
pub(crate) struct Recent<V> {
    slots: [(String, V); SLOTS],
    /// The slot the next pair goes to.
    next: usize,
    /// Nothing held (to test a memo against the reading it saves).
    #[cfg(test)]
    pub(crate) off: bool,
}

impl<V: Default> Default for Recent<V> {
    fn default() -> Self {
        Recent {
            slots: Default::default(),
            next: 0,
            #[cfg(test)]
            off: false,
        }
    }
}

impl<V: Copy + PartialEq> Recent<V> {
    /// The value remembered with `text` that `wanted` accepts, if any.
    #[inline]
    pub(crate) fn find(&self, text: &str, wanted: impl Fn(&V) -> bool) -> Option<V> {
        #[cfg(test)]
        if self.off {
            return None;
        }
        // An empty slot never matches: the texts remembered are never empty.
        self.slots
            .iter()
            .find(|(t, v)| !t.is_empty() && t == text && wanted(v))
            .map(|&(_, v)| v)
    }

    /// Remembers `text` (not empty, not longer than a heading) with `value`, in place of the
    /// oldest pair; a pair already held is not held twice.
    pub(crate) fn remember(&mut self, text: &str, value: V) {
        if text.is_empty() || text.len() > LONGEST || self.find(text, |v| *v == value).is_some() {
            return;
        }
        let slot = &mut self.slots[self.next];
        slot.0.clear();
        slot.0.push_str(text);
        slot.1 = value;
        self.next = (self.next + 1) % SLOTS;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_the_last_four_short_pairs() {
        let mut m = Recent::<u8>::default();
        assert_eq!(m.find("a", |_| true), None);
        for (l, v) in [("a", 1), ("b", 2), ("c", 3), ("d", 4)] {
            m.remember(l, v);
        }
        m.remember("b", 2);
        assert_eq!(m.find("d", |_| true), Some(4));
        assert_eq!(m.find("b", |v| *v == 2), Some(2));
        assert_eq!(m.find("b", |v| *v == 3), None);
        m.remember("e", 5);
        assert_eq!(m.find("a", |_| true), None);
        assert_eq!(m.find("e", |_| true), Some(5));
        assert_eq!(m.find("b", |_| true), Some(2));
        let long = "x".repeat(LONGEST + 1);
        m.remember(&long, 6);
        assert_eq!(m.find(&long, |_| true), None);
        assert_eq!(m.find("b", |_| true), Some(2));
        m.remember("", 7);
        assert_eq!(m.find("", |_| true), None);
    }
}
