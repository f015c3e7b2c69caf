//! Undoing what mail transport did to a benchmark's text before a parser sees it: a whole raw
//! message given as input (RFC 5322 headers at the top) is decoded when it says
//! `Content-Transfer-Encoding: quoted-printable` or `base64`, is `multipart/*` (text parts and
//! text attachments are kept, in order), or is `format=flowed` (soft-wrapped lines joined).
//! Plain 7bit/8bit mail and everything else pass through untouched, streamed.

use std::borrow::Cow;

/// Largest raw message decoded in memory; mails with benchmark results are far smaller.
pub const MAX_MAIL_BYTES: usize = 64 << 20;

/// What the headers of a raw message ask to undo.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Encoding {
    /// `quoted-printable`, `base64` or `multipart` (decoded by a MIME parser).
    pub transfer: Option<&'static str>,
    /// `format=flowed`, and whether its trailing space is deleted (`delsp=yes`).
    pub flowed: bool,
    pub delsp: bool,
}

impl Encoding {
    /// A short description for the parsed file's metadata.
    pub fn describe(&self) -> String {
        let mut parts: Vec<&str> = self.transfer.into_iter().collect();
        if self.flowed {
            parts.push("format=flowed");
        }
        parts.join(", ")
    }
}

/// The header block at the start of `head`, when the input starts as a raw message does
/// (`Name: value` lines up to a blank line).
fn header_block(head: &[u8]) -> Option<&[u8]> {
    let mut end = 0;
    for (lines, line) in head.split_inclusive(|&b| b == b'\n').enumerate() {
        let text = trim_eol(line);
        if text.is_empty() {
            return (lines > 0).then_some(&head[..end]);
        }
        let continuation = text.starts_with(b" ") || text.starts_with(b"\t");
        let field = text.iter().position(|&b| b == b':').is_some_and(|i| {
            i > 0
                && text[..i]
                    .iter()
                    .all(|b| b.is_ascii_alphanumeric() || *b == b'-')
        });
        if !(field || continuation && lines > 0) {
            return None;
        }
        end += line.len();
    }
    None
}

fn trim_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// What needs decoding in a raw message starting with `head`; None for anything else.
pub fn sniff(head: &[u8]) -> Option<Encoding> {
    let headers = String::from_utf8_lossy(header_block(head)?).to_ascii_lowercase();
    // Unfold continuation lines so a parameter on the next line is seen.
    let headers = headers
        .replace("\r\n", "\n")
        .replace("\n ", " ")
        .replace("\n\t", " ");
    let mut enc = Encoding::default();
    for line in headers.lines() {
        if let Some(v) = line.strip_prefix("content-transfer-encoding:") {
            match v.trim() {
                "quoted-printable" => enc.transfer = Some("quoted-printable"),
                "base64" => enc.transfer = Some("base64"),
                _ => {}
            }
        } else if let Some(v) = line.strip_prefix("content-type:") {
            let v = v.trim();
            if v.starts_with("multipart/") {
                enc.transfer = Some("multipart");
            }
            let params: Vec<String> = v.split(';').map(|p| p.replace([' ', '"'], "")).collect();
            enc.flowed = params.iter().any(|p| p == "format=flowed");
            enc.delsp = params.iter().any(|p| p == "delsp=yes");
        }
    }
    (enc.transfer.is_some() || enc.flowed).then_some(enc)
}

/// The text a parser should see: the original header lines, a blank line, then the decoded
/// text of the body (each text part, separated by a blank line).
pub fn decode(raw: &[u8], enc: &Encoding) -> Vec<u8> {
    let headers = header_block(raw).unwrap_or_default();
    let mut out = Vec::with_capacity(raw.len());
    out.extend_from_slice(headers);
    out.push(b'\n');
    let body_start = (headers.len()..raw.len())
        .find(|&i| raw[i] == b'\n')
        .map_or(raw.len(), |i| i + 1);
    let texts: Vec<Cow<'_, [u8]>> = match enc.transfer {
        None => vec![Cow::Borrowed(&raw[body_start..])],
        Some(_) => mime_texts(raw),
    };
    for (i, t) in texts.iter().enumerate() {
        if i > 0 && !out.ends_with(b"\n\n") {
            out.extend_from_slice(if out.ends_with(b"\n") { b"\n" } else { b"\n\n" });
        }
        if enc.flowed {
            unflow(t, enc.delsp, &mut out);
        } else {
            out.extend_from_slice(t);
        }
    }
    out
}

/// Decoded text parts of a MIME message, including text attachments and binary parts that are
/// in fact UTF-8 text (a `.txt` sent as application/octet-stream).
fn mime_texts(raw: &[u8]) -> Vec<Cow<'_, [u8]>> {
    use mail_parser::PartType;
    let Some(msg) = mail_parser::MessageParser::default().parse(raw) else {
        return vec![Cow::Borrowed(raw)];
    };
    let mut out = Vec::new();
    for part in &msg.parts {
        match &part.body {
            PartType::Text(t) => out.push(Cow::Owned(t.as_bytes().to_vec())),
            PartType::Binary(b) | PartType::InlineBinary(b)
                if !b.contains(&0) && std::str::from_utf8(b).is_ok() =>
            {
                out.push(Cow::Owned(b.to_vec()));
            }
            _ => {}
        }
    }
    out
}

/// RFC 3676: a line ending in a space continues on the next one (except the signature
/// separator `-- `); a leading space added for stuffing is removed.
fn unflow(text: &[u8], delsp: bool, out: &mut Vec<u8>) {
    for line in text.split_inclusive(|&b| b == b'\n') {
        let has_eol = line.ends_with(b"\n");
        let mut l = trim_eol(line);
        if let Some(rest) = l.strip_prefix(b" ") {
            l = rest;
        }
        let soft = l.ends_with(b" ") && l != b"-- " && has_eol;
        if soft {
            out.extend_from_slice(if delsp { &l[..l.len() - 1] } else { l });
        } else {
            out.extend_from_slice(l);
            if has_eol {
                out.push(b'\n');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_printable_soft_breaks() {
        let raw = b"Subject: x\nContent-Transfer-Encoding: quoted-printable\n\nT: 0 Max:   =\n 3846\na=20b =3D c\n";
        let enc = sniff(raw).unwrap();
        assert_eq!(enc.transfer, Some("quoted-printable"));
        let text = String::from_utf8(decode(raw, &enc)).unwrap();
        assert!(text.contains("T: 0 Max:    3846\n"), "{text:?}");
        assert!(text.contains("a b = c"), "{text:?}");
        assert!(text.starts_with("Subject: x\n"));
    }

    #[test]
    fn flowed_lines_are_joined() {
        let raw = b"Content-Type: text/plain; charset=UTF-8; format=flowed\n\nreal 0m1.0s and \nmore\n-- \nsig\n";
        let enc = sniff(raw).unwrap();
        let text = String::from_utf8(decode(raw, &enc)).unwrap();
        assert!(
            text.contains("real 0m1.0s and more\n-- \nsig\n"),
            "{text:?}"
        );
    }

    #[test]
    fn base64_attachment_of_a_multipart_message() {
        let raw = b"From: a@b\nContent-Type: multipart/mixed; boundary=\"XX\"\n\n--XX\nContent-Type: text/plain\n\nbefore:\n--XX\nContent-Type: text/plain\nContent-Disposition: attachment; filename=r.txt\nContent-Transfer-Encoding: base64\n\nVGltZTogMS41ClRpbWU6IDEuNgo=\n--XX--\n";
        let enc = sniff(raw).unwrap();
        assert_eq!(enc.transfer, Some("multipart"));
        let text = String::from_utf8(decode(raw, &enc)).unwrap();
        assert!(text.contains("before:"), "{text:?}");
        assert!(text.contains("Time: 1.5\nTime: 1.6\n"), "{text:?}");
    }

    #[test]
    fn plain_text_and_plain_mail_are_left_alone() {
        assert_eq!(sniff(b"real 0m1.0s\n"), None);
        assert_eq!(
            sniff(b"Subject: x\nContent-Transfer-Encoding: 8bit\n\nbody\n"),
            None
        );
        assert_eq!(sniff(b"Time: 1.5\nTime: 1.6\n"), None);
    }
}
