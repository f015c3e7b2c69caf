//! Errors that say what is wrong with oversized or out-of-range input, rather than blaming the
//! format: an over-long line gives its length, a number beyond f64 is named with its line.

use std::path::Path;

use ingest::{Error, ErrorKind};

fn parse_err(text: &[u8], format: Option<&str>) -> Error {
    match ingest::parse_bytes(Path::new("in.txt"), text, format) {
        Ok((_, ds)) => panic!("expected an error, parsed {:?}", ds.series),
        Err(e) => e,
    }
}

fn parse_error(e: &Error) -> (&ErrorKind, u64) {
    match e {
        Error::Parse { source, .. } => (&source.kind, source.pos.line),
        other => panic!("not a parse error: {other}"),
    }
}

#[test]
fn a_single_huge_line_is_reported_with_its_length() {
    let len = 3 * ingest::lines::MAX_LINE + 7;
    let text = vec![b'x'; len];
    let e = parse_err(&text, None);
    let (kind, line) = parse_error(&e);
    assert_eq!(line, 1);
    assert_eq!(
        kind,
        &ErrorKind::LineTooLong {
            length: len as u64,
            max: ingest::lines::MAX_LINE
        }
    );
    let msg = e.to_string();
    assert!(msg.contains(&format!("{len} bytes long")), "{msg}");
    assert!(!msg.contains("no parser recognises"), "{msg}");
}

#[test]
fn a_huge_line_after_real_data_names_its_line() {
    let mut text = b"Time: 1.5\nTime: 1.6\n".to_vec();
    text.extend(std::iter::repeat_n(b'7', 2 * ingest::lines::MAX_LINE));
    text.extend_from_slice(b"\r\nTime: 1.7\n");
    let e = parse_err(&text, Some("hackbench"));
    let (kind, line) = parse_error(&e);
    assert_eq!(line, 3);
    assert_eq!(
        kind,
        &ErrorKind::LineTooLong {
            length: 2 * ingest::lines::MAX_LINE as u64,
            max: ingest::lines::MAX_LINE
        }
    );
}

#[track_caller]
fn out_of_range(text: &str, line: u64, token: &str) {
    let e = parse_err(text.as_bytes(), None);
    let (kind, at) = parse_error(&e);
    assert_eq!(at, line, "{e}");
    match kind {
        ErrorKind::BadValue { value, why, .. } => {
            assert_eq!(value, token, "{e}");
            assert!(why.contains("out of range"), "{e}");
        }
        other => panic!("not a bad value: {other:?} ({e})"),
    }
}

#[test]
fn values_beyond_f64_are_named_with_their_line() {
    out_of_range(
        "{\"series\": [{\"metric\": \"boot\", \"unit\": \"s\",\n  \"samples\": [1.5,\n 1e999]}]}\n",
        3,
        "1e999",
    );
    out_of_range(
        "[{\"series\": [{\"metric\": \"x\", \"samples\": [-2e400]}]}]\n",
        1,
        "-2e400",
    );
    out_of_range("metric,value,unit\nboot,1.5,s\nboot,1e999,s\n", 3, "1e999");
    // Finite as written, infinite once converted to bytes.
    out_of_range("metric,value,unit\nrss,1e308,GiB\n", 2, "1e308");
    out_of_range("1.5\n2.5\n1e999\n", 3, "1e999");
}
