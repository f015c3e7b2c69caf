//! The values of `time` outputs: bash `XmY.YYYs` tokens, `time -p` seconds and GNU clocks.

use crate::error::ParseError;
use crate::lines::{POW10, POW10_INT, Words, digits, is_space, words};

/// `0m49.393s`, `0m49.359` (no `s`), `6m5,729s` (decimal comma), `-0m1.0s` (negative: refused
/// later with its line).
#[inline]
pub(super) fn bash_token(tok: &str) -> Option<f64> {
    match bash_token_fast(tok.as_bytes()) {
        Some(v) => Some(v),
        None => bash_token_general(tok),
    }
}

/// The values of a `real`/`user`/`sys` row, up to a note the author added after them in
/// parentheses (`1m8.900s (-25%)`): each token with its value when it is a common `XmY.YYYs`
/// (read in the same pass as the token is found), else None for the caller to read it.
#[derive(Clone)]
pub(super) enum Values<'a> {
    Ascii { s: &'a str, pos: usize },
    Other(Words<'a>),
}

impl<'a> Values<'a> {
    pub(super) fn new(row: &'a str) -> Self {
        if row.is_ascii() {
            Values::Ascii { s: row, pos: 0 }
        } else {
            Values::Other(words(row))
        }
    }
}

impl<'a> Iterator for Values<'a> {
    type Item = (&'a str, Option<f64>);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Values::Ascii { s, pos } => {
                let b = s.as_bytes();
                let mut i = *pos;
                while i < b.len() && is_space(b[i]) {
                    i += 1;
                }
                if i == b.len() || b[i] == b'(' {
                    *pos = b.len();
                    return None;
                }
                let start = i;
                if let Some((v, end)) = bash_token_at(b, start) {
                    *pos = end;
                    return Some((&s[start..end], Some(v)));
                }
                while i < b.len() && !is_space(b[i]) {
                    i += 1;
                }
                *pos = i;
                Some((&s[start..i], None))
            }
            Values::Other(w) => match w.next() {
                Some(t) if !t.starts_with('(') => Some((t, None)),
                _ => {
                    *self = Values::Ascii { s: "", pos: 0 };
                    None
                }
            },
        }
    }
}

/// The common `[-]XmY[.Z][s]` token (a `,` for the `.` too) with short digit runs, read as
/// integers: the seconds are `digits / 10^k`, both exact in a double, so one division gives
/// the double nearest the decimal text, as the general path does. None for anything else.
#[inline]
fn bash_token_fast(t: &[u8]) -> Option<f64> {
    bash_token_at(t, 0).and_then(|(v, end)| (end == t.len()).then_some(v))
}

/// [`bash_token_fast`] on the token that starts at `start` and ends before a space or at the
/// end of `b`: its value and its end.
#[inline(always)]
pub(super) fn bash_token_at(b: &[u8], start: usize) -> Option<(f64, usize)> {
    let neg = b.get(start) == Some(&b'-');
    let (i, min) = digits(b, start + usize::from(neg))?;
    if b.get(i) != Some(&b'm') {
        return None;
    }
    let (mut i, whole) = digits(b, i + 1)?;
    // Both are below 10^15: no overflow.
    let mut mant = min * 60 + whole;
    let mut k = 0;
    if matches!(b.get(i), Some(b'.' | b',')) {
        let (end, frac) = digits(b, i + 1)?;
        k = end - i - 1;
        mant = mant.checked_mul(POW10_INT[k])?.checked_add(frac)?;
        i = end;
    }
    if b.get(i) == Some(&b's') {
        i += 1;
    }
    if b.get(i).is_some_and(|&c| !is_space(c)) || mant >= 1 << 53 {
        return None;
    }
    let v = mant as f64 / POW10[k];
    Some((if neg { -v } else { v }, i))
}

/// [`bash_token`] for every token shape.
#[cold]
#[inline(never)]
fn bash_token_general(tok: &str) -> Option<f64> {
    let (neg, t) = match tok.strip_prefix('-') {
        Some(t) => (true, t),
        None => (false, tok),
    };
    let (min, sec) = t.split_once('m')?;
    let sec = sec.strip_suffix('s').unwrap_or(sec);
    // A locale with a decimal comma prints `6m5,729s`; seconds never need a thousands comma.
    let comma = if sec.contains(',') {
        std::borrow::Cow::Owned(sec.replacen(',', ".", 1))
    } else {
        std::borrow::Cow::Borrowed(sec)
    };
    let sec = &*comma;
    if min.is_empty() || !min.bytes().all(|b| b.is_ascii_digit()) || !is_decimal(sec) {
        return None;
    }
    let (whole, frac) = sec.split_once('.').unwrap_or((sec, ""));
    let (min, whole): (u64, u64) = (min.parse().ok()?, whole.parse().ok()?);
    let v = if min == 0 && !frac.is_empty() {
        // Under a minute the seconds as written are the value: no need to spell them out.
        fast_float2::parse(sec).ok()?
    } else {
        seconds(&[min, whole], frac)?
    };
    Some(if neg { -v } else { v })
}

/// `1.03` (`time -p`), with an optional sign.
pub(super) fn plain_seconds(tok: &str) -> Option<f64> {
    let t = tok.strip_prefix('-').unwrap_or(tok);
    if !is_decimal(t) {
        return None;
    }
    tok.parse().ok()
}

fn is_decimal(s: &str) -> bool {
    let mut parts = s.splitn(2, '.');
    let int = parts.next().unwrap_or("");
    let frac = parts.next();
    !int.is_empty()
        && int.bytes().all(|b| b.is_ascii_digit())
        && frac.is_none_or(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
}

pub(super) fn number(text: &str, what: &str, line: u64) -> Result<f64, ParseError> {
    crate::lines::parse_number(text)
        .ok_or_else(|| ParseError::bad_value(line, what, text, "expected a number"))
}

/// GNU time's elapsed clock: `m:ss.cc` under an hour, `h:mm:ss` from one hour on.
pub(super) fn clock(text: &str, line: u64) -> Result<f64, ParseError> {
    let bad = || {
        ParseError::bad_value(
            line,
            "elapsed time",
            text,
            "expected `m:ss.cc` or `h:mm:ss`",
        )
    };
    let (clock, frac) = text.split_once('.').unwrap_or((text, ""));
    let parts: Vec<u64> = clock
        .split(':')
        .map(|p| {
            (!p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
                .then(|| p.parse().ok())
                .flatten()
        })
        .collect::<Option<_>>()
        .ok_or_else(bad)?;
    if !(2..=3).contains(&parts.len()) {
        return Err(bad());
    }
    seconds(&parts, frac).ok_or_else(bad)
}

/// `[h, m, s]` or `[m, s]` plus the decimal fraction digits, as seconds. The sum is formed on
/// integers and parsed once so that `1:41.73` is exactly the double nearest to 101.73.
fn seconds(parts: &[u64], frac: &str) -> Option<f64> {
    let whole = parts
        .iter()
        .try_fold(0u64, |acc, v| acc.checked_mul(60)?.checked_add(*v))?;
    if frac.is_empty() {
        return Some(whole as f64);
    }
    if !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    // `whole.frac` spelled out on the stack: this runs once per sample.
    let mut int = [0u8; 20];
    let mut k = int.len();
    let mut n = whole;
    loop {
        k -= 1;
        int[k] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let int = &int[k..];
    let mut text = [0u8; 64];
    let len = int.len() + 1 + frac.len();
    if len > text.len() {
        return format!("{whole}.{frac}").parse().ok();
    }
    text[..int.len()].copy_from_slice(int);
    text[int.len()] = b'.';
    text[int.len() + 1..len].copy_from_slice(frac.as_bytes());
    fast_float2::parse(&text[..len]).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens() {
        assert_eq!(bash_token("0m49.393s"), Some(49.393));
        assert_eq!(bash_token("0m49.359"), Some(49.359));
        assert_eq!(bash_token("4m4.969s"), Some(244.969));
        assert_eq!(bash_token("-0m1.0s"), Some(-1.0));
        assert_eq!(bash_token("6m5,729s"), Some(365.729));
        assert_eq!(bash_token("0m07.50s"), Some(7.5));
        assert_eq!(bash_token("0m5,729s"), Some(5.729));
        assert_eq!(bash_token("0m49s"), Some(49.0));
        assert_eq!(bash_token("0m1,2,3s"), None);
        assert_eq!(bash_token("m1.0s"), None);
        assert_eq!(bash_token("1.03"), None);
        assert_eq!(plain_seconds("1.03"), Some(1.03));
        assert_eq!(plain_seconds("1."), None);
    }

    #[test]
    fn fast_tokens_read_as_the_general_path() {
        let mut n = 0;
        for min in ["0", "00", "1", "59", "61", "1000", "999999999999999"] {
            for whole in ["0", "07", "49", "59", "123456789", "999999999999999"] {
                for frac in [
                    "",
                    "0",
                    "5",
                    "393",
                    "0000001",
                    "999999999999",
                    "123456789012345",
                ] {
                    for sep in [".", ","] {
                        for end in ["", "s"] {
                            for sign in ["", "-"] {
                                let dot = if frac.is_empty() { "" } else { sep };
                                let tok = format!("{sign}{min}m{whole}{dot}{frac}{end}");
                                if let Some(v) = bash_token_fast(tok.as_bytes()) {
                                    let g = bash_token_general(&tok).map(f64::to_bits);
                                    assert_eq!(Some(v.to_bits()), g, "{tok}");
                                    n += 1;
                                }
                            }
                        }
                    }
                }
            }
        }
        assert!(n > 1000, "{n}");
        for tok in [
            "0m1,2,3s", "m1.0s", "1.03", "0m.5s", "0m1.s", "0m1ss", "0m1.0sx", "1m",
        ] {
            assert_eq!(bash_token_fast(tok.as_bytes()), None, "{tok}");
        }
    }

    #[test]
    fn clocks() {
        assert_eq!(clock("1:41.73", 1).unwrap(), 101.73);
        assert_eq!(clock("1:12:36", 1).unwrap(), 4356.0);
        assert_eq!(clock("0:04.94", 1).unwrap(), 4.94);
        assert!(clock("1.2", 1).is_err());
        assert!(clock("1:x", 1).is_err());
    }

    #[test]
    fn seconds_are_the_nearest_double() {
        let fracs = [
            "",
            "0",
            "5",
            "73",
            "004",
            "999999999",
            "12345678901234567890123",
            &"9".repeat(70),
        ];
        for parts in [
            &[0u64, 0][..],
            &[1, 41],
            &[1, 12, 36],
            &[0, 59],
            &[u64::MAX / 61, 0],
        ] {
            for frac in fracs {
                let whole = parts.iter().fold(0u64, |a, v| a * 60 + v);
                let expected = if frac.is_empty() {
                    whole as f64
                } else {
                    format!("{whole}.{frac}").parse().unwrap()
                };
                assert_eq!(seconds(parts, frac), Some(expected), "{parts:?} {frac}");
            }
        }
    }
}
