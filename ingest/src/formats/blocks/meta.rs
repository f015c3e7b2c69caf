//! Per-block metadata, kept in reused buffers: a file of many alike blocks costs no
//! allocation per block.

use std::collections::BTreeMap;

use super::Labeler;
use crate::model::Ctx;

/// Metadata per block. Values set before a block starts belong to the next block. At the end,
/// keys on which every block agrees become file metadata; with several blocks, each block's
/// metadata is kept under the `blocks` extra (label, first line, fields, and how many
/// consecutive blocks were alike).
#[derive(Debug, Default)]
pub(crate) struct BlockMeta {
    /// Values for the block that starts next.
    pending: Fields,
    /// Entries of the blocks before the current one.
    blocks: Vec<Block>,
    /// The current block: its values can change until the next block starts, so it is
    /// compared with the last entry (and copied into a new one if it differs) only then.
    current: Current,
    /// Whether a block was started (`current` holds it).
    started: bool,
    /// Whether blocks past [`MAX_BLOCKS`] were folded into the last entry.
    truncated: bool,
}

/// Block entries kept with their own metadata.
const MAX_BLOCKS: usize = 1000;

/// Key/value pairs sorted by key, as a `BTreeMap` orders them: a block has a few.
#[derive(Debug, Default)]
struct Fields {
    /// The pairs in use, then emptied ones kept for their buffers.
    pairs: Vec<(String, String)>,
    len: usize,
}

#[derive(Debug, Default)]
struct Current {
    label: String,
    labelled: bool,
    line: u64,
    meta: Fields,
}

#[derive(Debug)]
struct Block {
    label: Option<String>,
    line: u64,
    meta: Vec<(String, String)>,
    /// Consecutive blocks with the same label and metadata are kept as one entry, so that
    /// memory does not grow with a long file of repeated runs.
    count: usize,
}

impl BlockMeta {
    /// Whether the values of the blocks started now are kept (past [`MAX_BLOCKS`] blocks are
    /// only counted), so that a parser can skip building one.
    pub(crate) fn keeps_blocks(&self) -> bool {
        !self.truncated
    }

    /// Records a value for the block that starts next.
    pub(crate) fn next(&mut self, key: &str, value: impl AsRef<str>) {
        // Past [`MAX_BLOCKS`] blocks are only counted: their values are never read.
        if self.truncated {
            return;
        }
        self.pending.insert(key, value.as_ref());
    }

    /// Records a value for the current block (or the next one if none started).
    pub(crate) fn set(&mut self, key: &str, value: impl AsRef<str>) {
        if self.truncated {
            return;
        }
        let fields = if self.started {
            &mut self.current.meta
        } else {
            &mut self.pending
        };
        fields.insert(key, value.as_ref());
    }

    /// Starts a block; values recorded with [`BlockMeta::next`] move into it.
    pub(crate) fn start(&mut self, label: Option<String>, line: u64) {
        self.start_ref(label.as_deref(), line);
    }

    /// [`BlockMeta::start`] with the label as a [`Labeler`] id: its text is looked up only
    /// while blocks' metadata is kept (past that, blocks are only counted).
    #[inline]
    pub(crate) fn start_labelled(&mut self, label: Option<u32>, labels: &Labeler, line: u64) {
        let text = label
            .filter(|_| self.keeps_blocks())
            .map(|l| labels.name(l));
        self.start_ref(text, line);
    }

    /// [`BlockMeta::start`] with a borrowed label.
    pub(crate) fn start_ref(&mut self, label: Option<&str>, line: u64) {
        if self.started {
            self.close();
        }
        self.started = true;
        if self.truncated {
            return;
        }
        let c = &mut self.current;
        c.label.clear();
        c.labelled = label.is_some();
        if let Some(l) = label {
            c.label.push_str(l);
        }
        c.line = line;
        c.meta.len = 0;
        std::mem::swap(&mut c.meta, &mut self.pending);
    }

    /// Folds the current block into the last entry when they are alike, else adds an entry
    /// for it; past [`MAX_BLOCKS`] entries a block is only counted (into the last entry), so
    /// memory stays bounded.
    fn close(&mut self) {
        let c = &self.current;
        let label = c.labelled.then_some(c.label.as_str());
        if self.blocks.len() >= MAX_BLOCKS
            && let Some(last) = self.blocks.last_mut()
        {
            last.count += 1;
            self.truncated = true;
            return;
        }
        if let Some(last) = self.blocks.last_mut()
            && last.label.as_deref() == label
            && last.meta == c.meta.pairs()
        {
            last.count += 1;
            return;
        }
        self.blocks.push(Block {
            label: label.map(str::to_string),
            line: c.line,
            meta: c.meta.pairs().to_vec(),
            count: 1,
        });
    }

    /// How many blocks were started.
    pub(crate) fn len(&self) -> usize {
        self.blocks.iter().map(|b| b.count).sum::<usize>() + usize::from(self.started)
    }

    /// Writes the metadata out.
    pub(crate) fn finish(mut self, ctx: &mut Ctx<'_>) {
        // Values seen after the last block describe it (e.g. a trailing exit status).
        let pending = std::mem::take(&mut self.pending);
        if self.started {
            for (k, v) in pending.pairs() {
                self.current.meta.insert(k, v);
            }
            self.close();
            self.started = false;
        } else {
            for (k, v) in pending.pairs() {
                ctx.meta(k, v.as_str());
            }
        }
        let Some(first) = self.blocks.first() else {
            return;
        };
        for (k, v) in &first.meta {
            if self.blocks.iter().all(|b| get(&b.meta, k) == Some(v)) {
                ctx.meta(k, v.clone());
            }
        }
        let total = self.len();
        if self.truncated {
            ctx.meta(
                "blocks_note",
                format!("the metadata of blocks after the first {MAX_BLOCKS} is not kept"),
            );
        }
        if total > 1 {
            ctx.meta("blocks", total.to_string());
            let list: Vec<serde_json::Value> = self
                .blocks
                .iter()
                .map(|b| {
                    let meta: BTreeMap<&str, &str> = b
                        .meta
                        .iter()
                        .map(|(k, v)| (k.as_str(), v.as_str()))
                        .collect();
                    serde_json::json!({
                        "line": b.line,
                        "label": b.label,
                        "meta": meta,
                        "count": b.count,
                    })
                })
                .collect();
            ctx.extra("blocks", serde_json::Value::Array(list));
        }
    }
}

impl Fields {
    fn pairs(&self) -> &[(String, String)] {
        &self.pairs[..self.len]
    }

    /// Sets `key` to `value`, in an emptied pair's buffers when the key is new.
    fn insert(&mut self, key: &str, value: &str) {
        let used = &self.pairs[..self.len];
        // Keys mostly come in order: a key past the last one needs no search.
        let at = match used.last() {
            None => Err(0),
            Some((k, _)) if k.as_str() < key => Err(self.len),
            Some(_) => used.binary_search_by(|(k, _)| k.as_str().cmp(key)),
        };
        let i = match at {
            Ok(i) => {
                let v = &mut self.pairs[i].1;
                v.clear();
                v.push_str(value);
                return;
            }
            Err(i) => i,
        };
        if self.len == self.pairs.len() {
            self.pairs.push(Default::default());
        }
        if i < self.len {
            self.pairs[i..=self.len].rotate_right(1);
        }
        self.len += 1;
        let (k, v) = &mut self.pairs[i];
        k.clear();
        k.push_str(key);
        v.clear();
        v.push_str(value);
    }
}

fn get<'a>(fields: &'a [(String, String)], key: &str) -> Option<&'a String> {
    fields
        .binary_search_by(|(k, _)| k.as_str().cmp(key))
        .ok()
        .map(|i| &fields[i].1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alike_blocks_fold_and_keys_stay_sorted() {
        let mut m = BlockMeta::default();
        m.next("runs", "5");
        m.start_ref(Some("a"), 1);
        m.set("command", "make");
        m.start_ref(Some("a"), 2);
        m.set("runs", "5");
        m.set("command", "make");
        // Same label and fields as the first block: one entry counted twice.
        m.start_ref(Some("b"), 3);
        m.set("command", "make");
        m.set("command", "make -j8");
        m.start_ref(None, 4);
        assert_eq!(m.len(), 4);
        m.close();
        let entries: Vec<_> = m
            .blocks
            .iter()
            .map(|b| (b.label.as_deref(), b.line, b.count, b.meta.clone()))
            .collect();
        let pair = |k: &str, v: &str| (k.to_string(), v.to_string());
        assert_eq!(
            entries,
            [
                (
                    Some("a"),
                    1,
                    2,
                    vec![pair("command", "make"), pair("runs", "5")]
                ),
                (Some("b"), 3, 1, vec![pair("command", "make -j8")]),
                (None, 4, 1, vec![]),
            ]
        );
    }

    #[test]
    fn blocks_past_the_limit_are_only_counted() {
        let mut m = BlockMeta::default();
        for i in 0..MAX_BLOCKS as u64 + 10 {
            m.start_ref(None, i);
            m.set("n", i.to_string());
        }
        m.close();
        assert_eq!(m.blocks.len(), MAX_BLOCKS);
        assert_eq!(m.blocks.last().map(|b| b.count), Some(11));
        assert!(m.truncated);
    }
}
