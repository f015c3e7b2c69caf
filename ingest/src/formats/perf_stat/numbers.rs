//! Numbers of a `perf stat` file read without the general number parser in the common case.

use crate::lines::{POW10, parse_number};

/// [`parse_number`], with a plain `digits[.digits]` token of at most 19 characters read
/// directly (thousands separators before the dot as that function takes them: 1-3 digits,
/// then groups of 3): its digits as an integer below 2^53 divided by an exact power of ten
/// (at most 10^22) is the correctly rounded value, the same number the general parser returns.
pub(super) fn number(t: &str) -> Option<f64> {
    let b = t.as_bytes();
    let (int, frac) = match b.iter().position(|&c| c == b'.') {
        Some(d) => (&b[..d], &b[d + 1..]),
        None => (b, &b[b.len()..]),
    };
    // `1.` and `.5` are left to the general parser.
    let dot_alone = int.len() < b.len() && frac.is_empty();
    if int.is_empty() || dot_alone || frac.len() >= POW10.len() || int.len() + frac.len() > 19 {
        return parse_number(t);
    }
    let mut m: u64 = 0;
    // Digits in the current group of the integer part, and whether a separator was seen.
    let (mut group, mut grouped) = (0, false);
    for &c in int {
        if c == b',' {
            if group == 0 || group > 3 || (grouped && group != 3) {
                return parse_number(t);
            }
            (group, grouped) = (0, true);
            continue;
        }
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return parse_number(t);
        }
        m = m * 10 + u64::from(d);
        group += 1;
    }
    if grouped && group != 3 {
        return parse_number(t);
    }
    for &c in frac {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return parse_number(t);
        }
        m = m * 10 + u64::from(d);
    }
    if m > 1 << 53 {
        return parse_number(t);
    }
    Some(m as f64 / POW10[frac.len()])
}

/// `n` in decimal, written into `buf` (`u32::to_string` without the formatting machinery).
pub(super) fn decimal(mut n: u32, buf: &mut [u8; 10]) -> &str {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    std::str::from_utf8(&buf[i..]).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_directly_agree_with_parse_number() {
        let same = |t: &str| {
            assert_eq!(
                number(t).map(f64::to_bits),
                parse_number(t).map(f64::to_bits),
                "{t:?}"
            );
        };
        for t in [
            "0",
            "24.536050899",
            "1.",
            ".5",
            ".",
            "1.2.3",
            "00.5",
            "9007199254740992",
            "9007199254740993",
            "1234567890123456789",
            "12345678901234567890",
            "0.0000000000000000000001",
            "0.00000000000000000000001",
            "1,000",
            "3,228,188",
            "3,228,188.25",
            "1,234.5,678",
            "1.5,000",
            "1,23",
            "1,2345",
            "1234,567",
            ",123",
            "123,",
            "1,,234",
            "0,123",
            "1,234,567,890,123,456",
            "-1.5",
            "+2",
            "",
            "1e3",
            " 1.5",
            "123.456789012345678",
        ] {
            same(t);
        }
        // Digit strings of every length with the dot anywhere.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = 1 + (x % 21) as usize;
            let mut t: String = (0..len)
                .map(|i| char::from(b'0' + ((x >> (i * 3)) % 10) as u8))
                .collect();
            let dot = ((x >> 40) % (len as u64 + 2)) as usize;
            if dot < len {
                t.insert(dot, '.');
            }
            // Commas now and then, mostly where separators go.
            if (x >> 50).is_multiple_of(3) {
                let int = t.find('.').unwrap_or(t.len());
                let mut at = int;
                while at > 3 {
                    at -= 3;
                    t.insert(at, ',');
                }
                if (x >> 55).is_multiple_of(4) {
                    let at = ((x >> 57) as usize) % (t.len() + 1);
                    t.insert(at, ',');
                }
            }
            same(&t);
        }
    }

    #[test]
    fn decimals() {
        let mut buf = [0u8; 10];
        for n in [0, 7, 10, 99, 1234, u32::MAX] {
            assert_eq!(decimal(n, &mut buf), n.to_string());
        }
    }
}
