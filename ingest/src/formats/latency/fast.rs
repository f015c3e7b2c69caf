//! Byte-level reading of the two body lines that make up most of a function trace:
//! `bash-2042    3d..1    1us : func <-parent` and ` => frame`, and of the header's `latency:`
//! line, which every trace has. Each function answers only
//! when the line has the plain shape (ASCII, space-separated, one-word comm) and the general
//! path would read it the same way with no earlier rule claiming it; anything else is left to
//! the general path.

use super::header::LatencyLine;
use super::{find_header, split_call};
use crate::lines::{self, skip_spaces};

/// A printable ASCII byte other than the space: tokens made only of these are split the same
/// by every whitespace rule the general path uses.
fn graphic(b: u8) -> bool {
    (0x21..=0x7e).contains(&b)
}

/// The end of the token of graphic bytes starting at `i`, or `None` at any other byte than a
/// space and at `refused`.
fn token_end(b: &[u8], mut i: usize, refused: u8) -> Option<usize> {
    // Eight bytes at a time: the first byte that is not a token byte ends the token if it is
    // a space, and refuses the line otherwise.
    while let Some(chunk) = b.get(i..i + 8) {
        let other = lines::other_bytes(
            u64::from_le_bytes(chunk.try_into().unwrap_or_default()),
            [refused],
        );
        if other != 0 {
            let at = i + other.trailing_zeros() as usize / 8;
            return (b[at] == b' ').then_some(at);
        }
        i += 8;
    }
    while i < b.len() && b[i] != b' ' {
        if !graphic(b[i]) || b[i] == refused {
            return None;
        }
        i += 1;
    }
    Some(i)
}

/// Whether `s` (a trimmed, non-empty line) is an entry the general path reads with
/// `parse_entry`, and if so whether its call is `<stack trace>`.
///
/// The comm-pid must be one token without `:` (so the line cannot be a `name: NNNus` list
/// line), and the line must not start with `#` or `(` (tracer, header and console lines).
/// With the three leading tokens free of spaces, a ` latency trace v` header can only lie
/// after the colon, which is all that is searched.
pub(super) fn entry(s: &str) -> Option<bool> {
    let b = s.as_bytes();
    if matches!(b.first(), None | Some(b'#' | b'(')) {
        return None;
    }
    let comm_end = token_end(b, 0, b':')?;
    let flags_at = skip_spaces(b, comm_end);
    let flags_end = token_end(b, flags_at, b' ')?;
    let flags = &b[flags_at..flags_end];
    let digits = flags.iter().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 || !(3..=6).contains(&(flags.len() - digits)) {
        return None;
    }
    let time_at = skip_spaces(b, flags_end);
    let time_end = token_end(b, time_at, b' ')?;
    let glued = time_token(&b[time_at..time_end])?;
    let colon = if glued {
        time_end
    } else {
        let j = skip_spaces(b, time_end);
        if b.get(j) != Some(&b':') {
            return None;
        }
        j + 1
    };
    let rest = &s[colon..];
    let text = lines::trim(rest);
    if text.is_empty() || find_header(rest).is_some() {
        return None;
    }
    Some(text.starts_with("<stack trace>") && split_call(text).0 == "<stack trace>")
}

/// `time_token` on a token of graphic bytes: whether the colon is glued on, or `None` when
/// the token is not a time.
fn time_token(tok: &[u8]) -> Option<bool> {
    if !tok.first().is_some_and(u8::is_ascii_digit) {
        return None;
    }
    let u = tok.windows(2).position(|w| w == b"us")?;
    let n = &tok[..u];
    if !n.iter().all(u8::is_ascii_digit) && lines::parse_number_bytes(n).is_none() {
        return None;
    }
    let mut mark = &tok[u + 2..];
    let glued = mark.last() == Some(&b':');
    if glued {
        mark = &mark[..mark.len() - 1];
    }
    matches!(mark, [] | [b'!' | b'+' | b'#' | b'*' | b'@' | b'$']).then_some(glued)
}

/// The frame of a `=> frame` line whose frame is one token of printable ASCII without `|`
/// (so it is neither an entry, a display-graph entry nor a header), for a trace whose body
/// has begun.
pub(super) fn frame(s: &str) -> Option<&str> {
    let b = s.as_bytes();
    if !b.starts_with(b"=>") {
        return None;
    }
    let at = skip_spaces(b, 2);
    // One token to the end of the line: every byte from `at` a token byte.
    let name = &b[at..];
    (!name.is_empty() && lines::all_graphic(name, [b'|'])).then(|| &s[at..])
}

/// The rest of a `latency:` line as the kernel prints it, ` 71 us, #168/168, CPU#3 | (...)`:
/// whole numbers, plain spaces between the parts and nothing else before the `|`. Anything
/// else (a fraction, a tab, a sign, words after the CPU) is left to the general path.
pub(super) fn latency_line(rest: &str) -> Option<LatencyLine<'_>> {
    let b = rest.as_bytes();
    let mut i = skip_spaces(b, 0);
    let latency_us = whole(b, &mut i)?;
    i = skip_spaces(b, i);
    i = expect(b, i, b"us")?;
    i = expect(b, skip_spaces(b, i), b",")?;
    i = expect(b, skip_spaces(b, i), b"#")?;
    let shown = whole(b, &mut i)?;
    i = expect(b, i, b"/")?;
    let total = whole(b, &mut i)?;
    i = expect(b, skip_spaces(b, i), b",")?;
    i = expect(b, skip_spaces(b, i), b"CPU#")?;
    let start = i;
    while i < b.len() && graphic(b[i]) && b[i] != b'|' {
        i += 1;
    }
    let cpu = &rest[start..i];
    i = skip_spaces(b, i);
    let model = match b.get(i) {
        None => "",
        Some(b'|') => &rest[i + 1..],
        Some(_) => return None,
    };
    Some(LatencyLine {
        latency_us,
        shown,
        total,
        cpu,
        model,
    })
}

/// The whole number at `*i` ([`lines::digits`]), moving `*i` past it. A fraction is the
/// general path's to read. (A comma ends the field there, as here.)
fn whole(b: &[u8], i: &mut usize) -> Option<f64> {
    let (end, v) = lines::digits(b, *i)?;
    *i = end;
    (b.get(end) != Some(&b'.')).then_some(v as f64)
}

/// Where `b` continues after `word` at `i`.
fn expect(b: &[u8], i: usize, word: &[u8]) -> Option<usize> {
    b.get(i..)?.starts_with(word).then_some(i + word.len())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// [`token_end`] one byte at a time, as it is defined.
    fn token_end_bytes(b: &[u8], mut i: usize, refused: u8) -> Option<usize> {
        while i < b.len() && b[i] != b' ' {
            if !graphic(b[i]) || b[i] == refused {
                return None;
            }
            i += 1;
        }
        Some(i)
    }

    proptest! {
        #[test]
        fn token_end_agrees_with_one_byte_at_a_time(
            // Mostly token bytes and spaces, so that tokens of every length end anywhere in
            // and after a word, at the line's end, or at another byte.
            line in proptest::collection::vec(prop_oneof![
                8 => 0x21..0x7fu8,
                3 => Just(b' '),
                1 => any::<u8>(),
            ], 0..40),
            start in 0..40usize,
            refused in prop_oneof![Just(b':'), Just(b'|'), Just(b' ')],
        ) {
            let start = start.min(line.len());
            prop_assert_eq!(
                token_end(&line, start, refused),
                token_end_bytes(&line, start, refused)
            );
        }

        #[test]
        fn a_frame_is_one_token_to_the_end_of_the_line(
            tail in proptest::collection::vec(prop_oneof![
                8 => 0x21..0x7fu8,
                2 => Just(b' '),
                1 => Just(b'|'),
                1 => any::<u8>(),
            ], 0..40),
        ) {
            let mut line = b"=>".to_vec();
            line.extend(tail);
            let s = String::from_utf8_lossy(&line);
            let b = s.as_bytes();
            let at = skip_spaces(b, 2);
            let one_token = token_end_bytes(b, at, b'|') == Some(b.len()) && b.len() > at;
            prop_assert_eq!(frame(&s), one_token.then(|| &s[at..]));
        }
    }
}
