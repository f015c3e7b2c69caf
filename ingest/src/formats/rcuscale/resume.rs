//! The state a split parse compares ([`crate::lines::Lines::sync`]).

use std::collections::BTreeMap;

use super::Parser;
use crate::formats::prose_labels::Prose;

/// Everything in [`Parser`] that decides how the rest of a file is read: all but `gp`, which
/// only finds series already declared, and the buffer `key_buf`. A split parse compares it
/// ([`crate::lines::Lines::sync`]); a field added to the parser belongs here unless it is such a cache.
#[derive(Clone, PartialEq)]
pub(super) struct Resume {
    prose: Prose,
    params: BTreeMap<String, String>,
    summary_factor: u64,
    flags: [bool; 4],
    last_prose: Option<String>,
    columns: Option<(String, Vec<String>)>,
    prefix: String,
}

impl Parser {
    pub(super) fn resume(&self) -> Resume {
        Resume {
            prose: self.prose.clone(),
            params: self.params.clone(),
            summary_factor: self.summary_factor.to_bits(),
            flags: [
                self.in_histogram,
                self.in_kvm_cmd,
                self.after_params,
                self.scale_type_seen,
            ],
            last_prose: self.last_prose.get().map(str::to_string),
            columns: self.columns.clone(),
            prefix: self.prefix.clone(),
        }
    }
}
