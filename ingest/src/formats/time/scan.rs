//! Byte-level reading of the common `time` line: the values of a `real`/`user`/`sys` row read
//! in place, the token bash prints by default at fixed places, any other through the digit
//! runs of [`bash_token_at`].

use super::values::bash_token_at;
use crate::error::ParseError;
use crate::lines::{is_space, skip_spaces};

/// Reads the values of a row as long as they are common `XmY.YYYs` tokens apart by ASCII
/// spaces, handing each to `each`. Returns None when the row is done (its end or a `(` note
/// reached), else where the first other token starts, for the general reading to take over:
/// up to there the row splits into words as the general reading splits it.
#[inline]
pub(super) fn fast_values(
    row: &str,
    mut each: impl FnMut(f64) -> Result<(), ParseError>,
) -> Result<Option<usize>, ParseError> {
    let b = row.as_bytes();
    let mut i = 0;
    loop {
        // Values are apart by runs of plain spaces, read eight at a time, and now and then a
        // TAB (`0m0.000s\t  0m0.004s`) between them.
        loop {
            i = skip_spaces(b, i);
            match b.get(i) {
                Some(&c) if is_space(c) => i += 1,
                _ => break,
            }
        }
        if i == b.len() || b[i] == b'(' {
            return Ok(None);
        }
        match bash_default(b, i).or_else(|| bash_token_at(b, i)) {
            Some((v, end)) => {
                each(v)?;
                i = end;
            }
            None => return Ok(Some(i)),
        }
    }
}

/// The token as bash prints it by default (`%3lR`: one digit of minutes, one or two of
/// seconds, three decimals, `0m49.393s`), read at fixed places: no loop over its digits. None
/// for any other token, which [`bash_token_at`] reads; where this one reads a token, it gives
/// what that one gives (the same integer over 1000).
#[inline(always)]
fn bash_default(b: &[u8], i: usize) -> Option<(f64, usize)> {
    let t: &[u8; 7] = b.get(i..i + 7)?.try_into().ok()?;
    if t[1] != b'm' {
        return None;
    }
    let min = digit(t[0])?;
    let (sec, dot) = match (t[3], t[4]) {
        (b'.', _) => (digit(t[2])?, i + 3),
        (_, b'.') => (digit(t[2])? * 10 + digit(t[3])?, i + 4),
        _ => return None,
    };
    let f: &[u8; 3] = b.get(dot + 1..dot + 4)?.try_into().ok()?;
    let frac = digit(f[0])? * 100 + digit(f[1])? * 10 + digit(f[2])?;
    let mut end = dot + 4;
    if b.get(end) == Some(&b's') {
        end += 1;
    }
    if b.get(end).is_some_and(|&c| !is_space(c)) {
        return None;
    }
    Some((((min * 60 + sec) * 1000 + frac) as f64 / 1000.0, end))
}

#[inline(always)]
fn digit(c: u8) -> Option<u64> {
    let d = c.wrapping_sub(b'0');
    (d < 10).then_some(u64::from(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reading byte by byte that the runs of spaces are skipped for: each blank byte
    /// skipped alone, each token read by [`bash_token_at`].
    fn values_byte_by_byte(row: &str) -> (Vec<u64>, Option<usize>) {
        let (b, mut i, mut out) = (row.as_bytes(), 0, Vec::new());
        loop {
            while i < b.len() && is_space(b[i]) {
                i += 1;
            }
            if i == b.len() || b[i] == b'(' {
                return (out, None);
            }
            match bash_token_at(b, i) {
                Some((v, end)) => {
                    out.push(v.to_bits());
                    i = end;
                }
                None => return (out, Some(i)),
            }
        }
    }

    /// Rows whose values are apart by every mix of spaces, TABs and other blank bytes, short
    /// and long runs, read to their end, to a note or to a token of another kind: the same
    /// values and the same place as skipping each blank byte alone.
    #[test]
    fn blanks_skip_as_byte_by_byte() {
        let gaps = [
            " ",
            "    ",
            "     ",
            "\t",
            "\t  ",
            "  \t",
            " \t \t ",
            "        ",
            "         ",
            "                 ",
            "\r",
            " \x0b\x0c ",
            "\n ",
        ];
        let ends = ["", " ", "\t", "(3 runs)", "x", "1.03", "        ", " 0m1.5"];
        let mut n = 0;
        for a in gaps {
            for b in gaps {
                for end in ends {
                    let row = format!("0m49.393s{a}0m0.004s{b}12m5.1s{a}{end}");
                    let mut got = Vec::new();
                    let at = fast_values(&row, |v| {
                        got.push(v.to_bits());
                        Ok(())
                    })
                    .unwrap();
                    assert_eq!((got, at), values_byte_by_byte(&row), "{row:?}");
                    n += 1;
                }
            }
        }
        assert!(n > 1000, "{n}");
    }

    /// Every token read at fixed places reads as the byte-by-byte reading reads it (the same
    /// value to the bit, the same end), alone, before blanks, other bytes or more tokens, and
    /// after another token; the shapes it leaves are left whole to that reading.
    #[test]
    fn default_tokens_read_as_the_byte_reading() {
        let mut taken = 0;
        for min in ["0", "1", "9", "12", "-0"] {
            for sec in ["0", "5", "49", "07", "123"] {
                for frac in ["", "0", "00", "000", "393", "999", "0001", "12345"] {
                    for sep in [".", ","] {
                        for unit in ["", "s", "ss"] {
                            for after in ["", " ", "\t", "  0m1.000s", "x", ",", "(", "5", "\r"] {
                                for lead in ["", "1m2.345s "] {
                                    let dot = if frac.is_empty() { "" } else { sep };
                                    let row = format!("{lead}{min}m{sec}{dot}{frac}{unit}{after}");
                                    let (b, at) = (row.as_bytes(), lead.len());
                                    if let Some((v, end)) = bash_default(b, at) {
                                        let slow =
                                            bash_token_at(b, at).map(|(v, e)| (v.to_bits(), e));
                                        assert_eq!(Some((v.to_bits(), end)), slow, "{row:?}");
                                        taken += 1;
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
        assert!(taken > 500, "{taken}");
        for row in [
            "0m5.00s",
            "0m5.0001s",
            "10m5.000s",
            "0m123.000s",
            "-0m1.000s",
            "0m5,000s",
            "0m5.000sx",
            "0m5.000s5",
            "0m5s",
            "0m.000s",
            "0m5.00",
            "m5.000s",
        ] {
            assert_eq!(bash_default(row.as_bytes(), 0), None, "{row}");
        }
        assert_eq!(bash_default(b"0m5.000", 0), Some((5.0, 7)));
        assert_eq!(bash_default(b"0m49.393s  x", 0), Some((49.393, 9)));
    }
}
