//! Unrelated `Key: <number> [unit]` lines (`Slab: 7936 kB`), read without the regex engine
//! when ASCII; the regex still reads anything else.

use std::sync::LazyLock;

use regex::Regex;

use crate::lines::is_space;

static KEY_VALUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^([A-Za-z][\w ()/.-]*?):\s+(-?[\d.,]+(?:\s*\S+)?)$").expect("valid regex")
});

/// [`KEY_VALUE`]'s captures (key, value).
pub(super) fn key_value(line: &str) -> Option<(&str, &str)> {
    if !key_value_like(line) {
        return None;
    }
    if line.is_ascii() {
        return key_value_ascii(line);
    }
    let c = KEY_VALUE.captures(line)?;
    Some((c.get(1)?.as_str(), c.get(2)?.as_str()))
}

/// [`KEY_VALUE`] on an ASCII line. The key holds no `:`, so it ends at the first one; the
/// value is the rest of the line: a number (`-?[\d.,]+`, the longest run), then nothing, or
/// spaces and one word that ends the line.
fn key_value_ascii(line: &str) -> Option<(&str, &str)> {
    let b = line.as_bytes();
    if !b.first()?.is_ascii_alphabetic() {
        return None;
    }
    let key_char = |c: u8| {
        c.is_ascii_alphanumeric() || matches!(c, b'_' | b' ' | b'(' | b')' | b'/' | b'.' | b'-')
    };
    let run = |mut i: usize, f: &dyn Fn(u8) -> bool| {
        while i < b.len() && f(b[i]) {
            i += 1;
        }
        i
    };
    let colon = run(1, &key_char);
    if b.get(colon) != Some(&b':') {
        return None;
    }
    let v = run(colon + 1, &is_space);
    if v == colon + 1 {
        return None;
    }
    let d = v + usize::from(b.get(v) == Some(&b'-'));
    let n = run(d, &|c: u8| c.is_ascii_digit() || c == b'.' || c == b',');
    if n == d {
        return None;
    }
    if n < b.len() {
        let w = run(n, &is_space);
        if w == b.len() || b[w..].iter().any(|&c| is_space(c)) {
            return None;
        }
    }
    Some((&line[..colon], &line[v..]))
}

/// What [`KEY_VALUE`] needs before it can match: a letter first, and after the first `:`
/// (its key holds none) a space, then a sign, digit, `.` or `,`. A non-ASCII byte where
/// these are looked for may be a Unicode space or digit: the regex decides.
fn key_value_like(line: &str) -> bool {
    let b = line.as_bytes();
    if !b.first().is_some_and(u8::is_ascii_alphabetic) {
        return false;
    }
    let Some(colon) = memchr::memchr(b':', b) else {
        return false;
    };
    let rest = &b[colon + 1..];
    match rest.iter().position(|&c| !is_space(c)) {
        None => false,
        Some(0) => !rest[0].is_ascii(),
        Some(j) => {
            let c = rest[j];
            c.is_ascii_digit() || matches!(c, b'-' | b'.' | b',') || !c.is_ascii()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regex(l: &str) -> Option<(&str, &str)> {
        let c = KEY_VALUE.captures(l)?;
        Some((c.get(1)?.as_str(), c.get(2)?.as_str()))
    }

    #[test]
    fn key_value_without_the_regex_agrees_with_it() {
        for l in [
            "Slab: 7936 kB",
            " Memory:           256G evenly split between nodes",
            "Memory:           256G evenly split between nodes",
            "Microcode:        0xb00002e",
            "L3 size:           25MB",
            "L3 size:          16 * 16MB",
            "intel_pstate/no_turbo: 1",
            "cpufreq/boost:    0",
            "CPU:              2 nodes * 10 cores/node * 2 threads/core",
            "MIME-Version: 1.0",
            "Time: -1.5 s",
            "Time: - 1.5",
            "a:1",
            "a: ",
            "a: 1 ",
            "a: 1 x y",
            "a: 1\tx",
            "a: 1,2.3x",
            "a (b): 1",
            "a:b: 1",
            "1a: 1",
            "a\u{a0}: 1",
            "a: \u{a0}1",
            "a: 1 é",
            "é: 1",
            "a: ١",
        ] {
            assert_eq!(key_value(l), regex(l), "{l:?}");
        }
        // Lines over a small alphabet that exercises every branch.
        let alphabet = b"aZ9_ ()/.-:,\t1%x#";
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..50_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = 1 + (x % 14) as usize;
            let mut l = String::from(if x & (1 << 60) == 0 { "k" } else { "K9" });
            for i in 0..len {
                l.push(char::from(
                    alphabet[((x >> (i * 4)) % alphabet.len() as u64) as usize],
                ));
            }
            assert_eq!(key_value(&l), regex(&l), "{l:?}");
        }
    }
}
