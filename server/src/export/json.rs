//! The report as JSON: the serde form of [`Report`], pretty-printed.

use std::io::Write;

use crate::report::Report;

/// Writes the report as pretty JSON followed by a newline.
pub fn write(out: &mut impl Write, r: &Report) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, r)?;
    writeln!(out)
}
