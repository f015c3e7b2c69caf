//! The report as JSON: the serde form of [`Report`], pretty-printed.

use std::io::Write;

use crate::report::Report;

/// The report as pretty JSON (the download of a page), without a trailing newline.
pub fn text(r: &Report) -> serde_json::Result<String> {
    serde_json::to_string_pretty(r)
}

/// Writes the report as pretty JSON followed by a newline.
pub fn write(out: &mut impl Write, r: &Report) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, r)?;
    writeln!(out)
}
