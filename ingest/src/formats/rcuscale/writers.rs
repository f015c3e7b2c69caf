//! The `gp_duration` series that writer-duration lines feed, found by writer number and
//! label instead of by building and hashing a series key for every line.

use crate::lines::is_space;
use crate::model::{Ctx, FastMap, SeriesId, SeriesKey, SeriesSpec};

const NONE: SeriesId = SeriesId::MAX;

/// Writers numbered below this are found by index: there are fewer writers than CPUs.
const DENSE: u64 = 4096;

/// Labels whose series are kept: logs alternate between a few (`before:`, `after:`).
const MAX_LABELS: usize = 16;

/// The series of one block label: scope `all` and one per writer.
struct Labelled {
    label: Option<Box<str>>,
    all: SeriesId,
    dense: Vec<SeriesId>,
    sparse: FastMap<u64, SeriesId>,
}

#[derive(Default)]
pub(super) struct WriterSeries {
    labels: Vec<Labelled>,
    /// Index in `labels` of the label in force, once looked up.
    current: Option<usize>,
    /// The last writer's ids under the label in force: a log lists one writer's lines together.
    last: Option<(u64, SeriesId, SeriesId)>,
}

impl WriterSeries {
    /// The block label changed: the next sample looks its series up again.
    pub(super) fn relabel(&mut self) {
        self.current = None;
        self.last = None;
    }

    /// Ids of writer `w`'s series and of scope `all`, under `label`; series not seen before
    /// are declared writer's first, the order that decides their ids.
    #[inline]
    pub(super) fn ids(
        &mut self,
        w: u64,
        label: Option<&str>,
        ctx: &mut Ctx<'_>,
    ) -> (SeriesId, SeriesId) {
        // Inlined: most lines are the same writer's as the line before.
        if let Some((last, id, all)) = self.last
            && last == w
        {
            return (id, all);
        }
        self.look_up(w, label, ctx)
    }

    fn look_up(&mut self, w: u64, label: Option<&str>, ctx: &mut Ctx<'_>) -> (SeriesId, SeriesId) {
        let i = match self.current {
            Some(i) => i,
            None => {
                let i = self.find(label);
                self.current = Some(i);
                i
            }
        };
        let l = &mut self.labels[i];
        let slot = if w < DENSE {
            let w = w as usize;
            if w >= l.dense.len() {
                l.dense.resize(w + 1, NONE);
            }
            &mut l.dense[w]
        } else {
            l.sparse.entry(w).or_insert(NONE)
        };
        if *slot == NONE {
            *slot = ctx.series(SeriesSpec::duration(key(label).scope(format!("writer{w}"))));
        }
        let writer = *slot;
        if l.all == NONE {
            l.all = ctx.series(SeriesSpec::duration(key(label)));
        }
        self.last = Some((w, writer, l.all));
        (writer, l.all)
    }

    fn find(&mut self, label: Option<&str>) -> usize {
        if let Some(i) = self.labels.iter().position(|l| l.label.as_deref() == label) {
            return i;
        }
        if self.labels.len() == MAX_LABELS {
            self.labels.clear();
        }
        self.labels.push(Labelled {
            label: label.map(Box::from),
            all: NONE,
            dense: Vec::new(),
            sparse: FastMap::default(),
        });
        self.labels.len() - 1
    }
}

fn key(label: Option<&str>) -> SeriesKey {
    SeriesKey::new("gp_duration").label(label.map(str::to_string))
}

/// `<w> writer-duration: <gp> <ns>` (the text after the console prefix) when every field is a
/// plain decimal integer and the spaces are ASCII: writer and nanoseconds. Anything else goes
/// the general way, which also reports the errors.
#[inline(always)]
pub(super) fn writer_duration(rest: &str) -> Option<(u64, f64)> {
    // Inlined into the parser's loop, the scan not: most lines are in the kernel's layout.
    let b = rest.as_bytes();
    match kernel_layout(b) {
        Some(found) => Some(found),
        None => scanned(b),
    }
}

/// [`writer_duration`] by finding each field's ends.
#[inline(never)]
fn scanned(b: &[u8]) -> Option<(u64, f64)> {
    const FIELD: &[u8] = b"writer-duration:";
    let i = skip_spaces(b, 0);
    // The first field is a number: ` writer 0 gps: 133` is refused here.
    if !b.get(i).is_some_and(u8::is_ascii_digit) {
        return None;
    }
    let (w, i) = integer(b, i)?;
    // `integer` ends at a space or the end, where the field cannot start.
    let i = skip_spaces(b, i);
    if !b[i..].starts_with(FIELD) {
        return None;
    }
    let i = i + FIELD.len();
    if !b.get(i).is_some_and(|&c| is_space(c)) {
        return None;
    }
    let (_, i) = integer(b, skip_spaces(b, i))?;
    // At the end, the next `integer` finds no digit.
    let (ns, i) = integer(b, skip_spaces(b, i))?;
    // `u64 as f64` rounds to nearest as the float parser does.
    (skip_spaces(b, i) == b.len()).then_some((w, ns as f64))
}

/// [`writer_duration`] of a line as the kernel prints it, ` %4d writer-duration: %5d %llu`:
/// the fields are where that format puts them when the numbers fit their widths, so they are
/// read without looking for their ends. Any other spacing is left to the scan.
#[inline(always)]
fn kernel_layout(b: &[u8]) -> Option<(u64, f64)> {
    const MID: &[u8; 18] = b" writer-duration: ";
    const fn word(at: usize) -> u64 {
        let mut w = [0u8; 8];
        let mut i = 0;
        while i < 8 {
            w[i] = MID[at + i];
            i += 1;
        }
        u64::from_le_bytes(w)
    }
    // The writer in 0..5, MID in 5..23, the grace period in 23..28, a space, the nanoseconds
    // to the end. The first 32 bytes as one array: the words below are read from it at fixed
    // places, with no bounds check between them.
    let head: &[u8; 32] = b.get(..32)?.try_into().ok()?;
    let at = |i: usize| u64::from_le_bytes(*head[i..].first_chunk::<8>().expect("in the head"));
    if at(5) != word(0) || at(13) != word(8) || at(15) != word(10) {
        return None;
    }
    let w = padded5(at(0))?;
    padded5(at(23))?;
    if head[28] != b' ' {
        return None;
    }
    let ns = digits_to_end(b, 29)?;
    Some((w, ns as f64))
}

/// The digits from `i` to the end of `b`, at least one, as a u64 (at most 19 digits); `b`
/// holds eight bytes or more before `i`. Up to eight digits are read from the line's last
/// eight bytes at once: nanoseconds of a grace period are mostly seven to nine digits.
#[inline(always)]
fn digits_to_end(b: &[u8], i: usize) -> Option<u64> {
    let n = b.len() - i;
    if n == 0 || n > 8 {
        let (v, end) = integer(b, i)?;
        return (end == b.len()).then_some(v);
    }
    let last = b.last_chunk::<8>()?;
    // The number in the top `n` bytes; the bytes shifted in above read as digits (zero), so
    // only the number's own bytes can end the run early.
    let t = (u64::from_le_bytes(*last) ^ 0x3030_3030_3030_3030) >> (8 * (8 - n));
    if leading_digits(t) < n {
        return None;
    }
    Some(eight_digits(t << (8 * (8 - n))))
}

/// The five-byte field that starts `x` (first byte lowest): spaces, then at least one digit
/// to its end.
#[inline(always)]
fn padded5(x: u64) -> Option<u64> {
    let spaces = ((x ^ 0x2020_2020_2020_2020).trailing_zeros() / 8) as usize;
    if spaces >= 5 {
        return None;
    }
    let t = (x ^ 0x3030_3030_3030_3030) >> (8 * spaces);
    let n = 5 - spaces;
    if leading_digits(t) < n {
        return None;
    }
    Some(eight_digits(t << (8 * (8 - n))))
}

/// `writer <w> gps: <n>` with plain decimal integers and ASCII spaces: writer and count.
pub(super) fn writer_gps(rest: &str) -> Option<(u64, &str)> {
    let b = rest.as_bytes();
    // The kernel's ` writer %d gps: %d`, with single spaces.
    if let Some(tail) = b.strip_prefix(b" writer ")
        && let Some((w, i)) = integer(tail, 0)
        && let Some(count) = tail[i..].strip_prefix(b" gps: ")
        && let Some((_, end)) = integer(count, 0)
        && end == count.len()
    {
        return Some((w, &rest[8 + i + 6..]));
    }
    let i = skip_spaces(b, 0);
    if !b[i..].starts_with(b"writer") {
        return None;
    }
    let i = spaces(b, i + 6)?;
    let (w, i) = integer(b, i)?;
    let i = spaces(b, i)?;
    if !b[i..].starts_with(b"gps:") {
        return None;
    }
    let start = spaces(b, i + 4)?;
    let (_, end) = integer(b, start)?;
    (skip_spaces(b, end) == b.len()).then(|| (w, &rest[start..end]))
}

/// 1 to 19 digits at `i` up to a space or the end, as a u64 (19 digits cannot overflow;
/// longer numbers go the general way).
#[inline(always)]
fn integer(b: &[u8], i: usize) -> Option<(u64, usize)> {
    let mut v = 0u64;
    let mut j = i;
    // The first eight bytes at once: counts, nanoseconds and writer numbers are short.
    if let Some(x) = load8(b, i) {
        let t = x ^ 0x3030_3030_3030_3030;
        let n = leading_digits(t);
        if n == 0 {
            return None;
        }
        v = eight_digits(t << (8 * (8 - n)));
        j += n;
        if n < 8 {
            // The byte that ended the digits is in the word read.
            return is_space(b[j]).then_some((v, j));
        }
    }
    while let Some(&c) = b.get(j) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        v = v.wrapping_mul(10).wrapping_add(u64::from(d));
        j += 1;
    }
    if j == i || j - i > 19 || b.get(j).is_some_and(|&c| !is_space(c)) {
        return None;
    }
    Some((v, j))
}

/// The eight bytes at `i`, first byte lowest, if there are eight.
#[inline(always)]
fn load8(b: &[u8], i: usize) -> Option<u64> {
    let chunk: [u8; 8] = b.get(i..i + 8)?.try_into().ok()?;
    Some(u64::from_le_bytes(chunk))
}

/// How many of the bytes of `t` (ASCII XOR `0`, first byte lowest) are digits before the
/// first that is not. A carry out of the `+ 6` starts only at a byte that is not a digit, so
/// it cannot change the answer.
#[inline]
fn leading_digits(t: u64) -> usize {
    const HIGH: u64 = 0xF0F0_F0F0_F0F0_F0F0;
    let not_digit = (t & HIGH) | (t.wrapping_add(0x0606_0606_0606_0606) & HIGH);
    (not_digit.trailing_zeros() / 8) as usize
}

/// The number that eight digit values (first byte lowest, most significant) spell.
#[inline]
fn eight_digits(t: u64) -> u64 {
    let t = (t & 0x0F0F_0F0F_0F0F_0F0F).wrapping_mul(2561) >> 8;
    let t = (t & 0x00FF_00FF_00FF_00FF).wrapping_mul(6_553_601) >> 16;
    (t & 0x0000_FFFF_0000_FFFF).wrapping_mul(42_949_672_960_001) >> 32
}

/// At least one space at `i`: the position after the run.
#[inline(always)]
fn spaces(b: &[u8], i: usize) -> Option<usize> {
    let j = skip_spaces(b, i);
    (j > i).then_some(j)
}

#[inline(always)]
fn skip_spaces(b: &[u8], mut i: usize) -> usize {
    // Plain spaces eight at a time: the padding between fields is mostly those.
    while let Some(x) = load8(b, i) {
        let n = ((x ^ 0x2020_2020_2020_2020).trailing_zeros() / 8) as usize;
        i += n;
        if n < 8 {
            if !is_space(b[i]) {
                return i;
            }
            break;
        }
    }
    while b.get(i).is_some_and(|&c| is_space(c)) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_writer_duration_lines() {
        assert_eq!(
            writer_duration("    0 writer-duration:     1 32003582"),
            Some((0, 32003582.0))
        );
        assert_eq!(
            writer_duration("12 writer-duration: 0 7\t "),
            Some((12, 7.0))
        );
        for (line, want) in [
            ("    0 writer-duration:   133 27996410", (0, 27996410.0)),
            (" 1234 writer-duration: 12345 123", (1234, 123.0)),
            (
                "    7 writer-duration:     0 1234567890123456789",
                (7, 1234567890123456789.0),
            ),
            ("\t   7 writer-duration:     0 12345678", (7, 12345678.0)),
            ("    7 writer-duration:\t    0 12345678", (7, 12345678.0)),
            ("    7 writer-duration:     0  12345678", (7, 12345678.0)),
            ("    7 writer-duration:     0 12345678 ", (7, 12345678.0)),
            (
                "12345 writer-duration: 123456 12345678",
                (12345, 12345678.0),
            ),
        ] {
            assert_eq!(writer_duration(line), Some(want), "{line}");
        }
        for other in [
            "0 writer-duration: 1",
            "0 writer-duration: 1 2 3",
            "0 writer-duration:1 2",
            "x writer-duration: 1 2",
            "0 writer-duration: 1 2.5",
            "0 writer-duration: 1 -2",
            "0 writer-duration: 1 99999999999999999999",
            "0 writer-duration: 1 2\u{a0}",
            "    0 writer-duration:     1 2\u{a0}",
            "    0 writer-duration:     1 2 3",
            "    0 writer-duration:     1 2.5",
            "  0 0 writer-duration:     1 25555",
            "    0 writer-duration:   1 1 25555",
            "    0 writer-duration:     1 99999999999999999999",
            "    x writer-duration:     1 25555",
            "      writer-duration:     1 25555",
            "    0 writer-duration:      25555",
            "0 writer-durations: 1 2",
            "writer 0 gps: 133",
        ] {
            assert_eq!(writer_duration(other), None, "{other}");
        }
    }

    /// Where the kernel's layout reads a line, it reads what the scan reads; and it reads the
    /// lines the kernel prints of 32 bytes or more, whatever the lengths of the numbers.
    #[test]
    fn kernel_layout_as_the_scan() {
        let mut taken = 0;
        for w in ["    0", "   17", " 4095", "12345", "  x 1", "     "] {
            for gp in ["    0", "  133", "12345", "  1 2", "   -1"] {
                for ns in [
                    "",
                    "0",
                    "7",
                    "1234567",
                    "44003961",
                    "123456789",
                    "1234567890123456789",
                    "99999999999999999999",
                    "12a45678",
                    "1234567x",
                    "x",
                    "1.5",
                ] {
                    for tail in ["", " ", "\t", " 9", "x", "\u{e9}"] {
                        let line = format!("{w} writer-duration: {gp} {ns}{tail}");
                        let b = line.as_bytes();
                        let fast = kernel_layout(b);
                        if fast.is_some() {
                            taken += 1;
                            assert_eq!(fast, scanned(b), "{line:?}");
                        }
                        let plain = !w.contains('x') && w.trim() != "" && !gp.contains([' ', '-']);
                        let number = !ns.is_empty()
                            && ns.len() <= 19
                            && ns.bytes().all(|c| c.is_ascii_digit());
                        // Shorter lines are left to the scan: the head is read whole.
                        if plain && number && tail.is_empty() && b.len() >= 32 {
                            assert!(fast.is_some(), "{line:?}");
                        }
                        assert_eq!(writer_duration(&line), fast.or_else(|| scanned(b)));
                    }
                }
            }
        }
        assert!(taken > 40, "{taken}");
    }

    #[test]
    fn integers_as_str_parse() {
        let mut texts: Vec<String> = [
            "0",
            "7",
            "00000000",
            "12345678",
            "123456789",
            "44003961",
            "1234567890123456789",
            "18446744073709551615",
            "99999999999999999999",
            "",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let digits = (x % 21) as usize;
            texts.push(x.to_string().chars().cycle().take(digits).collect());
        }
        for t in texts {
            for tail in ["", " ", "\t9", "x", " 12345678", "/", ":", "\u{e9}"] {
                let line = format!("{t}{tail}");
                let want = (!t.is_empty()
                    && t.len() <= 19
                    && !tail.starts_with(['x', '/', ':', '\u{e9}']))
                .then(|| (t.parse::<u64>().unwrap(), t.len()));
                assert_eq!(integer(line.as_bytes(), 0), want, "{line:?}");
                let padded = format!("  {line}");
                assert_eq!(
                    integer(padded.as_bytes(), 2),
                    want.map(|(v, n)| (v, n + 2)),
                    "{padded:?}"
                );
            }
        }
        for b in 0..=255u8 {
            let mut line = *b"1234567 ";
            line[3] = b;
            let digit = b.is_ascii_digit();
            assert_eq!(integer(&line, 0).is_some(), digit || is_space(b), "{b}");
        }
    }

    #[test]
    fn spaces_as_is_space() {
        for line in [
            "",
            " ",
            "          x",
            " \t  \t        y",
            "\t\t",
            "a",
            "                ",
        ] {
            let want = line.bytes().take_while(|&c| is_space(c)).count();
            assert_eq!(skip_spaces(line.as_bytes(), 0), want, "{line:?}");
        }
    }

    #[test]
    fn plain_writer_gps_lines() {
        assert_eq!(writer_gps(" writer 0 gps: 133"), Some((0, "133")));
        assert_eq!(writer_gps("writer\t007 gps:\t5 "), Some((7, "5")));
        assert_eq!(writer_gps(" writer  12 gps: 5"), Some((12, "5")));
        assert_eq!(writer_gps(" writer 12  gps: 5"), Some((12, "5")));
        assert_eq!(writer_gps(" writer 12 gps:  5"), Some((12, "5")));
        assert_eq!(writer_gps(" writer 12 gps: 5 "), Some((12, "5")));
        assert_eq!(
            writer_gps(" writer 12 gps: 12345678901"),
            Some((12, "12345678901"))
        );
        for other in [
            "writer 0 gps: 133 x",
            "writer 0 gps:133",
            "writer0 gps: 133",
            "writer 0 gps: 1e3",
            "writer -1 gps: 3",
            "writers 0 gps: 133",
            "writer 0 gps: 99999999999999999999",
        ] {
            assert_eq!(writer_gps(other), None, "{other}");
        }
    }
}
