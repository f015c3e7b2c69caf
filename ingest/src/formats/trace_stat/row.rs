//! Reading a table row: the general word-by-word reader and a byte-level one for the common
//! shape, which must agree on every row the latter accepts.

use crate::lines::{self, POW10, POW10_INT};

/// A row: name, hit and up to three durations in µs (µs² for the last).
pub(super) struct Row<'a> {
    pub(super) name: &'a str,
    pub(super) hit: f64,
    pub(super) durations: [f64; 3],
    pub(super) n: usize,
}

pub(super) fn parse_row(line: &str, columns: usize) -> Option<Row<'_>> {
    let mut it = lines::words(line);
    let name = it.next()?;
    let hit = lines::parse_number(it.next()?)?;
    let mut durations = [0.0; 3];
    let mut n = 0;
    while let Some(tok) = it.next() {
        if n == 3 {
            return None;
        }
        // `182650.3 us` as the kernel prints it, or `182650.3us` if a mailer ate the space.
        let value = if let Some(v) = tok.strip_suffix("us") {
            lines::parse_number(v)?
        } else {
            let v = lines::parse_number(tok)?;
            if it.next()? != "us" {
                return None;
            }
            v
        };
        durations[n] = value;
        n += 1;
    }
    (n == columns).then_some(Row {
        name,
        hit,
        durations,
        n,
    })
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The 8 bytes at `i` as a little-endian word (first byte lowest), if the slice holds them.
#[inline]
fn word(b: &[u8], i: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(i..i + 8)?.try_into().ok()?))
}

/// The high bit of each byte of `w` that is not an ASCII digit.
#[inline]
fn non_digits(w: u64) -> u64 {
    let x = w ^ (0x30 * ONES);
    // A byte below 0x80 is 10 or more exactly when adding 0x76 sets its high bit, and the sum
    // does not carry into the next byte.
    (((x & !HIGH) + 0x76 * ONES) | x) & HIGH
}

/// The value of the `k` (1..=8) digits in the low bytes of `w`, the first digit lowest: the
/// digits are moved to the top, below them zeros act as leading zeros, and pairs, quads and
/// octets are combined by three multiplications.
#[inline]
fn digits_value(w: u64, k: usize) -> u64 {
    let v = (w << (8 * (8 - k))) & (0x0f * ONES);
    let v = v.wrapping_mul(2561) >> 8;
    let v = (v & 0x00ff_00ff_00ff_00ff).wrapping_mul(6_553_601) >> 16;
    (v & 0x0000_ffff_0000_ffff).wrapping_mul(42_949_672_960_001) >> 32
}

/// How many of the low bytes of `w` are digits before the first that is not.
#[inline]
fn digit_count(w: u64) -> usize {
    (non_digits(w).trailing_zeros() / 8) as usize
}

/// More digits than a plain number may have.
const TOO_MANY: usize = 16;

/// The run of digits starting at `i`: its value and length, or a length of [`TOO_MANY`] when
/// it is longer than 15 digits. Eight bytes are looked at a time where the line holds them.
#[inline]
fn digit_run(b: &[u8], i: usize) -> (u64, usize) {
    let count = digit_count;
    let Some(w) = word(b, i) else {
        return digit_bytes(b, i);
    };
    let k = count(w);
    if k < 8 {
        return (if k == 0 { 0 } else { digits_value(w, k) }, k);
    }
    let high = digits_value(w, 8);
    let (low, k) = match word(b, i + 8) {
        Some(w) => {
            let k = count(w);
            (if k == 0 { 0 } else { digits_value(w, k) }, k)
        }
        None => digit_bytes(b, i + 8),
    };
    if k >= 8 {
        return (0, TOO_MANY);
    }
    (high * POW10_INT[k] + low, 8 + k)
}

/// [`digit_run`] a byte at a time.
fn digit_bytes(b: &[u8], mut i: usize) -> (u64, usize) {
    let mut m = 0;
    let mut k = 0;
    while let Some(&c) = b.get(i)
        && c.is_ascii_digit()
    {
        if k == TOO_MANY {
            break;
        }
        m = m * 10 + u64::from(c - b'0');
        k += 1;
        i += 1;
    }
    (m, k)
}

/// A plain `DIGITS[.DIGITS]` number starting at `i`, of at most 15 digits: its value and where
/// it ends. `whole` refuses a fraction (it ends the number at the dot).
fn plain_number(b: &[u8], i: usize, whole: bool) -> Option<(f64, usize)> {
    // `DIGITS.DIGITS` of at most 8 digits in all (most durations): the two runs joined into
    // one word without the dot and read by one conversion.
    if !whole && let Some(w) = word(b, i) {
        let k = digit_count(w);
        if (1..7).contains(&k)
            && (w >> (8 * k)) as u8 == b'.'
            && let Some(frac) = word(b, i + k + 1)
        {
            let f = digit_count(frac);
            if f > 0 && k + f <= 8 {
                let joined = (w & ((1 << (8 * k)) - 1)) | frac << (8 * k);
                let m = digits_value(joined, k + f);
                return Some((m as i64 as f64 / POW10[f], i + k + 1 + f));
            }
        }
    }
    let (int, k) = digit_run(b, i);
    if k == 0 || k > 15 {
        return None;
    }
    let i = i + k;
    // At most 15 digits: below 2^53, so the integer converts exactly (as i64: one instruction).
    if whole || b.get(i) != Some(&b'.') {
        return Some((int as i64 as f64, i));
    }
    let (frac, f) = digit_run(b, i + 1);
    if f == 0 || k + f > 15 {
        return None;
    }
    let m = int * POW10_INT[f] + frac;
    Some((m as i64 as f64 / POW10[f], i + 1 + f))
}

fn skip_spaces(b: &[u8], i: usize) -> usize {
    let mut i = lines::skip_spaces(b, i);
    while b.get(i).is_some_and(|&c| lines::is_space(c)) {
        i += 1;
    }
    i
}

/// Where the word starting at `i` ends, or None if it holds a byte that is not ASCII.
fn name_end(b: &[u8], mut i: usize) -> Option<usize> {
    loop {
        if let Some(w) = word(b, i) {
            // Bytes below 0x21 or above 0x7f: the first one flagged is exact (a borrow only
            // reaches bytes after a flagged one).
            let m = ((w.wrapping_sub(0x21 * ONES) & !w) | w) & HIGH;
            if m == 0 {
                i += 8;
                continue;
            }
            i += (m.trailing_zeros() / 8) as usize;
        }
        match b.get(i) {
            None => return Some(i),
            Some(&c) if lines::is_space(c) => return Some(i),
            Some(&c) if !c.is_ascii() => return None,
            // A control character: part of the word.
            Some(_) => i += 1,
        }
    }
}

/// Whether `b[i..]` is a `us` word.
fn us_at(b: &[u8], i: usize) -> bool {
    b.get(i..i + 2) == Some(b"us") && b.get(i + 2).is_none_or(|&c| lines::is_space(c))
}

/// [`parse_row`] for the common shape, read as bytes in one pass from the line as it came
/// (before [`lines::strip_mail`] and [`lines::trim_end`]): an ASCII line of a name, a whole
/// hit count and `N us` durations of plain digits. Anything else (quote marks, signs, commas,
/// long numbers, other characters) gives None and is left to [`parse_row`]; a row read here
/// has the values [`parse_row`] gives the stripped line.
pub(super) fn parse_row_fast(line: &str, columns: usize) -> Option<Row<'_>> {
    let b = line.as_bytes();
    let start = skip_spaces(b, 0);
    if b.get(start).is_none_or(|&c| c == b'>') {
        return None;
    }
    let i = name_end(b, start)?;
    let name = &line[start..i];
    let (hit, mut i) = plain_number(b, skip_spaces(b, i), true)?;
    let mut durations = [0.0; 3];
    let mut n = 0;
    loop {
        if i == b.len() {
            break;
        }
        if !lines::is_space(b[i]) {
            return None;
        }
        i = skip_spaces(b, i);
        if i == b.len() {
            break;
        }
        if n == 3 {
            return None;
        }
        let (v, end) = plain_number(b, i, false)?;
        i = if us_at(b, end) {
            end + 2
        } else {
            let u = skip_spaces(b, end);
            if u == end || !us_at(b, u) {
                return None;
            }
            u + 2
        };
        durations[n] = v;
        n += 1;
    }
    (n == columns).then_some(Row {
        name,
        hit,
        durations,
        n,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows() {
        let r = parse_row("vm_map_ram 126000 30683.30 us 0.243 us 30819.36 us", 3).unwrap();
        assert_eq!((r.name, r.hit, r.n), ("vm_map_ram", 126000.0, 3));
        assert_eq!(r.durations, [30683.30, 0.243, 30819.36]);
        assert!(parse_row("f 12 1.0 us 0.5 us", 3).is_none());
        assert!(parse_row("f 12 1.0us 0.5us", 2).is_some());
        assert!(parse_row("f 12", 0).is_some());
        assert!(parse_row("f x 1.0 us", 2).is_none());
    }

    #[test]
    fn fast_rows_read_as_the_general_parser_does() {
        let mut cases: Vec<String> = [
            "vm_map_ram 126000 30683.30 us 0.243 us 30819.36 us",
            "f 12 1.0us 0.5us",
            "f 12 1.0 us 0.5us",
            "f 12",
            "f 12 ",
            "f\t12\x0b1.5\tus 2 us",
            "f 12.5",
            "f 1,200",
            "f +12",
            "f 12 1.0 us 0.5 us 1 us 2 us",
            "f 12 1.0 usx 0.5 us",
            "f 12 1.0 u 0.5 us",
            "f 12 1.0x us 0.5 us",
            "f 12 .5 us 5. us",
            "f 12 1.2.3 us 1 us",
            "f 12 1234567890123456 us 1 us",
            "f 12 123456789012345 us 0.00000000000001 us",
            "f 12 0.1234567890123456 us 1 us",
            "f 1234567890123456789012",
            "caf\u{e9} 12",
            "f\u{a0}g 12",
            "f 12 1.0 us\u{a0}0.5 us",
            "f 12 1.0 us 0.5 us 7",
            "f 12 us us",
            "f 12 1.0usus 0.5 us",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // Numbers of every length and placement of the dot.
        for len in 1..=18 {
            for dot in 0..len {
                let digits: String = (0..len)
                    .map(|k| char::from(b'1' + (k * 7 % 9) as u8))
                    .collect();
                let num = if dot == 0 {
                    digits.clone()
                } else {
                    format!("{}.{}", &digits[..dot], &digits[dot..])
                };
                cases.push(format!("f {digits} {num} us {num}us 0.{digits} us"));
                cases.push(format!("f {digits} {num} us {num}us"));
            }
        }
        // Names of every length around the word size, with control and non-ASCII bytes.
        for len in 1..=20 {
            let name: String = (0..len).map(|k| char::from(b'a' + k as u8)).collect();
            cases.push(format!("{name} 12 1.5 us 2 us"));
            cases.push(format!("{name}\x01x 12"));
            cases.push(format!("{name}\u{e9} 12"));
            cases.push(format!("{name}\t12"));
        }
        // As the line came: indented, quoted, padded at the end by any number of spaces.
        let bare = cases.len();
        for k in 0..bare {
            let c = cases[k].clone();
            cases.push(format!("  {c}"));
            cases.push(format!("> {c}"));
            cases.push(format!(">{c}"));
            cases.push(format!("\t{c}\t"));
            for pad in 1..=9 {
                cases.push(format!("{}{c}{}", " ".repeat(pad + 7), " ".repeat(pad)));
            }
        }
        for c in &cases {
            let stripped = lines::trim_end(lines::strip_mail(c));
            for columns in [0, 2, 3] {
                let fast = parse_row_fast(c, columns);
                let general = parse_row(stripped, columns);
                if let Some(f) = &fast {
                    let g = general.as_ref().unwrap_or_else(|| panic!("{c:?}"));
                    assert_eq!((f.name, f.n), (g.name, g.n), "{c:?}");
                    assert_eq!(f.hit.to_bits(), g.hit.to_bits(), "{c:?}");
                    for k in 0..3 {
                        assert_eq!(f.durations[k].to_bits(), g.durations[k].to_bits(), "{c:?}");
                    }
                }
            }
        }
        assert!(parse_row_fast("vm_map_ram 126000 30683.30 us 0.243 us 30819.36 us", 3).is_some());
        assert!(parse_row_fast("f 12 1.0us 0.5us", 2).is_some());
        assert!(
            parse_row_fast(
                "  kfunc_000001   48324    81544.231 us    1.687 us    0.017 us    ",
                3
            )
            .is_some()
        );
        assert!(parse_row_fast("  f 123456789012345 1234567.12345678 us 1 us ", 2).is_some());
    }
}
