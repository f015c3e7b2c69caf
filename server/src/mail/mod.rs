//! One mail compared with itself: its labelled blocks are found by the parsers (or, failing
//! that, in its prose), paired into base and head ([`pairing`]), compared through the usual
//! report, and the changes its author claims are checked against the measurement ([`claims`]).
//! No I/O and no database: the command line and the `/paste` page both call [`compare_mail`].

pub mod claims;
pub mod pairing;
mod prose;

use std::path::Path;

use compare::{Direction, Settings};
use ingest::model::{Dataset, Sink};
use serde::Serialize;

use crate::report::{self, Report};

/// Mails are small; anything larger is not one (the `/paste` page takes at most 1 MiB).
pub const MAX_MAIL_BYTES: usize = 16 << 20;

/// How to compare.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub base_block: Option<String>,
    pub head_block: Option<String>,
    pub direction: Option<Direction>,
    pub settings: Settings,
    /// Force a parser.
    pub format: Option<String>,
}

/// A mail that cannot be compared, in one line naming what was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{name}: {message}")]
pub struct MailError {
    pub name: String,
    pub message: String,
}

/// Where the blocks came from and how they were paired.
#[derive(Debug, Clone, Serialize)]
pub struct MailInfo {
    /// The parser that read the blocks, or `prose`.
    pub format: String,
    pub blocks: Vec<String>,
    pub pairs: Vec<PairInfo>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PairInfo {
    pub base: String,
    pub head: String,
    pub scenario: Option<String>,
}

/// The comparison of one mail: the report, how it was paired, and the claims checked.
#[derive(Debug, Clone, Serialize)]
pub struct MailReport {
    #[serde(flatten)]
    pub report: Report,
    pub mail: MailInfo,
    pub claims: Vec<claims::Checked>,
}

fn fail(name: &str, message: impl Into<String>) -> MailError {
    MailError {
        name: name.to_string(),
        message: message.into(),
    }
}

/// Refuses what is not the text of a mail: too large, or binary.
fn as_text<'a>(name: &str, bytes: &'a [u8]) -> Result<&'a str, MailError> {
    if bytes.len() > MAX_MAIL_BYTES {
        return Err(fail(
            name,
            format!(
                "{} bytes is not a mail (at most {} MiB)",
                bytes.len(),
                MAX_MAIL_BYTES >> 20
            ),
        ));
    }
    if let Some(at) = bytes.iter().position(|&b| b == 0) {
        return Err(fail(
            name,
            format!("binary data (a NUL byte at offset {at}), expected the text of a mail"),
        ));
    }
    std::str::from_utf8(bytes).map_err(|e| {
        fail(
            name,
            format!(
                "not UTF-8 text (invalid byte at offset {}), expected the text of a mail",
                e.valid_up_to()
            ),
        )
    })
}

/// More blocks than any mail holds: a bound on the pairing's work for a hostile paste.
pub const MAX_BLOCKS: usize = 1000;

/// Distinct block labels in order of first appearance.
fn labels_of(ds: &Dataset) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    ds.series
        .iter()
        .filter_map(|s| s.spec.key.label.as_deref())
        .filter(|l| seen.insert(*l))
        .map(str::to_string)
        .collect()
}

/// How deeply the line that names `label` is `>`-quoted (the first such line).
fn quote_depth(text: &str, label: &str) -> Option<usize> {
    text.lines().find_map(|line| {
        let body = claims::unquote(line);
        body.trim_start()
            .starts_with(label)
            .then(|| line[..line.len() - body.len()].matches('>').count())
    })
}

/// The labelled blocks of a dataset, whether they are the columns of a summary table, and
/// the pairs they make.
fn try_pairs(
    ds: &Dataset,
    text: &str,
    opts: &Options,
) -> Result<Vec<pairing::Pair>, pairing::PairingError> {
    let labels = labels_of(ds);
    if labels.len() > MAX_BLOCKS {
        return Err(pairing::PairingError::TooMany(labels.len(), MAX_BLOCKS));
    }
    // Only two blocks that say nothing else need their quoting.
    let depths: Vec<usize> = if labels.len() == 2 {
        labels
            .iter()
            .map(|l| quote_depth(text, l))
            .collect::<Option<Vec<usize>>>()
            .unwrap_or_default()
    } else {
        Vec::new()
    };
    let columns = !ds.series.is_empty()
        && ds
            .series
            .iter()
            .filter(|s| s.spec.key.label.is_some())
            .all(|s| s.spec.key.statistic.is_some());
    pairing::pair_quoted(
        &labels,
        &depths,
        columns,
        opts.base_block.as_deref(),
        opts.head_block.as_deref(),
    )
}

/// A name for one side: what its labels share at the start or the end, else them all.
fn side_name(labels: &[&str]) -> String {
    let mut uniq: Vec<&str> = labels.to_vec();
    uniq.dedup();
    if uniq.len() == 1 {
        return uniq[0].to_string();
    }
    let first: Vec<char> = uniq[0].chars().collect();
    let prefix = (0..first.len())
        .take_while(|&i| uniq.iter().all(|l| l.chars().nth(i) == Some(first[i])))
        .count();
    let rev: Vec<char> = first.iter().rev().copied().collect();
    let suffix = (0..rev.len())
        .take_while(|&i| uniq.iter().all(|l| l.chars().rev().nth(i) == Some(rev[i])))
        .count();
    let common: String = if suffix >= prefix {
        let s: String = first[first.len() - suffix..].iter().collect();
        // Whole words only: `with SLAB: without X` and `with SLUB: without X` share `without X`.
        if suffix < first.len() && !first[first.len() - suffix - 1].is_whitespace() {
            s.split_once(' ')
                .map(|(_, w)| w.to_string())
                .unwrap_or_default()
        } else {
            s
        }
    } else {
        let p: String = first[..prefix].iter().collect();
        if prefix < first.len() && !first[prefix].is_whitespace() {
            p.rsplit_once(' ')
                .map(|(w, _)| w.to_string())
                .unwrap_or_default()
        } else {
            p
        }
    };
    let common = common.trim_matches(|c: char| c.is_whitespace() || ",;:-".contains(c));
    if common.chars().count() >= 3 {
        common.to_string()
    } else {
        uniq.join(" | ")
    }
}

/// Splits the blocks of `ds` into a base and a head dataset by `pairs`. Several pairs keep
/// their scenario as the parameter `scenario`, so matching series meet in one report row.
fn split(ds: &Dataset, pairs: &[pairing::Pair]) -> (Dataset, Dataset) {
    let mut by_label: std::collections::HashMap<&str, Vec<&ingest::Series>> =
        std::collections::HashMap::new();
    for s in &ds.series {
        if let Some(l) = s.spec.key.label.as_deref() {
            by_label.entry(l).or_default().push(s);
        }
    }
    let (mut base, mut head) = (Dataset::new(), Dataset::new());
    for p in pairs {
        for (side, label) in [(&mut base, &p.base), (&mut head, &p.head)] {
            for s in by_label.get(label.as_str()).into_iter().flatten() {
                let mut spec = s.spec.clone();
                spec.key.label = None;
                if let Some(sc) = &p.scenario {
                    spec.key.params.insert("scenario".into(), sc.clone());
                }
                let id = side.series(&spec);
                for v in &s.samples {
                    side.sample(id, *v);
                }
            }
        }
    }
    (base, head)
}

/// Compares the blocks of one mail. `name` names the mail in errors.
pub fn compare_mail(name: &str, bytes: &[u8], opts: &Options) -> Result<MailReport, MailError> {
    let text = as_text(name, bytes)?;
    let parsed = ingest::parse_bytes(Path::new(name), text.as_bytes(), opts.format.as_deref());
    let (format, ds, pairs) = match parsed {
        Ok((summary, ds)) => match try_pairs(&ds, text, opts) {
            Ok(p) => (summary.format.to_string(), ds, p),
            Err(e) => {
                from_prose(name, text, opts).map_err(|_| describe(name, summary.format, &ds, &e))?
            }
        },
        Err(parse_error) => from_prose(name, text, opts).map_err(|prose_error| {
            if prose_error.message.contains("no labelled blocks") {
                fail(
                    name,
                    format!(
                        "no benchmark output found: {}",
                        strip_name(name, &parse_error.to_string())
                    ),
                )
            } else {
                prose_error
            }
        })?,
    };
    let (base, head) = split(&ds, &pairs);
    let base_labels: Vec<&str> = pairs.iter().map(|p| p.base.as_str()).collect();
    let head_labels: Vec<&str> = pairs.iter().map(|p| p.head.as_str()).collect();
    let mut report = report::from_datasets(
        &side_name(&base_labels),
        &side_name(&head_labels),
        base,
        head,
        opts.direction,
        &opts.settings,
        true,
    );
    // The benchmark of every row: the command the mail ran, else the format that read it.
    let bench = ds
        .meta
        .get("command")
        .filter(|c| !c.is_empty() && c.len() <= 80)
        .cloned()
        .unwrap_or_else(|| format.clone());
    for r in &mut report.comparisons {
        r.benchmark = bench.clone();
    }
    if report.comparisons.is_empty() {
        return Err(fail(
            name,
            format!(
                "the blocks {} share no metric to compare",
                pairs
                    .iter()
                    .map(|p| format!("{:?} and {:?}", p.base, p.head))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    let measured: Vec<claims::Measured> = report
        .comparisons
        .iter()
        .filter_map(|r| {
            Some(claims::Measured {
                name: {
                    let p = r.params_text();
                    if p.is_empty() {
                        r.name()
                    } else {
                        format!("{} {}", r.name(), p)
                    }
                },
                metric: r.metric.clone(),
                direction: r.direction,
                change_pct: r.cmp.change_pct?,
                ci: r.cmp.ci.as_ref().map(|i| (i.low, i.high)),
            })
        })
        .collect();
    let checked = claims::check(&claims::find(text), &measured);
    Ok(MailReport {
        report,
        mail: MailInfo {
            format,
            blocks: labels_of(&ds),
            pairs: pairs
                .into_iter()
                .map(|p| PairInfo {
                    base: p.base,
                    head: p.head,
                    scenario: p.scenario,
                })
                .collect(),
        },
        claims: checked,
    })
}

/// The parser's message without the file name it starts with (the mail error adds it).
fn strip_name(name: &str, msg: &str) -> String {
    msg.strip_prefix(name)
        .map(|m| m.trim_start_matches(':').trim().to_string())
        .unwrap_or_else(|| msg.to_string())
}

fn describe(name: &str, format: &str, ds: &Dataset, e: &pairing::PairingError) -> MailError {
    let series = ds.series.len();
    fail(name, format!("{format} output with {series} series: {e}"))
}

fn from_prose(
    name: &str,
    text: &str,
    opts: &Options,
) -> Result<(String, Dataset, Vec<pairing::Pair>), MailError> {
    let ds = prose::read(text);
    let pairs = try_pairs(&ds, text, opts).map_err(|e| fail(name, e.to_string()))?;
    Ok(("prose".to_string(), ds, pairs))
}
