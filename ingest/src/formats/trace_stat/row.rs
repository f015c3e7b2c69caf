//! Reading a table row: the general word-by-word reader and a byte-level one for the common
//! shape, which must agree on every row the latter accepts.

use crate::lines;

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

/// Exact powers of ten: a decimal of at most 15 digits divided by one of these is correctly
/// rounded, so it equals what the general number parser gives.
const POW10: [f64; 16] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
];

/// A plain `DIGITS[.DIGITS]` number starting at `i`, of at most 15 digits: its value and where
/// it ends. `whole` refuses a fraction.
fn plain_number(b: &[u8], mut i: usize, whole: bool) -> Option<(f64, usize)> {
    let start = i;
    let mut m: u64 = 0;
    let mut frac = 0;
    let mut dot = false;
    while let Some(&c) = b.get(i) {
        if c.is_ascii_digit() {
            m = m * 10 + u64::from(c - b'0');
            frac += usize::from(dot);
        } else if c == b'.' && !dot && !whole && i > start {
            dot = true;
        } else {
            break;
        }
        i += 1;
        // 15 digits are below 2^53, so `m` converts exactly.
        if i - start > 16 {
            return None;
        }
    }
    let digits = i - start - usize::from(dot);
    if digits == 0 || digits > 15 || (dot && frac == 0) {
        return None;
    }
    Some((m as f64 / POW10[frac], i))
}

fn skip_spaces(b: &[u8], mut i: usize) -> usize {
    // Columns are padded with runs of spaces: skip them 8 at a time.
    while let Some(w) = b.get(i..i + 8)
        && w == b"        "
    {
        i += 8;
    }
    while b.get(i).is_some_and(|&c| lines::is_space(c)) {
        i += 1;
    }
    i
}

/// Whether `b[i..]` is a `us` word.
fn us_at(b: &[u8], i: usize) -> bool {
    b.get(i..i + 2) == Some(b"us") && b.get(i + 2).is_none_or(|&c| lines::is_space(c))
}

/// [`parse_row`] for the common shape, read as bytes in one pass: an ASCII line of a name, a
/// whole hit count and `N us` durations of plain digits. Anything else (signs, commas, long
/// numbers, other characters) gives None and is left to [`parse_row`]; a row read here has
/// the values [`parse_row`] would give it.
pub(super) fn parse_row_fast(line: &str, columns: usize) -> Option<Row<'_>> {
    let b = line.as_bytes();
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if lines::is_space(c) {
            break;
        }
        if !c.is_ascii() {
            return None;
        }
        i += 1;
    }
    if i == 0 {
        return None;
    }
    let name = &line[..i];
    let (hit, mut i) = plain_number(b, skip_spaces(b, i), true)?;
    let mut durations = [0.0; 3];
    let mut n = 0;
    loop {
        if i == b.len() {
            break;
        }
        if !lines::is_space(b[i]) || n == 3 {
            return None;
        }
        i = skip_spaces(b, i);
        if i == b.len() {
            break;
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
        for c in &cases {
            for columns in [0, 2, 3] {
                let fast = parse_row_fast(c, columns);
                let general = parse_row(c, columns);
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
    }
}
