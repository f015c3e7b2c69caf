//! The changes a mail's prose claims ("2.9x reduction", "improves by 5%", "from 4.32 s to
//! 3.6 s", "-3.8%") and how they compare with the measured change: pure functions.
//!
//! Finding claims: paragraphs are read with their `>` quote markers removed and their lines
//! joined; a ratio (`2.9x fewer`, `reduced by 3 times`), a percentage next to a word saying which
//! way (`5% faster`, `improves by 5%`, `regression of 12%`), or `from X to Y` is a claim. A bare
//! signed percentage (`-3.8%`) or an arrow (`4.32 s -> 3.6 s`) counts only on a line of prose
//! (at least four words), so the `%change` columns of posted tables are not taken for claims;
//! in a table, only a note the author put after a row's values (`sys 1m30s 1m8s (-25%)`) is.
//!
//! Checking a claim (the rule): the claim is matched to the series whose metric it names (a word
//! of the metric, `hits` for `.hit`), or, when it names none, to any compared series; among
//! those, the one whose measured change is nearest to the claim, so that "not supported" never
//! comes from picking the wrong series; among those within rounding of the claim (below), one
//! with an interval first (a sum over CPUs is one value, its per-CPU values carry the test). Then, with the measured median change `m`, its interval
//! `[lo, hi]` when there is one, and the claimed change `c` (both in percent of the base):
//! - *consistent*: `|c - m|` is at most 1 point or 10% of `|c|` (authors round: 2.9x is
//!   anything from 2.85x to 2.95x);
//! - *not supported*: otherwise, when the interval holds 0 (no change is as plausible as the
//!   claimed one, even if the claim lies in it too);
//! - *consistent* again when `c` lies in `[lo, hi]`;
//! - *not supported* when `m` goes the other way than `c`, or without an interval `|m|` is
//!   under 1%;
//! - otherwise *overstated* when `|c| > |m|`, *understated* when `|c| < |m|`.
//!
//! "Improves"/"faster"/"regresses" carry no sign of their own: the sign comes from the matched
//! metric's direction (an improvement of a lower-is-better time is a decrease).

use std::sync::LazyLock;

use compare::Direction;
use regex::Regex;
use serde::Serialize;

/// Which way a claim goes before a series is matched.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sense {
    /// A signed change in percent of the base.
    Change(f64),
    /// A change in the better direction of the metric, in percent; or, for ratios, `x` times.
    Better(Amount),
    /// A change in the worse direction.
    Worse(Amount),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Amount {
    Percent(f64),
    Times(f64),
}

/// A claim found in the text.
#[derive(Debug, Clone, PartialEq)]
pub struct Claim {
    /// The words of the claim as written.
    pub text: String,
    /// 1-based line of the mail where it starts.
    pub line: u64,
    pub sense: Sense,
    /// The paragraph around it, lower-cased, to find the series it names.
    pub context: String,
}

impl Claim {
    /// The claimed change in percent for a metric with this direction (`None` when "better"
    /// has no meaning: a neutral metric).
    pub fn change_pct(&self, direction: Direction) -> Option<f64> {
        let signed = |a: Amount, up: bool| match (a, up) {
            (Amount::Percent(p), true) => p,
            (Amount::Percent(p), false) => -p,
            (Amount::Times(x), true) => (x - 1.0) * 100.0,
            (Amount::Times(x), false) => (1.0 / x - 1.0) * 100.0,
        };
        match (self.sense, direction) {
            (Sense::Change(c), _) => Some(c),
            (_, Direction::Neutral) => None,
            (Sense::Better(a), d) => Some(signed(a, d == Direction::HigherIsBetter)),
            (Sense::Worse(a), d) => Some(signed(a, d == Direction::LowerIsBetter)),
        }
    }
}

const NUM: &str = r"(\d+(?:\.\d+)?)";

static RATIO_AFTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)\b{NUM}\s*(?:x|×|times)\s+(fewer|less|reduction|lower|smaller|faster|shorter|more|higher|larger|bigger|slower|longer|increase|improvement|speed-?up|better|worse|regression)\b"
    ))
    .expect("regex")
});
static RATIO_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)\b(reduc\w*|decreas\w*|cut|improv\w*|increas\w*|speeds?\s+up|sped\s+up)\s+(?:by\s+)?(?:about\s+|around\s+|roughly\s+|~)?{NUM}\s*(?:x|×|times)\b"
    ))
    .expect("regex")
});
static PCT_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)\b(improv\w*|reduc\w*|decreas\w*|regress\w*|increas\w*|drops?|dropped|slows?\s+down|slowdown|speeds?\s+up|speedup|gains?|degrad\w*|lower\w*|cuts?|sav\w*|overhead)\s+(?:of\s+|by\s+)?(?:about\s+|around\s+|roughly\s+|almost\s+|up\s+to\s+|~)?{NUM}\s*%"
    ))
    .expect("regex")
});
static PCT_AFTER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)(?:^|[^\w.+\-−]){NUM}\s*%\s+(improvement|reduction|regression|increase|decrease|faster|slower|better|worse|drop|gain|speed-?up|fewer|less|more|higher|lower|overhead|slowdown|degradation)\b"
    ))
    .expect("regex")
});
static FROM_TO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)\bfrom\s+{NUM}\s*([a-zµ]+)?\s+(?:down\s+|up\s+)?to\s+{NUM}\s*([a-zµ]+)?"
    ))
    .expect("regex")
});
static ARROW: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i){NUM}\s*([a-zµ]+)?\s*(?:->|→|=>)\s*{NUM}\s*([a-zµ]+)?"
    ))
    .expect("regex")
});
static SIGNED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!(r"(?:^|[\s(:,])([+\-−]){NUM}\s*%")).expect("regex"));
/// An author's note closing a table row: `sys  1m30.734s  1m8.900s (-25%)`.
static ROW_NOTE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[A-Za-z][\w-]*\s.*\S\s*\(([+\-−])(\d+(?:\.\d+)?)%\)\s*$").expect("regex")
});
static WORD: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"\b[A-Za-z]{2,}\b").expect("regex"));

/// A line without its `>` quote markers (`> > text`, `>> text`).
pub fn unquote(line: &str) -> &str {
    let mut s = line.trim_start();
    while let Some(rest) = s.strip_prefix('>') {
        s = rest.trim_start();
    }
    s
}

/// A line of prose: at least four words of letters, and more words than numbers.
fn is_prose(line: &str) -> bool {
    let words = WORD.find_iter(line).count();
    let numbers = line
        .split_whitespace()
        .filter(|w| {
            w.trim_matches(|c: char| !c.is_ascii_digit())
                .parse::<f64>()
                .is_ok()
        })
        .count();
    words >= 4 && words > numbers
}

/// Seconds per unit for time units people write, to compare `from 900 ms to 1.2 s`.
fn seconds(unit: &str) -> Option<f64> {
    Some(match unit.to_lowercase().as_str() {
        "ns" | "nsec" | "nsecs" => 1e-9,
        "us" | "µs" | "usec" | "usecs" => 1e-6,
        "ms" | "msec" | "msecs" => 1e-3,
        "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
        "min" | "mins" | "minutes" => 60.0,
        _ => return None,
    })
}

/// The change from `a` to `b` in percent, when their units agree (or are both times).
fn from_to(a: f64, ua: Option<&str>, b: f64, ub: Option<&str>) -> Option<f64> {
    // A unit is required (`from 6 to 32 groups` is a range, not a change): the same word on
    // both sides, or a time unit written once ("from 4.32 to 3.6 seconds").
    let (fa, fb) = match (ua, ub) {
        (Some(x), Some(y)) if x.eq_ignore_ascii_case(y) => (1.0, 1.0),
        (Some(x), Some(y)) => (seconds(x)?, seconds(y)?),
        (None, Some(u)) | (Some(u), None) if seconds(u).is_some() => (1.0, 1.0),
        _ => return None,
    };
    let (a, b) = (a * fa, b * fb);
    (a > 0.0).then(|| (b - a) / a * 100.0)
}

fn sense_of_word(word: &str, amount: Amount) -> Option<Sense> {
    let w = word.to_lowercase();
    let down = [
        "reduc", "decreas", "drop", "lower", "cut", "sav", "fewer", "less", "smaller", "shorter",
    ];
    let up = ["increas", "more", "higher", "larger", "bigger", "longer"];
    let better = ["improv", "better", "speed", "sped", "faster", "gain"];
    let worse = ["regress", "degrad", "worse", "slow", "overhead"];
    let starts = |list: &[&str]| list.iter().any(|p| w.starts_with(p));
    let signed = |up: bool| match amount {
        Amount::Percent(p) => Sense::Change(if up { p } else { -p }),
        Amount::Times(x) if up => Sense::Change((x - 1.0) * 100.0),
        Amount::Times(x) => Sense::Change((1.0 / x - 1.0) * 100.0),
    };
    if starts(&better) {
        Some(Sense::Better(amount))
    } else if starts(&worse) {
        Some(Sense::Worse(amount))
    } else if starts(&down) {
        Some(signed(false))
    } else if starts(&up) {
        Some(signed(true))
    } else {
        None
    }
}

/// The claims of a mail, in order.
pub fn find(text: &str) -> Vec<Claim> {
    let mut out = Vec::new();
    // Paragraphs: runs of non-empty unquoted lines, with each line's offset in the joined text.
    let mut para = String::new();
    let mut starts: Vec<(usize, u64)> = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, raw) in lines.iter().enumerate() {
        let line = unquote(raw);
        if !line.trim().is_empty() {
            starts.push((para.len(), i as u64 + 1));
            para.push_str(line.trim());
            para.push(' ');
            if let Some(c) = ROW_NOTE.captures(line.trim())
                && let Ok(v) = c[2].parse::<f64>()
            {
                let v = if &c[1] == "+" { v } else { -v };
                let text = format!("{}{}%", &c[1], &c[2]);
                out.push(claim(&text, i as u64 + 1, Sense::Change(v), line));
            }
            // Bare signed percentages and arrows only on prose lines.
            if is_prose(line) {
                for c in ARROW.captures_iter(line) {
                    let (a, b) = (c[1].parse::<f64>(), c[3].parse::<f64>());
                    if let (Ok(a), Ok(b)) = (a, b)
                        && let Some(pct) = from_to(
                            a,
                            c.get(2).map(|m| m.as_str()),
                            b,
                            c.get(4).map(|m| m.as_str()),
                        )
                    {
                        out.push(claim(&c[0], i as u64 + 1, Sense::Change(pct), line));
                    }
                }
                for c in SIGNED.captures_iter(line) {
                    let v: f64 = c[2].parse().unwrap_or(f64::NAN);
                    let v = if &c[1] == "+" { v } else { -v };
                    if v.is_finite() && !covered(line, c.get(0).map_or(0, |m| m.start())) {
                        out.push(claim(
                            c[0].trim_start_matches([' ', '(', ':', ',']),
                            i as u64 + 1,
                            Sense::Change(v),
                            line,
                        ));
                    }
                }
            }
        }
        if line.trim().is_empty() || i + 1 == lines.len() {
            scan_paragraph(&para, &starts, &mut out);
            para.clear();
            starts.clear();
        }
    }
    out.sort_by_key(|c| c.line);
    out
}

/// True when the signed percentage at `at` is part of a worded claim, which the paragraph
/// scan finds on its own.
fn covered(line: &str, at: usize) -> bool {
    PCT_BEFORE
        .find_iter(line)
        .chain(PCT_AFTER.find_iter(line))
        .any(|m| m.start() <= at && at < m.end())
}

fn claim(text: &str, line: u64, sense: Sense, context: &str) -> Claim {
    Claim {
        text: text.trim().to_string(),
        line,
        sense,
        context: context.to_lowercase(),
    }
}

fn scan_paragraph(para: &str, starts: &[(usize, u64)], out: &mut Vec<Claim>) {
    let line_at = |pos: usize| {
        starts
            .iter()
            .take_while(|(off, _)| *off <= pos)
            .last()
            .map_or(0, |(_, l)| *l)
    };
    let mut taken: Vec<(usize, usize)> = Vec::new();
    let mut push = |m: regex::Match<'_>, sense: Option<Sense>, out: &mut Vec<Claim>| {
        let (s, e) = (m.start(), m.end());
        if let Some(sense) = sense
            && !taken.iter().any(|(a, b)| s < *b && *a < e)
        {
            taken.push((s, e));
            out.push(claim(m.as_str(), line_at(s), sense, para));
        }
    };
    for c in RATIO_AFTER.captures_iter(para) {
        let x: f64 = c[1].parse().unwrap_or(0.0);
        push(
            c.get(0).expect("match"),
            (x > 0.0)
                .then(|| sense_of_word(&c[2], Amount::Times(x)))
                .flatten(),
            out,
        );
    }
    for c in RATIO_BEFORE.captures_iter(para) {
        let x: f64 = c[2].parse().unwrap_or(0.0);
        push(
            c.get(0).expect("match"),
            (x > 0.0)
                .then(|| sense_of_word(&c[1], Amount::Times(x)))
                .flatten(),
            out,
        );
    }
    for c in PCT_BEFORE.captures_iter(para) {
        let p: f64 = c[2].parse().unwrap_or(f64::NAN);
        push(
            c.get(0).expect("match"),
            p.is_finite()
                .then(|| sense_of_word(&c[1], Amount::Percent(p)))
                .flatten(),
            out,
        );
    }
    for c in PCT_AFTER.captures_iter(para) {
        let p: f64 = c[1].parse().unwrap_or(f64::NAN);
        push(
            c.get(0).expect("match"),
            p.is_finite()
                .then(|| sense_of_word(&c[2], Amount::Percent(p)))
                .flatten(),
            out,
        );
    }
    for c in FROM_TO.captures_iter(para) {
        let (a, b) = (c[1].parse::<f64>(), c[3].parse::<f64>());
        let sense = match (a, b) {
            (Ok(a), Ok(b)) => from_to(
                a,
                c.get(2).map(|m| m.as_str()),
                b,
                c.get(4).map(|m| m.as_str()),
            )
            .map(Sense::Change),
            _ => None,
        };
        push(c.get(0).expect("match"), sense, out);
    }
}

/// What the data say about a claim.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Consistent,
    Overstated,
    Understated,
    NotSupported,
    /// No compared series to check it against.
    Unmatched,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Consistent => "consistent",
            Status::Overstated => "overstated",
            Status::Understated => "understated",
            Status::NotSupported => "not supported by the data",
            Status::Unmatched => "no matching series",
        }
    }
}

/// A compared series as the checker sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub name: String,
    /// The metric, to find the series a claim names.
    pub metric: String,
    pub direction: Direction,
    pub change_pct: f64,
    pub ci: Option<(f64, f64)>,
}

/// A claim beside the measurement it was matched to.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Checked {
    pub text: String,
    pub line: u64,
    pub claimed_change_pct: Option<f64>,
    pub matched_series: Option<String>,
    pub measured_change_pct: Option<f64>,
    pub measured_ci: Option<(f64, f64)>,
    pub status: Status,
}

impl Checked {
    /// `claimed -65.5%, measured -65.6% [-70.9, -60.4], consistent`.
    pub fn summary(&self) -> String {
        let pct = |v: f64| crate::format::percent(Some(v), 1);
        let mut s = match self.claimed_change_pct {
            Some(c) => format!("claimed {}", pct(c)),
            None => "claimed a change".to_string(),
        };
        if let Some(m) = self.measured_change_pct {
            s.push_str(&format!(", measured {}", pct(m)));
            if let Some((lo, hi)) = self.measured_ci {
                s.push_str(&format!(" {}", crate::format::percent_interval(lo, hi)));
            }
        }
        s.push_str(", ");
        s.push_str(self.status.as_str());
        s
    }
}

/// Words of a metric name a sentence might use (`hit` of `func.hit`, `real`).
fn metric_words(metric: &str) -> Vec<String> {
    let mut words: Vec<String> = metric
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.len() >= 3 && w.bytes().any(|b| b.is_ascii_alphabetic()))
        .map(str::to_lowercase)
        .collect();
    // Wall-clock time is what `time` calls real and `perf stat` elapsed.
    if words.iter().any(|w| w == "elapsed" || w == "real") {
        words.push("wallclock".into());
    }
    words
}

fn names(context: &str, metric: &str) -> bool {
    // "wall-clock time" names the elapsed time, not perf's `cpu-clock`.
    let context = context
        .replace("wall-clock", "wallclock")
        .replace("wall clock", "wallclock");
    let ctx: Vec<&str> = context
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    metric_words(metric).iter().any(|m| {
        ctx.iter()
            .any(|w| *w == m || w.strip_suffix('s') == Some(m.as_str()))
    })
}

/// Checks each claim against the compared series (see the module documentation for the rule).
pub fn check(claims: &[Claim], series: &[Measured]) -> Vec<Checked> {
    claims
        .iter()
        .map(|c| {
            let named: Vec<&Measured> = series
                .iter()
                .filter(|s| names(&c.context, &s.metric))
                .collect();
            let pool: Vec<&Measured> = if named.is_empty() {
                series.iter().collect()
            } else {
                named
            };
            // Nearest first, but a series within rounding of the claim that has an interval
            // beats one without (a sum over CPUs is one value; its per-CPU values test it).
            let key = |s: &Measured, cp: f64| {
                let off = (s.change_pct - cp).abs();
                (off > tolerance(cp) || s.ci.is_none(), off)
            };
            let best = pool
                .into_iter()
                .filter_map(|s| c.change_pct(s.direction).map(|cp| (s, cp)))
                .min_by(|(a, ca), (b, cb)| {
                    let (ka, kb) = (key(a, *ca), key(b, *cb));
                    ka.0.cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
                });
            match best {
                None => Checked {
                    text: c.text.clone(),
                    line: c.line,
                    claimed_change_pct: match c.sense {
                        Sense::Change(v) => Some(v),
                        _ => None,
                    },
                    matched_series: None,
                    measured_change_pct: None,
                    measured_ci: None,
                    status: Status::Unmatched,
                },
                Some((s, cp)) => Checked {
                    text: c.text.clone(),
                    line: c.line,
                    claimed_change_pct: Some(cp),
                    matched_series: Some(s.name.clone()),
                    measured_change_pct: Some(s.change_pct),
                    measured_ci: s.ci,
                    status: status(cp, s.change_pct, s.ci),
                },
            }
        })
        .collect()
}

/// How far a measured change may be from a claimed one and still be its rounding.
fn tolerance(claimed: f64) -> f64 {
    (0.1 * claimed.abs()).max(1.0)
}

/// The rule of the module documentation.
pub fn status(claimed: f64, measured: f64, ci: Option<(f64, f64)>) -> Status {
    if (claimed - measured).abs() <= tolerance(claimed) {
        return Status::Consistent;
    }
    if ci.is_some_and(|(lo, hi)| lo <= 0.0 && 0.0 <= hi) {
        return Status::NotSupported;
    }
    if ci.is_some_and(|(lo, hi)| lo <= claimed && claimed <= hi) {
        return Status::Consistent;
    }
    let opposite = claimed * measured < 0.0;
    if opposite || (ci.is_none() && measured.abs() < 1.0) {
        Status::NotSupported
    } else if claimed.abs() > measured.abs() {
        Status::Overstated
    } else {
        Status::Understated
    }
}

#[cfg(test)]
#[path = "claims_tests.rs"]
mod tests;
