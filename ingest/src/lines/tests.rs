use super::*;
use crate::error::ErrorKind;

#[test]
fn strips_quotes_and_indent() {
    assert_eq!(strip_mail("> > real\t0m1.0s"), "real\t0m1.0s");
    assert_eq!(strip_mail(">>\tTime: 1.0"), "Time: 1.0");
    assert_eq!(strip_mail("    plain"), "plain");
}

#[test]
fn strips_dmesg() {
    assert_eq!(strip_dmesg("[   12.920044] rcu-scale: x"), "rcu-scale: x");
    assert_eq!(strip_dmesg("[...] keep"), "[...] keep");
}

#[test]
fn words_split_as_split_whitespace_does() {
    for s in [
        "",
        "   ",
        "a",
        " a  b\tc\x0bd\x0ce\r\nf ",
        "kfunc_000001   123    45.6 us",
        "caf\u{e9} \u{a0}x\u{2003}y  z",
        "\u{85}a",
    ] {
        let a: Vec<&str> = words(s).collect();
        let b: Vec<&str> = s.split_whitespace().collect();
        assert_eq!(a, b, "{s:?}");
    }
}

#[test]
fn trims_as_str_trims() {
    for s in [
        "",
        " ",
        "\t a b \r",
        "\u{a0} x \u{2003}",
        " \u{a0}\u{85}",
        "\u{e9}t\u{e9}",
        "\x0b\x0cx\x0b",
        "                  x   \t             ",
        "         \u{a0}        ",
        "                ",
    ] {
        assert_eq!(trim_start(s), s.trim_start(), "{s:?}");
        assert_eq!(trim_end(s), s.trim_end(), "{s:?}");
        assert_eq!(trim(s), s.trim(), "{s:?}");
    }
}

proptest::proptest! {
    // Runs of spaces across the eight-byte steps, mixed with tabs, other ASCII spaces,
    // Unicode spaces and letters.
    #[test]
    fn trims_as_str_trims_any_mix(
        pieces in proptest::collection::vec(
            (0usize..20, "[\\t\\r\\x0B\\x0Cax\\x{a0}\\x{3000}]"),
            0..5,
        ),
        tail in 0usize..20,
    ) {
        let mut s: String = pieces.iter().map(|(n, c)| " ".repeat(*n) + c).collect();
        s.push_str(&" ".repeat(tail));
        proptest::prop_assert_eq!(trim_start(&s), s.trim_start());
        proptest::prop_assert_eq!(trim_end(&s), s.trim_end());
        proptest::prop_assert_eq!(trim(&s), s.trim());
    }
}

/// The byte-at-a-time definition [`graphic_word`] stands for.
fn graphic_bytes(w: [u8; 8], refused: &[u8]) -> bool {
    w.iter()
        .all(|&c| (0x21..=0x7e).contains(&c) && !refused.contains(&c))
}

#[test]
fn graphic_word_agrees_with_one_byte_at_a_time() {
    // Every byte value in every position, beside graphic bytes, for one refused byte
    // (latency's tokens) and two (function_graph's call names).
    for pos in 0..8 {
        for v in 0..=255u8 {
            let mut w = *b"abcdefgh";
            w[pos] = v;
            let word = u64::from_le_bytes(w);
            for refused in [b':', b'|'] {
                assert_eq!(
                    graphic_word(word, [refused]),
                    graphic_bytes(w, &[refused]),
                    "{w:?}"
                );
            }
            assert_eq!(graphic_word(word, *b"(/"), graphic_bytes(w, b"(/"), "{w:?}");
            let first = if graphic_bytes(w, b":") { 8 } else { pos };
            assert_eq!(first_other(w, b':'), first, "{w:?}");
        }
    }
}

/// Where [`other_bytes`] says the first byte that is not a token byte is.
fn first_other(w: [u8; 8], refused: u8) -> usize {
    other_bytes(u64::from_le_bytes(w), [refused]).trailing_zeros() as usize / 8
}

proptest::proptest! {
    #[test]
    fn graphic_word_any_eight_bytes(
        w in proptest::prelude::any::<[u8; 8]>(),
        // Mostly token bytes, so that the first other byte is anywhere, often before others.
        mostly in proptest::array::uniform8(proptest::prop_oneof![
            6 => 0x21..0x7fu8,
            1 => proptest::prelude::any::<u8>(),
        ]),
        refused in 0x21..0x7fu8,
    ) {
        proptest::prop_assert_eq!(
            graphic_word(u64::from_le_bytes(w), [refused]),
            graphic_bytes(w, &[refused])
        );
        for w in [w, mostly] {
            let first = (0..8).find(|&i| !graphic_bytes([w[i]; 8], &[refused])).unwrap_or(8);
            proptest::prop_assert_eq!(first_other(w, refused), first);
        }
    }
}

#[test]
fn finds_as_str_find() {
    for (hay, needle) in [
        ("a grace-period duration: 5", " grace-period duration:"),
        ("x = y = 3", " = "),
        ("  ", " "),
        ("abc", ""),
        ("", "a"),
        ("ab", "abc"),
        ("rcu-scale: rcu-scale:", "-scale:"),
        ("aaab", "aab"),
        ("\u{e9}t\u{e9} \u{e9}", " \u{e9}"),
    ] {
        assert_eq!(
            find_str(hay, needle),
            hay.find(needle),
            "{hay:?} {needle:?}"
        );
    }
}

proptest::proptest! {
    #[test]
    fn finds_as_str_find_any(
        hay in "[ ab\u{e9}y]{0,30}",
        needle in "[ ab\u{e9}y]{0,5}",
    ) {
        proptest::prop_assert_eq!(find_str(&hay, &needle), hay.find(needle.as_str()));
    }
}

#[test]
fn numbers() {
    assert_eq!(parse_number("3,228,188"), Some(3228188.0));
    assert_eq!(parse_number("12451963"), Some(12451963.0));
    assert_eq!(parse_number("83723.452481"), Some(83723.452481));
    assert_eq!(parse_number("1,2"), None);
    assert_eq!(parse_number("abc"), None);
    assert_eq!(parse_number("nan"), None);
    assert_eq!(parse_number("-"), None);
    assert_eq!(parse_number("1.2.3"), None);
    assert_eq!(parse_number("."), None);
    assert_eq!(parse_number("-.5"), Some(-0.5));
    assert_eq!(parse_number("+1,234.5"), Some(1234.5));
    assert_eq!(parse_number("1234,567"), None);
}

#[test]
fn reads_crlf_and_counts_lines() {
    let data = b"a\r\nb\nc";
    let mut r: &[u8] = data;
    let mut lines = Lines::new(&mut r);
    assert_eq!(lines.next_line().unwrap(), Some("a"));
    assert_eq!(lines.next_line().unwrap(), Some("b"));
    assert_eq!(lines.next_line().unwrap(), Some("c"));
    assert_eq!(lines.line_no(), 3);
    assert_eq!(lines.next_line().unwrap(), None);
}

#[test]
fn long_lines_across_refills_and_limits() {
    let mut data = Vec::new();
    for i in 0..50_000 {
        data.extend_from_slice(format!("line {i} {}\n", "x".repeat(i % 97)).as_bytes());
    }
    let big = "y".repeat(chunks::READ_CHUNK * 3);
    data.extend_from_slice(big.as_bytes());
    data.extend_from_slice(b"\nlast");
    let mut r: &[u8] = &data;
    let mut lines = Lines::new(&mut r);
    for i in 0..50_000 {
        let l = lines.next_line().unwrap().unwrap();
        assert!(l.starts_with(&format!("line {i} ")), "{l}");
        assert_eq!(l.len(), format!("line {i} ").len() + i % 97);
    }
    assert_eq!(
        lines.next_line().unwrap().unwrap().len(),
        chunks::READ_CHUNK * 3
    );
    assert_eq!(lines.next_line().unwrap(), Some("last"));
    assert_eq!(lines.next_line().unwrap(), None);

    let huge = vec![b'z'; MAX_LINE * 3 + 10];
    let mut r: &[u8] = &huge;
    let mut lines = Lines::new(&mut r);
    let err = lines.next_line().unwrap_err();
    assert_eq!(err.pos.line, 1);
    assert_eq!(
        err.kind,
        ErrorKind::LineTooLong {
            length: (MAX_LINE * 3 + 10) as u64,
            max: MAX_LINE
        }
    );
}

#[test]
fn invalid_utf8_is_replaced_and_push_back_repeats() {
    let data = b"ok\nbad \xff byte\n";
    let mut r: &[u8] = data;
    let mut lines = Lines::new(&mut r);
    lines.next_line().unwrap();
    assert_eq!(lines.next_line().unwrap(), Some("bad \u{fffd} byte"));
    lines.push_back();
    assert_eq!(lines.next_line().unwrap(), Some("bad \u{fffd} byte"));
    assert_eq!(lines.line_no(), 2);
}

#[test]
fn nul_is_binary() {
    let data = b"ok\nbad\0x\n";
    let mut r: &[u8] = data;
    let mut lines = Lines::new(&mut r);
    lines.next_line().unwrap();
    let err = lines.next_line().unwrap_err();
    assert_eq!(err.pos.line, 2);
    assert!(matches!(err.kind, ErrorKind::Binary { offset: 6 }));
}

/// Every line with its number, and the error the input ends with, through [`with_lines`].
fn read_all(reader: impl Read + Send) -> (Vec<(u64, String)>, Option<ParseError>) {
    with_lines(reader, false, |lines| {
        let mut out = Vec::new();
        loop {
            match lines.next_numbered() {
                Ok(Some((n, l))) => out.push((n, l.to_string())),
                Ok(None) => return (out, None),
                Err(e) => {
                    // Asked again, the input ends with the same error.
                    assert_eq!(lines.next_line().unwrap_err(), e);
                    return (out, Some(e));
                }
            }
        }
    })
}

/// `n` rows `row I vvv...` (I modulo `pad` letters) ending with `ending`, then `last` without
/// one.
fn numbered_rows(n: usize, pad: usize, ending: &str) -> Vec<u8> {
    let mut data = Vec::new();
    for i in 0..n {
        data.extend_from_slice(format!("row {i} {}{ending}", "v".repeat(i % pad)).as_bytes());
    }
    data.extend_from_slice(b"last");
    data
}

#[test]
fn a_large_input_reads_as_a_small_one() {
    // Many chunks, cut on a thread: lines, numbers, CRLF and a last line without an
    // ending come out as the reader on one thread gives them.
    let data = numbered_rows(200_000, 41, "\r\n");
    assert!(data.len() > 4 * chunks::READ_CHUNK);
    let (lines, err) = read_all(data.as_slice());
    assert!(err.is_none());
    let mut r: &[u8] = &data;
    let mut inline = Lines::new(&mut r);
    let mut n = 0;
    while let Some((no, l)) = inline.next_numbered().unwrap() {
        assert_eq!((no, l), (lines[n].0, lines[n].1.as_str()));
        n += 1;
    }
    assert_eq!(n, lines.len());
    assert_eq!(lines[1234].1, format!("row 1234 {}", "v".repeat(1234 % 41)));
    assert_eq!(lines.last().unwrap(), &(200_001, "last".to_string()));
}

#[test]
fn errors_far_into_a_large_input_name_their_line() {
    let mut data = Vec::new();
    for i in 0..100_000 {
        data.extend_from_slice(format!("line {i}\n").as_bytes());
    }
    let head = data.clone();
    // A NUL: the lines before it are read, then the error names its line.
    data.extend_from_slice(b"bad\0x\nmore\n");
    data.extend_from_slice(&b"after\n".repeat(50_000));
    let (lines, err) = read_all(data.as_slice());
    assert_eq!(lines.len(), 100_000);
    let err = err.expect("a NUL is an error");
    assert_eq!(err.pos.line, 100_001);
    assert_eq!(
        err.kind,
        ErrorKind::Binary {
            offset: head.len() as u64 + 3
        }
    );
    // A line too long, then more lines.
    let mut data = head;
    data.extend_from_slice(&vec![b'y'; 2 * MAX_LINE + 5]);
    data.extend_from_slice(b"\nafter\n");
    let (lines, err) = read_all(data.as_slice());
    assert_eq!(lines.len(), 100_000);
    let err = err.expect("a line too long is an error");
    assert_eq!(err.pos.line, 100_001);
    assert_eq!(
        err.kind,
        ErrorKind::LineTooLong {
            length: 2 * MAX_LINE as u64 + 5,
            max: MAX_LINE
        }
    );
}

#[test]
fn a_parser_that_stops_early_stops_the_reader() {
    // The cutting thread is blocked on a full queue when the parser returns: it must end,
    // or this test never does.
    let data = b"0123456789\n".repeat(2_000_000);
    let first = with_lines(&data[..], false, |lines| {
        lines.next_line().unwrap().map(str::len)
    });
    assert_eq!(first, Some(10));
}

/// A reader as a pipe or a socket is: short reads of varying length, now and then an
/// interrupted one, and (when `fail_after` is set) an error once that many bytes were given.
struct Trickle<'a> {
    data: &'a [u8],
    at: usize,
    calls: usize,
    fail_after: Option<usize>,
}

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.calls += 1;
        if self.calls.is_multiple_of(7) {
            return Err(std::io::ErrorKind::Interrupted.into());
        }
        if self.fail_after.is_some_and(|n| self.at >= n) {
            return Err(std::io::Error::other("the rig went away"));
        }
        let piece = 1 + (self.calls * 7919) % 9000;
        let end = self
            .data
            .len()
            .min(self.at + piece)
            .min(self.at + buf.len());
        // Short of `fail_after` here, which the next read then fails at.
        let end = self.fail_after.map_or(end, |n| end.min(n));
        let n = end - self.at;
        buf[..n].copy_from_slice(&self.data[self.at..end]);
        self.at = end;
        Ok(n)
    }
}

#[test]
fn short_and_interrupted_reads_give_the_same_lines_and_a_failing_read_its_line() {
    let data = numbered_rows(60_000, 53, "\n");
    let whole = read_all(data.as_slice());
    assert!(whole.1.is_none());
    let trickle = |fail_after| Trickle {
        data: &data,
        at: 0,
        calls: 0,
        fail_after,
    };
    assert_eq!(read_all(trickle(None)), whole);
    // An error within the first read, and one after 1 MB: every line before the one it cut
    // is read, then it is reported at the line after them.
    for cut in [3_000, 1_000_000] {
        let (lines, err) = read_all(trickle(Some(cut)));
        let complete = memchr::memchr_iter(b'\n', &data[..cut]).count();
        assert_eq!(lines.len(), complete, "{cut}");
        assert_eq!(lines[..], whole.0[..complete]);
        let err = err.expect("a failing read is an error");
        assert_eq!(err.pos.line, complete as u64 + 1, "{cut}");
        assert!(
            matches!(&err.kind, ErrorKind::Io(m) if m.contains("the rig went away")),
            "{err:?}"
        );
    }
}

#[test]
fn lines_stripped_as_bytes_are_stripped_as_text() {
    let lines = [
        "",
        "   ",
        "> ",
        ">> > real 0m1.0s  ",
        "\t> x\r",
        "plain",
        "x \u{a0}",
        "\u{a0}> y",
        "> \u{2003}z",
        ">\u{a0}",
        "é ",
        " é",
        "> >",
        "a > b ",
    ];
    for line in lines {
        // The general path: the trims that know Unicode's spaces.
        let general = trim_end(strip_mail(line));
        let stripped = strip_line(line);
        assert_eq!(stripped, general, "{line:?}");
        assert_eq!(
            stripped.as_ptr(),
            general.as_ptr(),
            "{line:?}: where it starts"
        );
    }
}

/// A [`ReadAhead`] for the test: rows whose number is a multiple of 3 are read (tag 1, the
/// number and its double), the others left (tag 0).
fn every_third(line: &str, values: &mut Vec<f64>) -> u32 {
    match line.split(' ').nth(1).and_then(|n| n.parse::<u32>().ok()) {
        Some(n) if n % 3 == 0 => {
            values.extend([f64::from(n), f64::from(n) * 2.0]);
            1
        }
        _ => 0,
    }
}

#[test]
fn lines_read_ahead_carry_their_own_values_across_chunks_and_a_push_back() {
    // Quoted rows, so that the cutting thread strips them too, and every fifth line blank
    // once stripped, which is not read ahead.
    let mut data = Vec::new();
    for i in 0..150_000 {
        let line = match i % 5 {
            4 => "> \t".to_string(),
            _ => format!("> row {i} {}", "v".repeat(i % 29)),
        };
        data.extend_from_slice(format!("{line}\n").as_bytes());
    }
    assert!(data.len() > 4 * chunks::READ_CHUNK);
    let f: ReadAhead = every_third;
    let (read, ahead) = with_lines_ahead(data.as_slice(), true, Some(f), |lines| {
        let (mut read, mut ahead) = (0, 0);
        let mut pushed = false;
        while let Some((no, line, got)) = lines.next_stripped_ahead().unwrap() {
            let i = no - 1;
            let row = match i % 5 {
                4 => String::new(),
                _ => format!("row {i} {}", "v".repeat(i as usize % 29)),
            };
            assert_eq!(line, row.trim_end());
            let mut expected = Vec::new();
            let tag = every_third(line, &mut expected);
            match got {
                // The first chunk is read on this thread, without reading ahead.
                None => assert!(tag == 0 || (i as usize) < chunks::READ_CHUNK / 20, "{i}"),
                Some((t, values)) => {
                    assert_eq!((t, values), (tag, expected.as_slice()), "line {no}");
                    ahead += 1;
                }
            }
            // Every 1000th line read twice: the same line and values again.
            if i % 1000 == 0 && !pushed {
                lines.push_back();
                pushed = true;
                continue;
            }
            pushed = false;
            read += 1;
        }
        (read, ahead)
    });
    assert_eq!(read, 150_000);
    // Every third line but the blank ones and the first chunk's, and the lines pushed back,
    // twice.
    assert!(ahead > 36_000, "{ahead}");
}

#[test]
fn space_table_is_char_whitespace() {
    for c in 0..=255u8 {
        assert_eq!(
            is_space(c),
            c.is_ascii() && char::from(c).is_whitespace(),
            "{c}"
        );
    }
}
