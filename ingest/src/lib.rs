//! quiescent's input side: parsers for kernel benchmark and tracer outputs and format detection.
//!
//! Data flows one way: bytes -> [`detect`](formats::detect) -> [`Format::parse`] into a
//! [`Sink`] -> (a [`Dataset`] in memory, or the store crate's import streaming into one
//! transaction).

pub mod error;
pub mod formats;
pub mod intern;
pub mod lines;
pub mod mail;
pub mod model;
pub mod summary;

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

pub use error::{Error, ErrorKind, ParseError, Position};
pub use formats::Format;
pub use model::{Ctx, Dataset, Direction, Series, SeriesKey, SeriesSpec, Sink, Unit, Warning};
pub use summary::SeriesTable;

/// What parsing one input produced, besides what went into the sink.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseSummary {
    pub format: &'static str,
    pub samples: u64,
    pub warnings: u64,
}

/// A parsed file as `quiescent parse --json` prints it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ParsedFile {
    pub path: String,
    pub format: &'static str,
    #[serde(flatten)]
    pub dataset: Dataset,
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Whether input starting with `head` is a gzip stream, which is decompressed before it is
/// parsed (and may be much larger then).
pub fn is_gzip(head: &[u8]) -> bool {
    head.starts_with(&GZIP_MAGIC)
}

/// Parses a reader into `sink`. `name` names the input in errors and gives parsers the file
/// name (`function3` -> CPU 3). `format` forces a format; otherwise the content is sniffed.
/// Gzip input is decompressed transparently.
///
/// The head is read into its own buffer, grown as bytes come, and the rest goes straight to
/// the line reader: a buffered reader of a fixed size in between zeroed (and, at this size,
/// mapped) its whole buffer for every file, which for an upload's small files cost more than
/// parsing them.
pub fn parse_reader(
    name: &Path,
    mut reader: impl Read + Send,
    format: Option<&str>,
    sink: &mut dyn Sink,
) -> Result<ParseSummary, Error> {
    let head = read_head(name, &mut reader)?;
    if is_gzip(&head) {
        let gz = flate2::read::MultiGzDecoder::new(std::io::Cursor::new(head).chain(reader));
        return parse_plain(name, gz, format, sink, true);
    }
    parse_head(name, head, reader, format, sink, true)
}

/// Up to [`formats::SNIFF_BYTES`] from the start of `reader`.
fn read_head(name: &Path, reader: &mut impl Read) -> Result<Vec<u8>, Error> {
    let mut head = Vec::new();
    reader
        .take(formats::SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(|source| Error::Io {
            path: name.to_path_buf(),
            source,
        })?;
    Ok(head)
}

fn parse_plain(
    name: &Path,
    mut reader: impl Read + Send,
    format: Option<&str>,
    sink: &mut dyn Sink,
    undo_mail: bool,
) -> Result<ParseSummary, Error> {
    let head = read_head(name, &mut reader)?;
    parse_head(name, head, reader, format, sink, undo_mail)
}

/// Parses `head` (the first [`formats::SNIFF_BYTES`] of the input, fewer only when that is
/// all of it) followed by the rest in `reader`.
fn parse_head(
    name: &Path,
    head: Vec<u8>,
    mut reader: impl Read + Send,
    format: Option<&str>,
    sink: &mut dyn Sink,
    undo_mail: bool,
) -> Result<ParseSummary, Error> {
    let parse_err = |format: &'static str, source: ParseError| Error::Parse {
        path: name.to_path_buf(),
        format,
        source,
    };
    if head.is_empty() {
        return Err(parse_err(
            format
                .and_then(formats::by_name)
                .map_or("unknown", |f| f.name()),
            ParseError::new(ErrorKind::Empty, 0),
        ));
    }
    if let Some(pos) = memchr::memchr(0, &head) {
        return Err(parse_err(
            "unknown",
            ParseError::new(ErrorKind::Binary { offset: pos as u64 }, 0),
        ));
    }
    if undo_mail && let Some(enc) = mail::sniff(&head) {
        // A raw message whose body is encoded: decoded whole (bounded), then parsed as text.
        let mut raw = head;
        reader
            .take((mail::MAX_MAIL_BYTES + 1 - raw.len().min(mail::MAX_MAIL_BYTES)) as u64)
            .read_to_end(&mut raw)
            .map_err(|source| Error::Io {
                path: name.to_path_buf(),
                source,
            })?;
        if raw.len() > mail::MAX_MAIL_BYTES {
            return Err(parse_err(
                "unknown",
                ParseError::new(
                    ErrorKind::Unsupported(format!(
                        "a {} mail larger than {} MiB is not decoded",
                        enc.describe(),
                        mail::MAX_MAIL_BYTES >> 20
                    )),
                    0,
                ),
            ));
        }
        let text = mail::decode(&raw, &enc);
        drop(raw);
        sink.meta(
            "mail_decoded",
            format!("{} (line numbers count the decoded text)", enc.describe()),
        );
        return parse_plain(name, text.as_slice(), format, sink, false);
    }
    let fmt: &'static dyn Format = match format {
        Some(n) => formats::by_name(n).ok_or_else(|| Error::UnknownFormat {
            path: name.to_path_buf(),
            name: n.to_string(),
            supported: formats::supported_names(),
        })?,
        None => {
            let text = String::from_utf8_lossy(&head);
            match formats::detect(&text) {
                Ok(f) => f,
                Err(reason) => {
                    // Nothing recognised in a head that is one unfinished line: say that
                    // rather than blame the content.
                    if let Some((line, length)) =
                        long_last_line(&head, &mut BufReader::new(&mut reader)).map_err(
                            |source| Error::Io {
                                path: name.to_path_buf(),
                                source,
                            },
                        )?
                    {
                        return Err(parse_err(
                            "unknown",
                            ParseError::new(
                                ErrorKind::LineTooLong {
                                    length,
                                    max: lines::MAX_LINE,
                                },
                                line,
                            ),
                        ));
                    }
                    return Err(Error::Detect {
                        path: name.to_path_buf(),
                        reason,
                    });
                }
            }
        }
    };
    let file_name = name.file_name().map(|s| s.to_string_lossy().into_owned());
    let chained = std::io::Cursor::new(head).chain(reader);
    let mut ctx = Ctx::new(sink, file_name);
    lines::with_lines_ahead(chained, fmt.reads_stripped(), fmt.read_ahead(), |lines| {
        fmt.parse(lines, &mut ctx)
    })
    .map_err(|e| parse_err(fmt.name(), e))?;
    Ok(ParseSummary {
        format: fmt.name(),
        samples: ctx.samples(),
        warnings: ctx.warnings(),
    })
}

/// When the head is full and ends inside a line longer than [`lines::MAX_LINE`]: that line's
/// number and length, read on (and discarded) from `rest`.
fn long_last_line(head: &[u8], rest: &mut impl BufRead) -> std::io::Result<Option<(u64, u64)>> {
    if head.len() < formats::SNIFF_BYTES {
        return Ok(None);
    }
    let newlines = memchr::memchr_iter(b'\n', head).count() as u64;
    let start = memchr::memrchr(b'\n', head).map_or(0, |i| i + 1);
    let mut length = (head.len() - start) as u64;
    loop {
        let buf = rest.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        if let Some(i) = memchr::memchr(b'\n', buf) {
            length += i as u64;
            break;
        }
        length += buf.len() as u64;
        let n = buf.len();
        rest.consume(n);
    }
    Ok((length > lines::MAX_LINE as u64).then_some((newlines + 1, length)))
}

/// Parses bytes into a [`Dataset`].
pub fn parse_bytes(
    name: &Path,
    bytes: &[u8],
    format: Option<&str>,
) -> Result<(ParseSummary, Dataset), Error> {
    let mut ds = Dataset::new();
    let summary = parse_reader(name, bytes, format, &mut ds)?;
    Ok((summary, ds))
}

/// Parses one file into a [`Dataset`].
pub fn parse_file(path: &Path, format: Option<&str>) -> Result<ParsedFile, Error> {
    let file = File::open(path).map_err(|source| Error::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let mut ds = Dataset::new();
    let summary = parse_reader(path, file, format, &mut ds)?;
    Ok(ParsedFile {
        path: path.display().to_string(),
        format: summary.format,
        dataset: ds,
    })
}

/// Expands directories into the regular files below them, sorted by a natural order (so
/// `function10` follows `function9`). Hidden files are skipped.
pub fn expand_paths(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
    let mut out = Vec::new();
    for p in paths {
        // Standard input only when asked for by name; the caller reads it.
        if p.as_os_str() == "-" {
            out.push(p.clone());
            continue;
        }
        let md = std::fs::metadata(p).map_err(|source| Error::Io {
            path: p.clone(),
            source,
        })?;
        if md.is_dir() {
            let mut files = Vec::new();
            walk(p, &mut files)?;
            files.sort_by(|a, b| natural_cmp(&a.to_string_lossy(), &b.to_string_lossy()));
            out.extend(files);
        } else if md.is_file() {
            out.push(p.clone());
        } else {
            // A FIFO would block forever and a device like /dev/zero never ends.
            return Err(Error::Invalid(format!(
                "{}: not a regular file or directory (a FIFO, device or socket); to read standard input pass -",
                p.display()
            )));
        }
    }
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), Error> {
    let rd = std::fs::read_dir(dir).map_err(|source| Error::Io {
        path: dir.to_path_buf(),
        source,
    })?;
    for entry in rd {
        let entry = entry.map_err(|source| Error::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let path = entry.path();
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let ft = entry.file_type().map_err(|source| Error::Io {
            path: path.clone(),
            source,
        })?;
        if ft.is_dir() {
            walk(&path, out)?;
        } else if ft.is_file() {
            out.push(path);
        }
    }
    Ok(())
}

/// Compares strings so that runs of digits order by value.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let (mut a, mut b) = (a.as_bytes(), b.as_bytes());
    loop {
        match (a.first(), b.first()) {
            (None, None) => return std::cmp::Ordering::Equal,
            (None, _) => return std::cmp::Ordering::Less,
            (_, None) => return std::cmp::Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let na = a.iter().take_while(|c| c.is_ascii_digit()).count();
                let nb = b.iter().take_while(|c| c.is_ascii_digit()).count();
                let da = std::str::from_utf8(&a[..na])
                    .unwrap_or("0")
                    .trim_start_matches('0');
                let db = std::str::from_utf8(&b[..nb])
                    .unwrap_or("0")
                    .trim_start_matches('0');
                let ord = da.len().cmp(&db.len()).then_with(|| da.cmp(db));
                if ord != std::cmp::Ordering::Equal {
                    return ord;
                }
                a = &a[na..];
                b = &b[nb..];
            }
            (Some(x), Some(y)) => {
                if x != y {
                    return x.cmp(y);
                }
                a = &a[1..];
                b = &b[1..];
            }
        }
    }
}
