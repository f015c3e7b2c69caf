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
