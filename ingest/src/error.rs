//! Parser errors with a kind and a position, in the manner of csv's `Error`/`Position`.

use std::fmt;
use std::path::PathBuf;

/// Where in the input something happened. Lines are 1-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
pub struct Position {
    /// 1-based line number; 0 when the error is about the whole file.
    pub line: u64,
}

/// What went wrong while reading one input.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ErrorKind {
    #[error("the file is empty")]
    Empty,
    #[error("the file is binary, not text (byte {offset} is not valid UTF-8 or is a NUL)")]
    Binary { offset: u64 },
    #[error("expected {expected}, found {found:?}")]
    Syntax { expected: String, found: String },
    #[error("{what} is {value}: {why}")]
    BadValue {
        what: String,
        value: String,
        why: String,
    },
    #[error("no {expected} found in the file")]
    NothingFound { expected: String },
    #[error(
        "the line is {length} bytes long; the longest line accepted is {max} bytes \
         (benchmark output has short lines: is this a binary or corrupt file?)"
    )]
    LineTooLong { length: u64, max: usize },
    #[error("the file is truncated: {what}")]
    Truncated { what: String },
    #[error("{0}")]
    Io(String),
    #[error("{0}")]
    Unsupported(String),
}

/// An error from one parser, with the position it happened at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    pub kind: ErrorKind,
    pub pos: Position,
}

impl ParseError {
    pub fn new(kind: ErrorKind, line: u64) -> Self {
        ParseError {
            kind,
            pos: Position { line },
        }
    }

    /// `expected X, found Y` at a line.
    pub fn syntax(line: u64, expected: impl Into<String>, found: impl Into<String>) -> Self {
        let mut found: String = found.into();
        if found.len() > 120 {
            let mut cut = 117;
            while !found.is_char_boundary(cut) {
                cut -= 1;
            }
            found.truncate(cut);
            found.push_str("...");
        }
        Self::new(
            ErrorKind::Syntax {
                expected: expected.into(),
                found,
            },
            line,
        )
    }

    pub fn nothing(expected: impl Into<String>) -> Self {
        Self::new(
            ErrorKind::NothingFound {
                expected: expected.into(),
            },
            0,
        )
    }

    pub fn bad_value(
        line: u64,
        what: impl Into<String>,
        value: impl fmt::Display,
        why: impl Into<String>,
    ) -> Self {
        Self::new(
            ErrorKind::BadValue {
                what: what.into(),
                value: value.to_string(),
                why: why.into(),
            },
            line,
        )
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.pos.line > 0 {
            write!(f, "line {}: {}", self.pos.line, self.kind)
        } else {
            write!(f, "{}", self.kind)
        }
    }
}

impl std::error::Error for ParseError {}

/// Errors of the ingest library as a whole: a parse error tied to its file, detection failures,
/// unreadable input.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Parse {
        path: PathBuf,
        format: &'static str,
        #[source]
        source: ParseError,
    },
    #[error("{path}: {reason}")]
    Detect { path: PathBuf, reason: String },
    #[error("{path}: unknown format {name:?}; supported formats: {supported}")]
    UnknownFormat {
        path: PathBuf,
        name: String,
        supported: String,
    },
    #[error("{path}: cannot read: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Invalid(String),
}

impl Error {
    /// The 1-based line of a parse error, when there is one.
    pub fn line(&self) -> Option<u64> {
        match self {
            Error::Parse { source, .. } if source.pos.line > 0 => Some(source.pos.line),
            _ => None,
        }
    }

    /// The file the error is about, when there is one.
    pub fn path(&self) -> Option<&std::path::Path> {
        match self {
            Error::Parse { path, .. }
            | Error::Detect { path, .. }
            | Error::UnknownFormat { path, .. }
            | Error::Io { path, .. } => Some(path),
            _ => None,
        }
    }
}
