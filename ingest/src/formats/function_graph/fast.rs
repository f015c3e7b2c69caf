//! The call line in the kernel's default layout, ` 0)   0.198 us    |      name();`, read in one
//! pass over its bytes. Anything else (other columns, tabs, marks glued to numbers, comments,
//! arguments) is left to the general path, which gives the same result for every line accepted
//! here: the CPU column is first, so neither time column can be present, and the first cell is
//! the DURATION cell.

use super::{Call, MAX_CPU, parse_call};
use crate::lines::{POW10, all_graphic, skip_spaces};

/// The columns of a call line.
pub(super) struct Split<'a> {
    pub cpu: usize,
    pub duration: Option<f64>,
    /// Spaces after the bar.
    pub indent: usize,
    /// The call column, trimmed; never empty.
    pub text: &'a str,
}

/// The columns of `raw` when it has the common shape: spaces, `N)`, spaces, an optional overhead
/// mark, a plain decimal with ` us`, spaces, `|`, and a call ending in `;`, `{` or `}`.
#[inline(always)]
pub(super) fn split(raw: &str) -> Option<Split<'_>> {
    let b = raw.as_bytes();
    let mut i = skip_spaces(b, 0);
    let start = i;
    let mut cpu = 0usize;
    while let Some(&c) = b.get(i)
        && c.is_ascii_digit()
    {
        if i - start == 6 {
            return None;
        }
        cpu = cpu * 10 + usize::from(c - b'0');
        i += 1;
    }
    if i == start || b.get(i) != Some(&b')') || cpu >= MAX_CPU {
        return None;
    }
    i = skip_spaces(b, i + 1);
    let duration = if b.get(i) == Some(&b'|') {
        None
    } else {
        if matches!(b.get(i)?, b'+' | b'!' | b'#' | b'*' | b'@' | b'$') {
            if b.get(i + 1) != Some(&b' ') {
                return None;
            }
            i = skip_spaces(b, i + 1);
        }
        let (us, end) = decimal(b, i)?;
        let j = skip_spaces(b, end);
        if j == end || b.get(j..j + 2) != Some(b"us") {
            return None;
        }
        i = skip_spaces(b, j + 2);
        if b.get(i) != Some(&b'|') {
            return None;
        }
        Some(us)
    };
    let call = i + 1;
    let first = skip_spaces(b, call);
    // The trims of the general path stop at these ASCII bytes just as here.
    if !b.get(first).is_some_and(u8::is_ascii_graphic) {
        return None;
    }
    // Trimmed as one `str` (a slice's ends would each be checked for a character boundary). A
    // vertical tab at the end, which the general path trims too, is left: the line goes there.
    let text = raw[first..].trim_ascii_end();
    if !matches!(text.as_bytes().last(), Some(b';' | b'{' | b'}')) {
        return None;
    }
    Some(Split {
        cpu,
        duration,
        indent: first - call,
        text,
    })
}

/// What [`parse_call`] returns, with `}`, `name();` and `name() {` recognised without a search.
#[inline(always)]
pub(super) fn call(text: &str) -> Option<Call<'_>> {
    let b = text.as_bytes();
    if b == b"}" {
        return Some(Call::Close(None));
    }
    // `strip_suffix` rather than a slice, whose end would be checked for a character boundary.
    let (name, open) = if let Some(name) = text.strip_suffix("();") {
        (name, false)
    } else if let Some(name) = text.strip_suffix("() {") {
        (name, true)
    } else {
        return parse_call(text);
    };
    // No space, `(` or `/` in the name: it is one word before the first `(`, with no comment;
    // and a line starting with `}` closes a call whatever follows.
    let bytes = name.as_bytes();
    if bytes.first().is_none_or(|&c| c == b'}') || !plain_name(bytes) {
        return parse_call(text);
    }
    Some(if open {
        Call::Open(name)
    } else {
        Call::Leaf(name)
    })
}

/// Every byte is printable ASCII other than `(` and `/`.
#[inline(always)]
fn plain_name(name: &[u8]) -> bool {
    all_graphic(name, *b"(/")
}

/// `digits[.digits]` at `b[i..]` with at most 15 digits: (value, end). The digits make an exact
/// integer and the power of ten is exact, so the one division rounds correctly, as a full
/// parser does. Its own loops rather than [`crate::lines::digits`] for each run: the limit is
/// on both runs together, and the two calls cost this thread 3% more instructions.
#[inline(always)]
fn decimal(b: &[u8], mut i: usize) -> Option<(f64, usize)> {
    let start = i;
    let mut mant = 0u64;
    // Wrapping: too many digits are refused below, after the loops.
    while let Some(&c) = b.get(i)
        && c.is_ascii_digit()
    {
        mant = mant.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
        i += 1;
    }
    let int = i - start;
    let mut frac = 0;
    if int > 0 && b.get(i) == Some(&b'.') {
        i += 1;
        let f = i;
        while let Some(&c) = b.get(i)
            && c.is_ascii_digit()
        {
            mant = mant.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
            i += 1;
        }
        frac = i - f;
        if frac == 0 {
            return None;
        }
    }
    if int == 0 || int + frac > 15 {
        return None;
    }
    Some((mant as f64 / POW10[frac], i))
}

#[cfg(test)]
mod tests {
    use super::super::Parser;
    use crate::model::{Ctx, Dataset};
    use proptest::prelude::*;

    /// Parses `text` line by line through the fast path or the general path alone.
    fn run(text: &str, slow_only: bool) -> (Result<(), String>, Dataset) {
        let mut ds = Dataset::new();
        let mut ctx = Ctx::new(&mut ds, None);
        let mut p = Parser {
            slow_only,
            ..Default::default()
        };
        let mut r = Ok(());
        for (n, line) in text.split('\n').enumerate() {
            ctx.line = n as u64 + 1;
            if let Err(e) = p.line(line, &mut ctx) {
                r = Err(format!("{e:?}"));
                break;
            }
        }
        if r.is_ok() {
            r = p.finish(&mut ctx).map_err(|e| format!("{e:?}"));
        }
        (r, ds)
    }

    fn piece(options: &'static [&'static str]) -> impl Strategy<Value = &'static str> {
        proptest::sample::select(options)
    }

    /// Lines near the common shape, each part in its usual form or a form that must leave the
    /// line to the general path.
    fn line() -> impl Strategy<Value = String> {
        let head = (
            piece(&[" ", " ", "", "  ", "\t", "> ", "\u{a0}"]),
            piece(&["", "", "", "", "360.774522 |  ", "0 us |  ", "360.| "]),
            piece(&[
                "0", "3", "12", "007", "65535", "65536", "999999", "1234567", "", "x",
            ]),
            piece(&[")", ")", ")", ")", "", " )", "):"]),
            piece(&["   ", " ", "   ", "", "\t", "  sh-4802   |  d..2 | "]),
            piece(&["", "", "+ ", "! ", "+", "# ", "$ ", "@", "* ", "? "]),
        );
        let duration = (
            piece(&[
                "0.198",
                "3594274",
                "1.",
                ".5",
                "1.2.3",
                "12,345.6",
                "0.000000000000001",
                "123456789012345",
                "1234567890123456",
                "99999.99999",
                "",
                "-1.0",
                "1e3",
                "0",
            ]),
            piece(&[" us", " us", "us", " ms", "  us    ", " usx", "", " us\t"]),
            piece(&["    |", "    |", "|", " |", "", "||", " x |"]),
        );
        let call = (
            piece(&["  ", "    ", "  ", "", " ", " \t", "\t", "\u{a0}"]),
            piece(&[
                "f();",
                "g();",
                "f() {",
                "do_sys_open() {",
                "}",
                "}",
                "}",
                "} /* f */",
                "} /* f = 0x0 */",
                "f(1) {",
                "a b();",
                "/* x */",
                "f ();",
                "f/x();",
                "f/*();",
                "é();",
                "f()\u{a0}{",
                "}\u{a0}",
                "==========>",
                "<==========",
                "f(); /* c */",
                "{",
                ";",
                "();",
                "() {",
                "a() {b();",
                "f(()",
                "}}",
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                "",
                "",
            ]),
            piece(&["", "", " ", "\u{a0}", "\t", "\r"]),
        );
        // The call text again, from a start, a name and an end.
        let parts = (
            piece(&["", "", "", "}", "{", "/*", " ", "\t", "#", "$"]),
            names(),
            ends(),
        );
        (head, duration, call, parts).prop_map(
            |((a, b, c, d, e, f), (g, h, i), (j, k, l), (m, n, o))| {
                let text = if k.is_empty() {
                    [m, n, o].concat()
                } else {
                    k.to_string()
                };
                [a, b, c, d, e, f, g, h, i, j, &text, l].concat()
            },
        )
    }

    /// Call names, odd ones among them, for the strategies below.
    fn names() -> impl Strategy<Value = &'static str> {
        piece(&[
            "f",
            "do_sys_open",
            "a b",
            "f/x",
            "f*",
            "é",
            "(",
            "}",
            "=>",
            "x.isra.0",
            "",
        ])
    }

    /// What follows a call's name.
    fn ends() -> impl Strategy<Value = &'static str> {
        piece(&[
            "();", "() {", "(1) {", "}", " /* f */", ";", "{", "*/", "", "();}", "() {;",
        ])
    }

    /// Call columns from a start, a name and an end, after the common columns.
    fn call_line() -> impl Strategy<Value = String> {
        (
            piece(&[
                " 0)   0.198 us    |  ",
                " 1)               |    ",
                " 2) + 12.5 us     |",
            ]),
            piece(&["", "", "", "}", "{", "/*", " ", "\t", "#", "$", "é"]),
            names(),
            ends(),
        )
            .prop_map(|(a, b, c, d)| [a, b, c, d].concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]
        #[test]
        fn calls_same_as_general_path(lines in proptest::collection::vec(call_line(), 1..30)) {
            let text = lines.join("\n");
            prop_assert_eq!(run(&text, false), run(&text, true), "{}", text);
        }
    }

    proptest! {
        #[test]
        fn plain_name_any_bytes(name in proptest::collection::vec(any::<u8>(), 0..40)) {
            let plain = name.iter().all(|&c| c.is_ascii_graphic() && c != b'(' && c != b'/');
            prop_assert_eq!(super::plain_name(&name), plain);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn same_as_general_path(lines in proptest::collection::vec(line(), 1..30)) {
            let text = lines.join("\n");
            prop_assert_eq!(run(&text, false), run(&text, true), "{}", text);
        }
    }

    #[test]
    fn fixtures_same_as_general_path() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/function_graph");
        for entry in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            assert_eq!(run(&text, false), run(&text, true));
        }
    }

    #[test]
    fn plain_names() {
        let plain = |c: u8| c.is_ascii_graphic() && c != b'(' && c != b'/';
        for c in 0..=255u8 {
            for pos in 0..9 {
                let mut name = *b"lock_irqsave";
                name[pos] = c;
                assert_eq!(
                    super::plain_name(&name[..pos + 3]),
                    plain(c),
                    "{c} at {pos}"
                );
                assert_eq!(super::plain_name(&name), plain(c), "{c} at {pos}");
            }
        }
    }

    #[test]
    fn decimals() {
        for t in [
            "0.198",
            "3594274",
            "0.00000000000001",
            "123456789012345",
            "99999.99999",
        ] {
            let (v, end) = super::decimal(t.as_bytes(), 0).unwrap();
            assert_eq!(end, t.len());
            assert_eq!(v.to_bits(), t.parse::<f64>().unwrap().to_bits(), "{t}");
        }
        for t in ["", ".5", "1.", "1234567890123456", "18446744073709551616"] {
            assert!(super::decimal(t.as_bytes(), 0).is_none(), "{t:?}");
        }
    }
}
