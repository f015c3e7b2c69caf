//! Which block of a mail is the base and which the head: pure rules over block labels.
//!
//! The rules, in the order they are applied:
//!
//! 1. `--base-block`/`--head-block` (case-insensitive substrings of labels) decide when given.
//! 2. Each label gets a side from the words mail authors use. Strong words (`before`/`after`,
//!    `without`, `reverted`, `original`, `vanilla`, `unpatched`, `baseline`, `base`,
//!    `status quo` / `patched`, `apply patch`, `applied`) beat weak ones (`with`, `new`/`old`,
//!    `current`, `enable`/`disable`, `+series`); at equal strength the base word wins, because
//!    base labels say "with reverted X" and "without". Labels with no side word but kernel
//!    versions (`v4.19`, `v5.1`) are ordered by version: the older is the base.
//! 3. What is left of a label without its side words, commit ids, versions and filler words is
//!    its scenario ("no load on system"); a base and a head with the same scenario form one
//!    comparison, so three load levels x two kernels give three comparisons.
//! 4. When scenarios do not line up: one base and several heads pair the base with each head;
//!    columns of a summary table (one column per kernel) without side words take the first
//!    column as the base, as mmtests and lkp print them, and so do configurations numbered
//!    `(1)`, `(2)`, ... without base words; headings without side words each
//!    followed by a head block (`allmodconfig:` then `Patched:`) are the bases of their sections.
//! 5. Anything else is ambiguous: an error lists the labels and the flags that choose.

use std::cmp::Ordering;
use std::fmt;

/// One comparison the mail asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pair {
    pub base: String,
    pub head: String,
    /// What both sides share ("no load on system"), when the mail holds several comparisons.
    pub scenario: Option<String>,
}

/// Why no pairing could be decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PairingError {
    /// Fewer than two blocks.
    TooFewBlocks(Vec<String>),
    /// Several readings are possible.
    Ambiguous(Vec<String>),
    /// More blocks than a mail holds (found, limit).
    TooMany(usize, usize),
    /// A `--base-block`/`--head-block` substring matched no label, or too many.
    BadChoice {
        flag: &'static str,
        text: String,
        labels: Vec<String>,
    },
}

fn quoted(labels: &[String]) -> String {
    labels
        .iter()
        .map(|l| format!("{l:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

impl fmt::Display for PairingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PairingError::TooFewBlocks(l) if l.is_empty() => {
                write!(
                    f,
                    "found no labelled blocks, so there is nothing to compare"
                )
            }
            PairingError::TooFewBlocks(l) => write!(
                f,
                "found only one labelled block ({}), a comparison needs a base and a head",
                quoted(l)
            ),
            PairingError::Ambiguous(l) => write!(
                f,
                "cannot tell base from head among the blocks {}; choose with --base-block TEXT --head-block TEXT (a part of a label)",
                quoted(l)
            ),
            PairingError::TooMany(n, max) => write!(
                f,
                "found {n} labelled blocks, more than a mail comparison takes ({max})"
            ),
            PairingError::BadChoice { flag, text, labels } => write!(
                f,
                "{flag} {text:?} matches none of the blocks {}",
                quoted(labels)
            ),
        }
    }
}

impl std::error::Error for PairingError {}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Base,
    Head,
}

/// (phrase, side, strength). Phrases match whole words (a `+` matches at a word start).
const MARKERS: &[(&str, Side, u8)] = &[
    ("before", Side::Base, 2),
    ("without", Side::Base, 2),
    ("w/o", Side::Base, 2),
    ("reverted", Side::Base, 2),
    ("revert", Side::Base, 2),
    ("original", Side::Base, 2),
    ("vanilla", Side::Base, 2),
    ("unpatched", Side::Base, 2),
    ("baseline", Side::Base, 2),
    ("base", Side::Base, 2),
    ("status quo", Side::Base, 2),
    ("after", Side::Head, 2),
    ("patched", Side::Head, 2),
    ("apply patch", Side::Head, 2),
    ("applied", Side::Head, 2),
    ("with patch", Side::Head, 2),
    ("old", Side::Base, 1),
    ("older", Side::Base, 1),
    ("current", Side::Base, 1),
    ("disable", Side::Base, 1),
    ("disabled", Side::Base, 1),
    ("with", Side::Head, 1),
    ("w/", Side::Head, 1),
    ("new", Side::Head, 1),
    ("newer", Side::Head, 1),
    ("enable", Side::Head, 1),
    ("enabled", Side::Head, 1),
    ("patch", Side::Head, 1),
    ("+", Side::Head, 1),
];

/// Words that say nothing about the scenario.
const FILLER: &[&str] = &[
    "now", "results", "result", "the", "a", "an", "commit", "patch", "patches", "patchset",
    "series", "kernel", "this", "it", "its", "of", "and", "here", "are", "is", "numbers", "run",
    "runs", "my", "s", "quo", "status", "apply",
];

/// Lower-case words of a label; `+` and `/` stay attached so `+series` and `w/o` survive.
fn words(label: &str) -> Vec<String> {
    label
        .to_lowercase()
        .split(|c: char| !(c.is_alphanumeric() || "%.+/_-".contains(c)))
        .map(|w| w.trim_matches(|c: char| c == '.' || c == '-').to_string())
        .filter(|w| !w.is_empty())
        .flat_map(|w| {
            // `one-disable` is the scenario `one` with the side word `disable`.
            if w.contains('-') && !w.starts_with('+') && !is_version(&w) {
                w.split('-').map(str::to_string).collect::<Vec<_>>()
            } else {
                vec![w]
            }
        })
        .collect()
}

/// `v4.19`, `5.1`, `6.8-rc1`, `4.19.0`.
fn is_version(w: &str) -> bool {
    version_key(w).is_some()
}

/// A version as numbers; `-rcN` sorts before the release.
fn version_key(w: &str) -> Option<Vec<u64>> {
    let w = w.strip_prefix('v').unwrap_or(w);
    let (main, rc) = match w.split_once("-rc") {
        Some((m, r)) => (m, r.parse::<u64>().ok()),
        None => (w, None),
    };
    let parts: Vec<&str> = main.split('.').collect();
    if parts.len() < 2 || parts.len() > 4 {
        return None;
    }
    let mut key = parts
        .iter()
        .map(|p| p.parse::<u64>().ok())
        .collect::<Option<Vec<u64>>>()?;
    key.resize(4, 0);
    key.push(rc.unwrap_or(u64::MAX));
    Some(key)
}

fn is_commit_id(w: &str) -> bool {
    w.len() >= 7
        && w.bytes().all(|b| b.is_ascii_hexdigit())
        && w.bytes().any(|b| b.is_ascii_digit())
}

/// The side a label's words give it, if any.
pub fn side_of(label: &str) -> Option<Side> {
    let ws = words(label);
    let mut best: Option<(u8, Side)> = None;
    for (phrase, side, strength) in MARKERS {
        let pw: Vec<&str> = phrase.split(' ').collect();
        let hit = if *phrase == "+" {
            ws.iter().any(|w| w.starts_with('+') && w.len() > 1)
        } else {
            ws.windows(pw.len())
                .any(|win| win.iter().zip(&pw).all(|(a, b)| a == b))
        };
        if !hit {
            continue;
        }
        let better = match best {
            None => true,
            Some((s, bs)) => {
                *strength > s || (*strength == s && bs == Side::Head && *side == Side::Base)
            }
        };
        if better {
            best = Some((*strength, *side));
        }
    }
    best.map(|(_, s)| s)
}

fn is_marker_word(w: &str) -> bool {
    w.starts_with('+')
        || MARKERS
            .iter()
            .any(|(p, _, _)| p.split(' ').any(|pw| pw == w))
}

/// The scenario of a label: its words without side words, versions, commit ids and filler.
pub fn scenario_of(label: &str) -> String {
    words(label)
        .into_iter()
        .filter(|w| {
            !is_marker_word(w)
                && !is_version(w)
                && !is_commit_id(w)
                && !FILLER.contains(&w.as_str())
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The newest version a label names.
fn label_version(label: &str) -> Option<Vec<u64>> {
    words(label).iter().filter_map(|w| version_key(w)).max()
}

/// Decides the pairs. `columns` says the labels are the columns of one summary table (one
/// column per kernel), where the first column is the base by convention.
pub fn pair(
    labels: &[String],
    columns: bool,
    base_choice: Option<&str>,
    head_choice: Option<&str>,
) -> Result<Vec<Pair>, PairingError> {
    pair_quoted(labels, &[], columns, base_choice, head_choice)
}

/// [`pair`] knowing how deeply each label is `>`-quoted in the mail: of two blocks that say
/// nothing else, the more deeply quoted one was written earlier, in the mail replied to, and is
/// the base ("> before the patch my numbers were ..." and the reply's new numbers).
pub fn pair_quoted(
    labels: &[String],
    quote_depths: &[usize],
    columns: bool,
    base_choice: Option<&str>,
    head_choice: Option<&str>,
) -> Result<Vec<Pair>, PairingError> {
    if base_choice.is_some() || head_choice.is_some() {
        return chosen(labels, base_choice, head_choice);
    }
    if labels.len() < 2 {
        return Err(PairingError::TooFewBlocks(labels.to_vec()));
    }
    let sides: Vec<Option<Side>> = labels.iter().map(|l| side_of(l)).collect();
    let bases: Vec<&String> = labels
        .iter()
        .zip(&sides)
        .filter(|(_, s)| **s == Some(Side::Base))
        .map(|(l, _)| l)
        .collect();
    let heads: Vec<&String> = labels
        .iter()
        .zip(&sides)
        .filter(|(_, s)| **s == Some(Side::Head))
        .map(|(l, _)| l)
        .collect();

    if !bases.is_empty() && !heads.is_empty() {
        if let Some(p) = by_scenario(&bases, &heads) {
            return Ok(p);
        }
        if bases.len() == 1 {
            return Ok(one_to_many(bases[0], &heads));
        }
        return Err(PairingError::Ambiguous(labels.to_vec()));
    }
    // No side words on one side: versions order the labels, older first.
    let versions: Vec<Option<Vec<u64>>> = labels.iter().map(|l| label_version(l)).collect();
    if versions.iter().all(Option::is_some) {
        let mut order: Vec<usize> = (0..labels.len()).collect();
        order.sort_by(|&a, &b| versions[a].cmp(&versions[b]));
        let distinct = order
            .windows(2)
            .all(|w| versions[w[0]].cmp(&versions[w[1]]) == Ordering::Less);
        if distinct {
            let heads: Vec<&String> = order[1..].iter().map(|&i| &labels[i]).collect();
            return Ok(one_to_many(&labels[order[0]], &heads));
        }
    }
    if (columns || numbered(labels)) && bases.is_empty() {
        let heads: Vec<&String> = labels[1..].iter().collect();
        return Ok(one_to_many(&labels[0], &heads));
    }
    if bases.len() == 1 && heads.is_empty() {
        // `vanilla` beside kernels named for their patches: each is compared with it.
        let others: Vec<&String> = labels.iter().filter(|l| *l != bases[0]).collect();
        return Ok(one_to_many(bases[0], &others));
    }
    if let Some(p) = heading_then_head(labels, &sides) {
        return Ok(p);
    }
    if heads.len() == 1 && bases.is_empty() && labels.len() == 2 {
        let other = labels.iter().find(|l| *l != heads[0]).expect("two labels");
        return Ok(one_to_many(other, &[heads[0]]));
    }
    if labels.len() == 2 && quote_depths.len() == 2 && quote_depths[0] != quote_depths[1] {
        let (b, h) = if quote_depths[0] > quote_depths[1] {
            (0, 1)
        } else {
            (1, 0)
        };
        return Ok(one_to_many(&labels[b], &[&labels[h]]));
    }
    Err(PairingError::Ambiguous(labels.to_vec()))
}

/// Labels numbered `(1)`, `(2)`, ... in order: configurations an author lists with the
/// reference first, as the columns of a summary table.
fn numbered(labels: &[String]) -> bool {
    labels.iter().enumerate().all(|(i, l)| {
        l.strip_prefix('(')
            .and_then(|r| r.split_once(')'))
            .is_some_and(|(n, _)| n.parse::<usize>() == Ok(i + 1))
    })
}

/// Sections of a heading without side words followed by a head block (`allmodconfig:` ...
/// `Patched:` ...): the heading's block is the base of its section, the heading its scenario.
/// `None` unless every label is such a heading or the head right after one.
fn heading_then_head(labels: &[String], sides: &[Option<Side>]) -> Option<Vec<Pair>> {
    if labels.len() < 4 || !labels.len().is_multiple_of(2) {
        return None;
    }
    labels
        .chunks(2)
        .zip(sides.chunks(2))
        .map(|(l, s)| {
            (s[0].is_none() && s[1] == Some(Side::Head)).then(|| Pair {
                base: l[0].clone(),
                head: l[1].clone(),
                scenario: Some(l[0].clone()),
            })
        })
        .collect()
}

fn one_to_many(base: &str, heads: &[&String]) -> Vec<Pair> {
    heads
        .iter()
        .map(|h| Pair {
            base: base.to_string(),
            head: h.to_string(),
            scenario: (heads.len() > 1).then(|| h.to_string()),
        })
        .collect()
}

/// Pairs bases and heads whose scenarios are equal; `None` unless every label finds its match.
fn by_scenario(bases: &[&String], heads: &[&String]) -> Option<Vec<Pair>> {
    if bases.len() != heads.len() {
        return None;
    }
    let head_scenarios: Vec<String> = heads.iter().map(|h| scenario_of(h)).collect();
    let mut out = Vec::new();
    for b in bases {
        let sb = scenario_of(b);
        let matches: Vec<&&String> = heads
            .iter()
            .zip(&head_scenarios)
            .filter(|(_, s)| **s == sb)
            .map(|(h, _)| h)
            .collect();
        if matches.len() != 1 {
            return None;
        }
        out.push(Pair {
            base: b.to_string(),
            head: matches[0].to_string(),
            scenario: (bases.len() > 1).then(|| sb.clone()),
        });
    }
    let mut seen: Vec<&String> = out.iter().map(|p| &p.head).collect();
    seen.sort();
    seen.dedup();
    (seen.len() == out.len()).then_some(out)
}

/// The labels the user named by substrings; several on each side pair by scenario.
fn chosen(
    labels: &[String],
    base: Option<&str>,
    head: Option<&str>,
) -> Result<Vec<Pair>, PairingError> {
    let pick = |flag: &'static str, text: Option<&str>| -> Result<Vec<String>, PairingError> {
        let Some(text) = text else {
            return Err(PairingError::BadChoice {
                flag,
                text: String::new(),
                labels: labels.to_vec(),
            });
        };
        let t = text.to_lowercase();
        let found: Vec<String> = labels
            .iter()
            .filter(|l| l.to_lowercase().contains(&t))
            .cloned()
            .collect();
        if found.is_empty() {
            Err(PairingError::BadChoice {
                flag,
                text: text.to_string(),
                labels: labels.to_vec(),
            })
        } else {
            Ok(found)
        }
    };
    let b = pick("--base-block", base)?;
    let h = pick("--head-block", head)?;
    let strip = |l: &str, t: &str| {
        let lower = l.to_lowercase();
        scenario_of(&lower.replacen(&t.to_lowercase(), " ", 1))
    };
    let (bt, ht) = (base.unwrap_or(""), head.unwrap_or(""));
    if b.len() == 1 && h.len() == 1 {
        return Ok(vec![Pair {
            base: b[0].clone(),
            head: h[0].clone(),
            scenario: None,
        }]);
    }
    let mut out = Vec::new();
    for bl in &b {
        let key = strip(bl, bt);
        let m: Vec<&String> = h
            .iter()
            .filter(|hl| strip(hl, ht) == key && *hl != bl)
            .collect();
        if m.len() != 1 {
            return Err(PairingError::Ambiguous(labels.to_vec()));
        }
        out.push(Pair {
            base: bl.clone(),
            head: m[0].clone(),
            scenario: Some(key),
        });
    }
    Ok(out)
}

#[cfg(test)]
#[path = "pairing_tests.rs"]
mod tests;
