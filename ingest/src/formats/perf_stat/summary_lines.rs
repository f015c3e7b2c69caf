//! The summary lines of a `perf stat` block read without the regex engine in the common case:
//! `<value> seconds time elapsed ( +- <pct>% )` (once per block, so once per few lines of a long
//! file of runs) and the `(<n> runs)` of the header. Each agrees with its regex, which still
//! reads anything unusual.

use std::sync::LazyLock;

use regex::Regex;

use super::{bare_number, strip_box};
use crate::lines::{find_str, is_space, other_bytes, skip_spaces};

static ELAPSED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(\S+)\s+(?:\+-\s*(\S+)\s+)?seconds time elapsed(?:\s+\(\s*\+-\s*([\d.]+)\s*%\s*\))?$",
    )
    .expect("valid regex")
});

pub(super) const ELAPSED_WORDS: &str = "seconds time elapsed";

/// [`ELAPSED`]'s captures (value, spread, spread in percent): the common ASCII line without
/// the regex engine, anything else through the regex itself.
pub(super) fn elapsed(line: &str) -> Option<[Option<&str>; 3]> {
    // The pattern ends the line with its words or with the `)` of the spread in percent: any
    // other line (most prose) is refused by its last byte.
    if !(line.ends_with(')') || line.ends_with("elapsed")) {
        return None;
    }
    // A line read to its end holds only ASCII outside its two tokens: when those are ASCII
    // too, the whole line is, and the reading is the regex's.
    match elapsed_ascii(line) {
        Some(c) if c[..2].iter().flatten().all(|t| t.is_ascii()) => return Some(c),
        None if line.is_ascii() => return None,
        _ => {}
    }
    find_str(line, ELAPSED_WORDS)?;
    let c = ELAPSED.captures(line)?;
    Some([1, 2, 3].map(|i| c.get(i).map(|m| m.as_str())))
}

/// [`ReadAhead`](crate::lines::ReadAhead) tags: the line is not a summary line, or it is one
/// and its values follow (the elapsed time, then its spread and its spread in percent, NaN when
/// not given).
pub(super) const NOT_ELAPSED: u32 = 1;
pub(super) const ELAPSED_READ: u32 = 2;

/// The summary line (`24.536050899 seconds time elapsed ( +- 0.24% )`) read on the thread that
/// cuts the input: matching it and reading its numbers are a third of the parser's work on a
/// file of `--repeat` summaries. Only lines that start with a digit, as perf prints it, are
/// tried: trying every line would cost that thread more than it saves the parser. Any other
/// line, and a number that does not read (which the parser reports), is left to the parser
/// (tag 0).
pub(super) fn read_elapsed(line: &str, values: &mut Vec<f64>) -> u32 {
    let line = strip_box(line);
    if !line.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        return 0;
    }
    let Some(c) = elapsed(line) else {
        return NOT_ELAPSED;
    };
    let mut read = [f64::NAN; 3];
    for (v, t) in read.iter_mut().zip(c) {
        if let Some(t) = t {
            match bare_number(t) {
                Some(x) if !x.is_nan() => *v = x,
                _ => return 0,
            }
        }
    }
    values.extend_from_slice(&read);
    ELAPSED_READ
}

/// The end of the run of bytes from `i` that `f` accepts.
fn run(b: &[u8], mut i: usize, f: impl Fn(u8) -> bool) -> usize {
    while i < b.len() && f(b[i]) {
        i += 1;
    }
    i
}

/// [`run`] of spaces: perf pads the summary line with dozens of them, skipped eight at a time
/// to the first byte that is not a plain space, byte by byte from there if it is another space.
fn spaces(b: &[u8], i: usize) -> usize {
    let i = skip_spaces(b, i);
    if b.get(i).is_some_and(|&c| is_space(c)) {
        run(b, i, is_space)
    } else {
        i
    }
}

/// The end of the token (a run of bytes that are not spaces) from `i`: printable ASCII eight
/// bytes at a time, byte by byte from the first other byte on (mostly the space that ends it).
fn token_end(b: &[u8], mut i: usize) -> usize {
    while let Some(w) = b.get(i..i + 8) {
        let other = other_bytes(u64::from_le_bytes(w.try_into().unwrap_or_default()), []);
        if other != 0 {
            i += other.trailing_zeros() as usize / 8;
            break;
        }
        i += 8;
    }
    run(b, i, |c| !is_space(c))
}

/// [`ELAPSED`] on an ASCII line, where `\s` is one of the six ASCII spaces and `\d` a digit.
fn elapsed_ascii(line: &str) -> Option<[Option<&str>; 3]> {
    let b = line.as_bytes();
    let v_end = token_end(b, 0);
    let mut i = spaces(b, v_end);
    if v_end == 0 || i == v_end {
        return None;
    }
    let value = &line[..v_end];
    let mut spread = None;
    if b[i..].starts_with(b"+-") {
        let s_start = spaces(b, i + 2);
        let s_end = token_end(b, s_start);
        i = spaces(b, s_end);
        if s_end == s_start || i == s_end {
            return None;
        }
        spread = Some(&line[s_start..s_end]);
    }
    if !b[i..].starts_with(ELAPSED_WORDS.as_bytes()) {
        return None;
    }
    i += ELAPSED_WORDS.len();
    if i == b.len() {
        return Some([Some(value), spread, None]);
    }
    // `( +- 0.24% )`
    let j = spaces(b, i);
    if j == i || b.get(j) != Some(&b'(') {
        return None;
    }
    let j = spaces(b, j + 1);
    if !b[j..].starts_with(b"+-") {
        return None;
    }
    let p_start = spaces(b, j + 2);
    let p_end = run(b, p_start, |c: u8| c.is_ascii_digit() || c == b'.');
    let j = spaces(b, p_end);
    if p_end == p_start || b.get(j) != Some(&b'%') {
        return None;
    }
    let j = spaces(b, j + 1);
    (b.get(j) == Some(&b')') && j + 1 == b.len())
        .then(|| [Some(value), spread, Some(&line[p_start..p_end])])
}

static RUNS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\((\d+) runs\)\s*:?\s*$").expect("valid regex"));
/// Where [`RUNS`] matches and its count: read back from the end of the line without the
/// regex engine while the bytes are ASCII; a byte that is not (maybe a Unicode space or digit,
/// which `\s` and `\d` take) leaves the line to the regex itself.
pub(super) fn runs(rest: &str) -> Option<(usize, &str)> {
    let b = rest.as_bytes();
    let regex = || {
        let c = RUNS.captures(rest)?;
        Some((c.get(0)?.start(), c.get(1)?.as_str()))
    };
    // `(N runs)` then only spaces and at most one `:` to the end.
    let before_spaces = |mut e: usize| {
        while e > 0 && is_space(b[e - 1]) {
            e -= 1;
        }
        e
    };
    let mut end = before_spaces(b.len());
    if end > 0 && b[end - 1] == b':' {
        end = before_spaces(end - 1);
    }
    let Some(body) = b[..end].strip_suffix(b" runs)") else {
        return if end > 0 && !b[end - 1].is_ascii() {
            regex()
        } else {
            None
        };
    };
    let mut open = body.len();
    while open > 0 && body[open - 1].is_ascii_digit() {
        open -= 1;
    }
    match open.checked_sub(1).map(|o| body[o]) {
        Some(b'(') if open < body.len() => Some((open - 1, &rest[open..body.len()])),
        Some(c) if !c.is_ascii() => regex(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elapsed_forms() {
        let c = ELAPSED
            .captures("80.10 +- 1.22 seconds time elapsed  ( +-  1.53% )")
            .unwrap();
        assert_eq!((&c[1], &c[2], &c[3]), ("80.10", "1.22", "1.53"));
        let c = ELAPSED
            .captures("52.680621973  seconds time elapsed   ( +-   0.689% )")
            .unwrap();
        assert_eq!(&c[3], "0.689");
        assert!(c.get(2).is_none());
    }

    #[test]
    fn runs_without_the_regex_agrees_with_it() {
        for l in [
            "'hackbench 20 thread 20000' (10 runs):",
            "'make' (5 runs)",
            "'x' (5 runs) : ",
            "'x' (5 runs)::",
            "'x' (runs)",
            "'x' (5 runs) y",
            "'x' ((3 runs)",
            "'x' (1 2 runs)",
            "(7 runs)\t:\x0b",
            "'x'",
            // Not ASCII: before the tail (read as bytes), or where the regex's Unicode `\s`
            // and `\d` decide.
            "'caf\u{e9}' (5 runs):",
            "'x' (\u{665} runs)",
            "'x' (1\u{665} runs)",
            "'x' (5 runs)\u{a0}",
            "'x' (5 runs)\u{a0}:\u{2003}",
            "'x' (5 runs)\u{e9}",
            "\u{e9}(5 runs)",
            "(5 runs)",
            " runs)",
        ] {
            let re = RUNS
                .captures(l)
                .map(|c| (c.get(0).unwrap().start(), c.get(1).unwrap().as_str()));
            assert_eq!(runs(l), re, "{l:?}");
        }
    }

    #[test]
    fn elapsed_without_the_regex_agrees_with_it() {
        let lines = [
            "80.10 +- 1.22 seconds time elapsed  ( +-  1.53% )",
            "52.680621973  seconds time elapsed   ( +-   0.689% )",
            "24.536050899 seconds time elapsed",
            "1.0 +-0.5 seconds time elapsed (+-1%)",
            "1.0\t+-\t0.5\tseconds time elapsed\t(\t+-\t1.%\t)",
            "1.0 seconds time elapsed ( +- 1 % ) x",
            "1.0 seconds time elapsed ( +- % )",
            "1.0 seconds time elapsed (+- 1%",
            "1.0 seconds time elapsed x",
            "1.0 +- seconds time elapsed",
            "1.0+- 2 seconds time elapsed",
            " 1.0 seconds time elapsed",
            "1.0  seconds  time elapsed",
            "*1.39* seconds time elapsed",
            "1.0 \x0b seconds time elapsed\x0c(\r+-\n2.5%)",
            "seconds time elapsed",
            "1.0                 seconds time elapsed                    ( +-  0.5% )",
            "1.0        \t        seconds time elapsed        \t(        +-        2%        )",
            "1.0 +-         2         seconds time elapsed",
            "1.0                seconds time elapsed                         x",
            "1.0 seconds time elapsed ",
            "1.0 seconds time elapsed\n",
            "1.0 seconds time elapsed ( +- 1% ) ",
            "1.0 seconds time elapsed ( +- 1% )\t",
            "results (in seconds)",
            "the time elapsed",
        ];
        for l in lines {
            let re = ELAPSED
                .captures(l)
                .map(|c| [1, 2, 3].map(|i| c.get(i).map(|m| m.as_str())));
            assert_eq!(elapsed_ascii(l), re, "{l:?}");
            assert_eq!(elapsed(l), re, "{l:?}");
        }
        for l in [
            "1.0\u{a0}seconds time elapsed",
            "1.0 seconds time elapsed\u{2003}( +- 1% )",
            "é1.0 seconds time elapsed",
            "1.0 +- 2é seconds time elapsed ( +- 1% )",
            "1.0 seconds time elapsed é",
            "durée 1.0 seconds time elapsed",
            "1.0 seconds time elapsed\u{2003}",
            "1.0 seconds time elapsed ( +- 1% )\u{a0}",
            "1.0 seconds time elapsed ( +- 1% \u{ff09}",
        ] {
            let re = ELAPSED
                .captures(l)
                .map(|c| [1, 2, 3].map(|i| c.get(i).map(|m| m.as_str())));
            assert_eq!(elapsed(l), re, "{l:?}");
        }
    }
}
