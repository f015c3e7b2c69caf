//! Lines stripped ahead by the thread that cuts a large input read as the parser would strip
//! them itself.

use ingest::lines::{strip_line, with_lines};

/// Lines that mail, terminals and editors produce: quoting, CRLF, tabs, Unicode spaces,
/// blank and space-only lines, text that is all quote marks.
fn mixed_input() -> Vec<u8> {
    let shapes = [
        "> real\t0m49.393s    0m49.632s    \r\n",
        ">> > Performance counter stats for 'make' (5 runs):\n",
        "\u{3000}> \u{a0}quoted behind wide spaces\u{2003}\n",
        "\n",
        "      \t  \n",
        ">>>\n",
        "  plain indented text  \t\r\n",
        "\u{a0}\n",
        "=> __schedule\n",
        "x\n",
    ];
    let mut data = Vec::new();
    for i in 0..60_000 {
        data.extend_from_slice(shapes[i % shapes.len()].as_bytes());
        if i % 7 == 0 {
            data.extend_from_slice(format!("{} {i}\n", " ".repeat(i % 13)).as_bytes());
        }
    }
    data.extend_from_slice(b"> last line without an end  ");
    data
}

#[test]
fn lines_stripped_ahead_match_lines_stripped_by_the_parser() {
    let data = mixed_input();
    // Several chunks, so that most are cut (and stripped) on the other thread.
    assert!(data.len() > 1 << 20);
    let expected: Vec<(u64, String)> = with_lines(&data[..], false, |lines| {
        let mut out = Vec::new();
        while let Some((no, line)) = lines.next_numbered().unwrap() {
            out.push((no, strip_line(line).to_string()));
        }
        out
    });
    let got: Vec<(u64, String)> = with_lines(&data[..], true, |lines| {
        let mut out = Vec::new();
        while let Some((no, line)) = lines.next_stripped().unwrap() {
            let line = line.to_string();
            if no % 1000 == 0 {
                // A line pushed back comes back stripped alike.
                lines.push_back();
                let (again_no, again) = lines.next_stripped().unwrap().unwrap();
                assert_eq!((again_no, again), (no, line.as_str()));
            }
            out.push((no, line));
        }
        out
    });
    assert_eq!(got.len(), expected.len());
    for (g, e) in got.iter().zip(&expected) {
        assert_eq!(g, e);
    }
    assert_eq!(
        got.last().map(|(_, l)| l.as_str()),
        Some("last line without an end")
    );
}

/// Lines that start with a digit read ahead: their number as the value, tag 1; others tag 0.
fn digits_ahead(line: &str, values: &mut Vec<f64>) -> u32 {
    let n: String = line.chars().take_while(char::is_ascii_digit).collect();
    match n.parse::<f64>() {
        Ok(v) => {
            values.push(v);
            1
        }
        Err(_) => 0,
    }
}

#[test]
fn lines_read_ahead_carry_what_the_reading_made_of_them() {
    let data = mixed_input();
    let (read, ahead, no_ahead) =
        ingest::lines::with_lines_ahead(&data[..], false, Some(digits_ahead), |lines| {
            let (mut read, mut ahead, mut no_ahead) = (0, 0, 0);
            while let Some((no, line, got)) = lines.next_stripped_ahead().unwrap() {
                read += 1;
                let line = line.to_string();
                let mut want = Vec::new();
                let tag = digits_ahead(&line, &mut want);
                match got {
                    // The reading of the line itself, never another line's.
                    Some((t, values)) => {
                        assert_eq!((t, values), (tag, &want[..]), "line {no}: {line:?}");
                        ahead += 1;
                    }
                    None => no_ahead += 1,
                }
                if no % 1000 == 7 {
                    // A line pushed back comes back with its reading.
                    let got = got.map(|(t, v)| (t, v.to_vec()));
                    lines.push_back();
                    let (again_no, again, again_got) =
                        lines.next_stripped_ahead().unwrap().unwrap();
                    assert_eq!((again_no, again), (no, line.as_str()));
                    assert_eq!(again_got.map(|(t, v)| (t, v.to_vec())), got);
                }
            }
            (read, ahead, no_ahead)
        });
    // The lines with a number (every seventh shape) are read ahead past the first chunk.
    assert!(ahead > 5_000, "{ahead} of {read} read ahead");
    assert!(no_ahead > ahead, "{no_ahead}");
    // A small input is read on one thread: nothing ahead.
    ingest::lines::with_lines_ahead(&b"1\n2\n"[..], true, Some(digits_ahead), |lines| {
        while let Some((_, _, got)) = lines.next_stripped_ahead().unwrap() {
            assert!(got.is_none());
        }
    });
}
