//! Byte-level checks that let most lines skip a search: a line's colons, the first word, a
//! short prefix.

use super::super::prose_labels::find_byte;
use crate::lines::{is_space, split_once_str, words};

/// `hay.starts_with(prefix)`; a prefix of 8 to 16 bytes (`rcu-scale:`) is compared as two
/// overlapping words instead of through a `memcmp` call.
#[inline]
pub(super) fn starts_with(hay: &[u8], prefix: &[u8]) -> bool {
    let n = prefix.len();
    if !(8..=16).contains(&n) || hay.len() < n {
        return hay.starts_with(prefix);
    }
    let load = |b: &[u8], i: usize| -> u64 {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[i..i + 8]);
        u64::from_le_bytes(w)
    };
    load(hay, 0) == load(prefix, 0) && load(hay, n - 8) == load(prefix, n - 8)
}

/// Whether the first word of a line ends with `kvm.sh`; an ASCII first word is found without
/// [`words`].
pub(super) fn first_word_is_kvm_sh(d: &str) -> bool {
    let b = d.as_bytes();
    // Most lines have no `kvm.sh` at all, which a search for its first byte shows.
    let mut from = 0;
    loop {
        match find_byte(&b[from..], b'k') {
            Some(i) if b[from + i..].starts_with(b"kvm.sh") => break,
            Some(i) => from += i + 1,
            None => return false,
        }
    }
    match b.iter().position(|&c| is_space(c) || !c.is_ascii()) {
        Some(i) if i > 0 && b[i].is_ascii() => d[..i].ends_with("kvm.sh"),
        None => d.ends_with("kvm.sh"),
        Some(_) => words(d).next().is_some_and(|w| w.ends_with("kvm.sh")),
    }
}

/// Appends `v` in decimal, as `{v}` formats it.
pub(super) fn push_decimal(s: &mut String, mut v: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    s.extend(digits[i..].iter().map(|&d| char::from(d)));
}

/// Where a line's colons are: the labels searched for that end in `:` can only end at one.
#[derive(Clone, Copy)]
pub(super) struct Colons {
    first: Option<usize>,
    more: bool,
}

impl Colons {
    #[inline]
    pub(super) fn of(line: &str) -> Self {
        let b = line.as_bytes();
        let first = find_byte(b, b':');
        let more = first.is_some_and(|f| find_byte(&b[f + 1..], b':').is_some());
        Colons { first, more }
    }

    /// Whether the line has a colon at all.
    #[inline]
    pub(super) fn any(self) -> bool {
        self.first.is_some()
    }

    /// `split_once_str(line, needle)` for a needle ending in `:`, answered without a search
    /// when the line has one colon.
    #[inline]
    pub(super) fn split<'a>(self, line: &'a str, needle: &str) -> Option<(&'a str, &'a str)> {
        let f = self.first?;
        // The byte before the colon refuses most lines before a comparison of the whole.
        let before = needle.as_bytes()[needle.len() - 2];
        if f > 0 && line.as_bytes()[f - 1] == before && line[..=f].ends_with(needle) {
            // No colon comes before this one, so this is the first occurrence.
            return Some((&line[..f + 1 - needle.len()], &line[f + 1..]));
        }
        if self.more {
            split_once_str(line, needle)
        } else {
            None
        }
    }
}

/// Splits `<type>-scale:` / `<type>-perf:` off a console line, returning the type and the rest.
/// refscale's `<type>-ref-scale:` is not ours.
pub(super) fn split_prefix(line: &str) -> Option<(&str, &str)> {
    // A prefix is a run of type characters ending in `-scale` or `-perf` and then `:`: most
    // lines are refused by their first few bytes, without a search for either flag.
    let b = line.as_bytes();
    let end = b
        .iter()
        .position(|&c| !TYPE_CHAR[usize::from(c)])
        .unwrap_or(b.len());
    if b.get(end) != Some(&b':') {
        return None;
    }
    let run = &line[..end];
    if let Some(ty) = run.strip_suffix("-scale") {
        // No `:` comes before this one, so it is the first `-scale:` of the line.
        return (!ty.is_empty() && !ty.ends_with("-ref")).then(|| (ty, &line[end + 1..]));
    }
    if !run.ends_with("-perf") {
        return None;
    }
    // A `-scale:` further on decides first.
    crate::lines::split_console_prefix(line, &["-scale:", "-perf:"])
        .filter(|(ty, _)| !ty.ends_with("-ref"))
}

/// What ends the console prefix the parser remembers (`rcu-scale:`).
pub(super) const SCALE: &str = "-scale:";

/// The characters of a scale type (`rcu`, `srcu`, `rcu_tasks`, `tasks-tracing`), as a table:
/// one load per byte of the first word of every line that starts with a letter.
static TYPE_CHAR: [bool; 256] = {
    let mut t = [false; 256];
    let mut c = 0;
    while c < 256 {
        let b = c as u8;
        t[c] = b.is_ascii_alphanumeric() || b == b'-' || b == b'_';
        c += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_comparison() {
        let hay = b"rcu-scale:    0 writer-duration:";
        for n in 0..=20 {
            for (p, want) in [
                (hay[..n].to_vec(), true),
                ([&hay[..n], b"x"].concat(), false),
            ] {
                let mut q = p.clone();
                assert_eq!(starts_with(hay, &p), want && n <= hay.len(), "{n}");
                if let Some(first) = q.first_mut() {
                    *first ^= 1;
                    assert!(!starts_with(hay, &q), "{n}");
                }
            }
        }
        assert!(!starts_with(b"rcu-sca", b"rcu-scale:"));
    }

    #[test]
    fn decimals() {
        for v in [0, 7, 10, 133, u64::MAX] {
            let mut s = String::from("x");
            push_decimal(&mut s, v);
            assert_eq!(s, format!("x{v}"));
        }
    }
}
