//! mmtests `compare-mmtests.pl` / `compare-kernels.sh` tables, as posted in mails.
//!
//! ```text
//! hackbench-process-pipes
//!                               5.7.0                  5.7.0
//!                             vanilla           amir-for-mel
//! Amean     1       0.4837 (   0.00%)      0.4680 *   3.24%*
//! Duration User         136.16         69.10
//! ```
//!
//! One or two header lines name the kernels, right-aligned over the value columns (a second
//! line of patch or configuration names; when the first line is the same for every column only
//! the second names it). The line above the header, when it is a single word group, titles the
//! table. Every cell is a summary mmtests computed, so each becomes a series with `statistic`
//! set (`amean`, `hmean`, `min`, `max`, `stddev`, `coeffvar`, `bamean-99`, ...), metric
//! `TITLE/ROW` (`hackbench-process-pipes/1`, or the row name alone without a title), the
//! column's kernel as label, dimensionless. Harmonic means are throughputs (higher is better),
//! arithmetic means times (lower is better), the rest neutral. The percentages mmtests prints
//! beside each value (`( 3.24%)`, `*  3.24%*` when it judged the change significant) are
//! derived from the values and not stored; meta `significant` counts the starred cells.
//! `Duration User/System/Elapsed` rows are seconds: metric `duration.user` ..., statistic
//! `total`.

use std::sync::LazyLock;

use regex::Regex;

use super::Format;
use crate::error::ParseError;
use crate::lines::{Lines, parse_number, strip_mail};
use crate::model::{Ctx, Direction, SeriesKey, SeriesSpec, Unit};

pub struct Mmtests;

/// The percentage cells: `(   0.00%)`, `*  23.45%*`, `( -1086.99%)`, `(  -nan%)`.
static PCT: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\(\s*-?(?:[\d.]+|nan|inf)%\)|\*\s*-?(?:[\d.]+|nan|inf)%\*").expect("valid regex")
});

fn is_stat(t: &str) -> bool {
    matches!(
        t,
        "Min" | "Max" | "Amean" | "Hmean" | "Gmean" | "Stddev" | "CoeffVar"
    ) || ["BAmean-", "BHmean-", "BGmean-"].iter().any(|p| {
        t.strip_prefix(p)
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// A table row: (statistic, row name, values, starred cells).
fn row(line: &str) -> Option<(&str, &str, Vec<f64>, usize)> {
    let mut it = line.split_whitespace();
    let stat = it.next()?;
    if !(is_stat(stat) || stat == "Duration") {
        return None;
    }
    let name = it.next()?;
    let rest = line.trim_start()[stat.len()..].trim_start()[name.len()..].trim();
    let stars = PCT
        .find_iter(rest)
        .filter(|m| m.as_str().starts_with('*'))
        .count();
    let cleaned = PCT.replace_all(rest, " ");
    let values: Option<Vec<f64>> = cleaned.split_whitespace().map(parse_number).collect();
    let values = values.filter(|v| !v.is_empty())?;
    // Without percentage cells only `Duration` rows are mmtests' (others could be any table).
    (stat == "Duration" || PCT.is_match(rest)).then_some((stat, name, values, stars))
}

impl Format for Mmtests {
    fn name(&self) -> &'static str {
        "mmtests"
    }

    fn description(&self) -> &'static str {
        "mmtests compare tables (Amean/Hmean/... rows with one column per kernel)"
    }

    fn sniff(&self, head: &str) -> u32 {
        let rows = head
            .lines()
            .filter(|l| row(strip_mail(l)).is_some_and(|r| r.0 != "Duration"))
            .take(2)
            .count();
        if rows >= 2 { 88 } else { 0 }
    }

    fn parse(&self, lines: &mut Lines<'_>, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        let mut p = Parser::default();
        while let Some((no, raw)) = lines.next_numbered()? {
            ctx.line = no;
            p.line(raw, ctx)?;
        }
        if p.values == 0 {
            return Err(ParseError::nothing(
                "mmtests table rows (`Amean  NAME  1.23 (  0.00%)  1.20 (  2.44%)`)",
            ));
        }
        ctx.meta("tables", p.tables.to_string());
        ctx.meta("significant", p.stars.to_string());
        Ok(())
    }
}

#[derive(Default)]
struct Parser {
    /// The lines of the current paragraph before a table starts (title and header).
    para: Vec<String>,
    table: Option<Table>,
    values: u64,
    tables: u64,
    stars: usize,
}

struct Table {
    title: Option<String>,
    header: Vec<Vec<String>>,
}

impl Table {
    /// The label of column `i` of a table with `n` value columns.
    fn label(&self, i: usize, n: usize) -> Option<String> {
        let lines: Vec<&Vec<String>> = self.header.iter().filter(|h| h.len() == n).collect();
        match lines.as_slice() {
            [] => None,
            [one] => Some(one[i].clone()),
            [.., first, second] => {
                if first.iter().all(|w| *w == first[0]) {
                    Some(second[i].clone())
                } else {
                    Some(format!("{} {}", first[i], second[i]))
                }
            }
        }
    }
}

impl Parser {
    fn line(&mut self, raw: &str, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        let quoted = strip_mail(raw);
        let unquoted = raw.trim_start_matches(['>', ' ', '\t']).len() < raw.len();
        let line = quoted.trim_end();
        if let Some((stat, name, values, stars)) = row(line) {
            if self.table.is_none() {
                self.start();
            }
            self.stars += stars;
            return self.emit(stat, name, &values, ctx);
        }
        self.table = None;
        if line.is_empty() {
            self.para.clear();
            return Ok(());
        }
        if self.para.len() == 4 {
            self.para.remove(0);
        }
        // Header lines are indented; keep the indentation so they can be told from a title.
        let kept = if unquoted && raw.starts_with([' ', '\t']) {
            format!(" {line}")
        } else {
            line.to_string()
        };
        self.para.push(kept);
        Ok(())
    }

    fn start(&mut self) {
        self.tables += 1;
        let mut header = Vec::new();
        let mut title = None;
        for l in self.para.iter().rev() {
            if l.starts_with(' ') && title.is_none() {
                header.insert(0, l.split_whitespace().map(str::to_string).collect());
            } else {
                let words = l.split_whitespace().count();
                if words <= 6 && !l.contains("--") && !l.ends_with(['.', ':']) {
                    title = Some(l.trim().to_string());
                }
                break;
            }
        }
        self.para.clear();
        self.table = Some(Table { title, header });
    }

    fn emit(
        &mut self,
        stat: &str,
        name: &str,
        values: &[f64],
        ctx: &mut Ctx<'_>,
    ) -> Result<(), ParseError> {
        let Some(t) = &self.table else {
            return Ok(());
        };
        let (metric, statistic, unit, direction) = if stat == "Duration" {
            (
                format!("duration.{}", name.to_ascii_lowercase()),
                "total".to_string(),
                Unit::Seconds,
                Direction::LowerIsBetter,
            )
        } else {
            let metric = match &t.title {
                Some(title) => format!("{title}/{name}"),
                None => name.to_string(),
            };
            let direction = if stat.contains("Hmean") {
                Direction::HigherIsBetter
            } else if stat.contains("Amean") {
                Direction::LowerIsBetter
            } else {
                Direction::Neutral
            };
            let unit = Unit::Other("1".into());
            (metric, stat.to_ascii_lowercase(), unit, direction)
        };
        for (i, v) in values.iter().enumerate() {
            let label = t
                .label(i, values.len())
                .or_else(|| Some(format!("column{}", i + 1)));
            let key = SeriesKey::new(metric.clone())
                .label(label)
                .statistic(statistic.clone());
            ctx.push(SeriesSpec::new(key, unit.clone(), direction), *v)?;
            self.values += 1;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows() {
        let r = row("Amean     1       0.4837 (   0.00%)      0.4630 *   4.27%*").unwrap();
        assert_eq!(r, ("Amean", "1", vec![0.4837, 0.4630], 1));
        let r = row("BHmean-99 8-MSET-10   2.5 ( 0.00%)  2.0 ( -1086.99%)").unwrap();
        assert_eq!(r.2, vec![2.5, 2.0]);
        assert_eq!(
            row("Duration User         136.16\t\t   69.10").unwrap().2,
            vec![136.16, 69.10]
        );
        assert!(row("Min latency is 3 us").is_none());
        assert!(row("Amean 1 0.48 0.46").is_none());
    }
}
