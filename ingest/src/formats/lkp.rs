//! The comparison tables of LKP (the kernel test robot's `ncompare` output):
//!
//! ```text
//! f2ffc48de2017c69 ee5eda8ea59546af2e8f192c060
//! ---------------- ---------------------------
//!          %stddev     %change         %stddev
//!              \          |                \
//!   38728105 ±3%     +26.0%   48797851 ±10%  stress-ng.pipeherd.ops_per_sec
//!       3930          +7.8%       4235 ± 3%  vmstat.procs.r
//! ```
//!
//! The two commit ids over the columns label the values. Each row's values are means over the
//! robot's runs, so they become series with statistic `mean` (dimensionless, neutral: the robot
//! does not say which way is better), and the `± N%` spreads series `METRIC.stddev_pct`
//! (statistic `rel_stddev_pct`, `%`). The change column is derived from the means (a relative
//! `%`, or an absolute difference for metrics that are percentages) and is not stored. Values in
//! e-notation (`2.331e+09`) are read; `±` may be followed by spaces or not.

use super::Format;
use crate::error::ParseError;
use crate::lines::{Lines, parse_number, strip_mail};
use crate::model::{Ctx, Direction, SeriesKey, SeriesSpec, Unit};

pub struct Lkp;

const LEGEND: &str = "%stddev     %change         %stddev";

impl Format for Lkp {
    fn name(&self) -> &'static str {
        "lkp"
    }

    fn description(&self) -> &'static str {
        "LKP / kernel test robot comparison tables (base ± stddev, change, head ± stddev, metric)"
    }

    fn sniff(&self, head: &str) -> u32 {
        if head.lines().any(|l| strip_mail(l).starts_with(LEGEND)) {
            95
        } else {
            0
        }
    }

    fn parse(&self, lines: &mut Lines<'_>, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        let mut columns: Option<[String; 2]> = None;
        let mut previous = String::new();
        let mut in_table = false;
        let mut rows = 0u64;
        while let Some((no, raw)) = lines.next_numbered()? {
            ctx.line = no;
            let line = strip_mail(raw).trim_end();
            if line.starts_with("----------------") {
                // The line above the rule names the two commits.
                let ids: Vec<&str> = previous.split_whitespace().collect();
                if let [a, b] = ids.as_slice() {
                    columns = Some([a.to_string(), b.to_string()]);
                }
            } else if line.starts_with(LEGEND) {
                in_table = true;
            } else if in_table {
                if line.trim_start().starts_with('\\') {
                    // `\   |   \` under the legend.
                } else if let Some(r) = row(line) {
                    let labels = columns
                        .clone()
                        .unwrap_or_else(|| ["base".into(), "head".into()]);
                    for (label, (mean, sd)) in labels.into_iter().zip([r.base, r.head]) {
                        let key = SeriesKey::new(r.metric)
                            .label(Some(label.clone()))
                            .statistic("mean");
                        let unit = Unit::Other("1".into());
                        ctx.push(SeriesSpec::new(key, unit, Direction::Neutral), mean)?;
                        if let Some(sd) = sd {
                            let key = SeriesKey::new(format!("{}.stddev_pct", r.metric))
                                .label(Some(label))
                                .statistic("rel_stddev_pct");
                            ctx.push(SeriesSpec::new(key, Unit::Percent, Direction::Neutral), sd)?;
                        }
                    }
                    rows += 1;
                } else if line.is_empty() {
                    if rows > 0 {
                        in_table = false;
                    }
                } else {
                    in_table = false;
                }
            }
            previous.clear();
            previous.push_str(line);
        }
        if rows == 0 {
            return Err(ParseError::nothing(
                "LKP comparison rows (`BASE [± N%]  CHANGE  HEAD [± N%]  METRIC`) under a `%stddev  %change  %stddev` legend",
            ));
        }
        ctx.meta("rows", rows.to_string());
        Ok(())
    }
}

struct Row<'a> {
    base: (f64, Option<f64>),
    head: (f64, Option<f64>),
    metric: &'a str,
}

/// `38728105 ±3%  +26.0%  48797851 ±10%  metric`, the spreads optional, `± 3%` with a space.
fn row(line: &str) -> Option<Row<'_>> {
    // Join `±` with its number so every cell is one token.
    let mut toks: Vec<&str> = Vec::new();
    let mut it = line.split_whitespace().peekable();
    let mut spreads: Vec<Option<f64>> = Vec::new();
    while let Some(t) = it.next() {
        if let Some(rest) = t.strip_prefix('±') {
            let text = if rest.is_empty() { it.next()? } else { rest };
            let v = parse_number(text.strip_suffix('%')?)?;
            *spreads.last_mut()? = Some(v);
            continue;
        }
        toks.push(t);
        spreads.push(None);
    }
    // base, change, head, metric (the change column may be absent).
    let (base, head, metric, sb, sh) = match toks.as_slice() {
        [b, c, h, m] if is_change(c) => (*b, *h, *m, spreads[0], spreads[2]),
        [b, h, m] => (*b, *h, *m, spreads[0], spreads[1]),
        _ => return None,
    };
    let base = number(base)?;
    let head = number(head)?;
    (metric.contains(|c: char| c.is_ascii_alphabetic())).then_some(Row {
        base: (base, sb),
        head: (head, sh),
        metric,
    })
}

fn is_change(t: &str) -> bool {
    t.starts_with(['+', '-']) && number(t.trim_end_matches('%')).is_some()
}

/// Plain or e-notation numbers (`2.331e+09`).
fn number(t: &str) -> Option<f64> {
    parse_number(t).or_else(|| {
        let ok = t.bytes().any(|b| b.is_ascii_digit())
            && t.bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e'));
        ok.then(|| t.parse::<f64>().ok()).flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows() {
        let r = row("  38728105 ±3%     +26.0%   48797851 ±10%  stress-ng.pipeherd.ops_per_sec")
            .unwrap();
        assert_eq!(r.base, (38728105.0, Some(3.0)));
        assert_eq!(r.head, (48797851.0, Some(10.0)));
        assert_eq!(r.metric, "stress-ng.pipeherd.ops_per_sec");
        let r =
            row("     21281 ±147%    +197.5%      63313 ± 84%  numa-meminfo.node0.Shmem").unwrap();
        assert_eq!(
            (r.base, r.head),
            ((21281.0, Some(147.0)), (63313.0, Some(84.0)))
        );
        let r = row("  3.182e+10  +8.2%  3.443e+10 ±2%  perf-stat.i.branch-instructions").unwrap();
        assert_eq!((r.base.0, r.head.0), (3.182e10, 3.443e10));
        let r = row("      0.54 ±3%      -0.1        0.41 ±12%  perf-stat.i.branch-miss-rate%")
            .unwrap();
        assert_eq!((r.base.0, r.head.0), (0.54, 0.41));
        assert!(row("kernel test robot noticed a 26.0% improvement").is_none());
    }
}
