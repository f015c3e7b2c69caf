//! Byte-level reading of the common `time` line: the values of a `real`/`user`/`sys` row read
//! in place.

use super::values::bash_token_at;
use crate::error::ParseError;
use crate::lines::is_space;

/// Reads the values of a row as long as they are common `XmY.YYYs` tokens apart by ASCII
/// spaces, handing each to `each`. Returns None when the row is done (its end or a `(` note
/// reached), else where the first other token starts, for the general reading to take over:
/// up to there the row splits into words as the general reading splits it.
#[inline]
pub(super) fn fast_values(
    row: &str,
    mut each: impl FnMut(f64) -> Result<(), ParseError>,
) -> Result<Option<usize>, ParseError> {
    let b = row.as_bytes();
    let mut i = 0;
    loop {
        // Values are mostly apart by runs of spaces: four at a time first.
        while b.get(i..i + 4) == Some(b"    ") {
            i += 4;
        }
        while i < b.len() && is_space(b[i]) {
            i += 1;
        }
        if i == b.len() || b[i] == b'(' {
            return Ok(None);
        }
        match bash_token_at(b, i) {
            Some((v, end)) => {
                each(v)?;
                i = end;
            }
            None => return Ok(Some(i)),
        }
    }
}
