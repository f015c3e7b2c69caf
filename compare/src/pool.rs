//! Pooling the samples of a whole comparison into comparable series, generic over the key
//! that names a series: the per-CPU rule (the median of each CPU becomes one sample of a pooled
//! series), the choice of statistics per kind of series, and Benjamini-Hochberg across all.

use std::collections::HashMap;
use std::hash::Hash;

use crate::{Direction, SeriesComparison, Settings};

/// The samples of one series on both sides. `C` names a CPU (a string, or an interned id
/// where a profile has millions of per-CPU series).
#[derive(Debug, Clone)]
pub struct Input<K, C = String> {
    pub key: K,
    pub direction: Direction,
    /// The values are someone's pre-computed summaries (`median`, `p99`...): no test.
    pub summary: bool,
    /// For a per-CPU series (`cpuN`): the key of the series pooling every CPU, and this CPU's
    /// name. Summaries are never pooled.
    pub cpu: Option<(K, C)>,
    pub base: Vec<f64>,
    pub head: Vec<f64>,
}

/// One CPU's values on a pooled row.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CpuValue<C = String> {
    /// Named `scope` outside: a CPU is the scope of its series.
    #[serde(rename = "scope")]
    pub cpu: C,
    pub base: Option<f64>,
    pub head: Option<f64>,
}

/// One compared series.
#[derive(Debug, Clone)]
pub struct Output<K, C = String> {
    pub key: K,
    pub direction: Direction,
    pub cmp: SeriesComparison,
    /// The samples compared (for a pooled series, the median of each CPU).
    pub base: Vec<f64>,
    pub head: Vec<f64>,
    /// On a pooled series when folding: the CPUs whose single values it carries, in input order.
    pub per_cpu: Vec<CpuValue<C>>,
}

/// Compares every input present on both sides; pools per-CPU series (two CPUs or more) into
/// one series of per-CPU medians; then adjusts p-values and sets verdicts across the whole
/// comparison. With `fold`, per-CPU series of one value a side (one trace_stat run) appear
/// only through their pooled series, not as rows of their own. Order: inputs as given,
/// pooled series after them.
pub fn pool<K: Clone + Eq + Hash, C: Clone>(
    inputs: impl IntoIterator<Item = Input<K, C>>,
    settings: &Settings,
    fold: bool,
) -> Vec<Output<K, C>> {
    struct Pooled<K, C> {
        key: K,
        direction: Direction,
        base: Vec<f64>,
        head: Vec<f64>,
        cpus: Vec<CpuValue<C>>,
        /// The first folded series' own key and direction: a pool of one CPU is no pool, and
        /// that series becomes a row of its own again.
        first: Option<(K, Direction)>,
    }
    let mut out = Vec::new();
    let mut pooled: Vec<Pooled<K, C>> = Vec::new();
    let mut pooled_index: HashMap<K, usize> = HashMap::new();
    for input in inputs {
        if input.base.is_empty() || input.head.is_empty() {
            continue; // present on one side only
        }
        if let Some((pkey, cpu)) = input.cpu.as_ref().filter(|_| !input.summary) {
            let i = *pooled_index.entry(pkey.clone()).or_insert_with(|| {
                pooled.push(Pooled {
                    key: pkey.clone(),
                    direction: input.direction,
                    base: Vec::new(),
                    head: Vec::new(),
                    cpus: Vec::new(),
                    first: None,
                });
                pooled.len() - 1
            });
            let p = &mut pooled[i];
            let (mb, mh) = (median(&input.base), median(&input.head));
            p.base.extend(mb);
            p.head.extend(mh);
            if fold && input.base.len() == 1 && input.head.len() == 1 {
                p.cpus.push(CpuValue {
                    cpu: cpu.clone(),
                    base: mb,
                    head: mh,
                });
                if p.first.is_none() {
                    p.first = Some((input.key, input.direction));
                }
                continue;
            }
        }
        let cmp = compare_one(
            &input.base,
            &input.head,
            input.direction,
            input.summary,
            false,
            settings,
        );
        out.push(Output {
            key: input.key,
            direction: input.direction,
            cmp,
            base: input.base,
            head: input.head,
            per_cpu: Vec::new(),
        });
    }
    // Exactly the room needed: a row is several hundred bytes, and a profile has thousands.
    out.reserve_exact(pooled.len());
    for p in pooled {
        if p.base.len() < 2 {
            // One CPU only: its series, if folded, is compared on its own after all.
            if let (Some((key, direction)), [c]) = (p.first, &p.cpus[..]) {
                let (base, head): (Vec<f64>, Vec<f64>) =
                    (c.base.into_iter().collect(), c.head.into_iter().collect());
                let cmp = compare_one(&base, &head, direction, false, false, settings);
                out.push(Output {
                    key,
                    direction,
                    cmp,
                    base,
                    head,
                    per_cpu: Vec::new(),
                });
            }
            continue;
        }
        let cmp = compare_one(&p.base, &p.head, p.direction, false, true, settings);
        out.push(Output {
            key: p.key,
            direction: p.direction,
            cmp,
            base: p.base,
            head: p.head,
            per_cpu: p.cpus,
        });
    }
    crate::finish_by(&mut out, |o| &mut o.cmp, |_, o| o.direction, settings);
    out
}

/// The median of `xs`, None when empty.
pub fn median(xs: &[f64]) -> Option<f64> {
    crate::describe::median_sorted(&crate::describe::sorted(xs))
}

fn compare_one(
    b: &[f64],
    h: &[f64],
    direction: Direction,
    summary: bool,
    per_cpu: bool,
    settings: &Settings,
) -> SeriesComparison {
    if summary {
        let mut c = crate::summary_only(median(b), median(h), direction);
        // n counts the summary values (one per run), so a page can say what it rests on.
        c.base.n = b.len();
        c.head.n = h.len();
        c
    } else if per_cpu {
        // Per-CPU values of one run are not resamples of a run-to-run distribution: the
        // distribution-free Hodges-Lehmann interval fits them, and costs far less than a
        // bootstrap over the thousands of functions a profile holds.
        let hl = Settings {
            bootstrap_resamples: 0,
            ..*settings
        };
        crate::compare_series(b, h, direction, &hl, true)
    } else {
        crate::compare_series(b, h, direction, settings, false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(key: &str, cpu: Option<&str>, base: &[f64], head: &[f64]) -> Input<String> {
        Input {
            key: key.to_string(),
            direction: Direction::LowerIsBetter,
            summary: false,
            cpu: cpu.map(|c| ("f.cpus".to_string(), c.to_string())),
            base: base.to_vec(),
            head: head.to_vec(),
        }
    }

    #[test]
    fn per_cpu_series_pool_their_medians() {
        let s = Settings::default();
        let out = pool(
            vec![
                input("f.cpu0", Some("cpu0"), &[1.0, 3.0], &[2.0, 4.0]),
                input("f.cpu1", Some("cpu1"), &[5.0], &[7.0]),
                input("g", None, &[1.0], &[]),
            ],
            &s,
            true,
        );
        let keys: Vec<&str> = out.iter().map(|o| o.key.as_str()).collect();
        // cpu0 has several values a side: it keeps its row; cpu1 folds; g is one-sided.
        assert_eq!(keys, ["f.cpu0", "f.cpus"]);
        let pooled = &out[1];
        assert_eq!(pooled.base, [2.0, 5.0]);
        assert_eq!(pooled.head, [3.0, 7.0]);
        assert_eq!(pooled.per_cpu.len(), 1);
        assert_eq!(pooled.per_cpu[0].cpu, "cpu1");
        assert!(pooled.cmp.flags.contains(&crate::Flag::PerCpu));
    }

    #[test]
    fn a_single_cpu_folded_keeps_its_row() {
        let s = Settings::default();
        let out = pool(
            vec![input("f.cpu0", Some("cpu0"), &[1.0], &[2.0])],
            &s,
            true,
        );
        let keys: Vec<&str> = out.iter().map(|o| o.key.as_str()).collect();
        assert_eq!(
            keys,
            ["f.cpu0"],
            "no pool of one CPU, and the series is not lost"
        );
        assert_eq!(
            (out[0].base.as_slice(), out[0].head.as_slice()),
            (&[1.0][..], &[2.0][..])
        );
        assert!(out[0].per_cpu.is_empty());
        assert!(!out[0].cmp.flags.contains(&crate::Flag::PerCpu));
    }

    #[test]
    fn a_single_cpu_is_not_pooled_and_summaries_never_are() {
        let s = Settings::default();
        let mut summary = input("f.cpu0 median", Some("cpu0"), &[1.0], &[2.0]);
        summary.summary = true;
        let out = pool(
            vec![input("f.cpu0", Some("cpu0"), &[1.0], &[2.0]), summary],
            &s,
            false,
        );
        let keys: Vec<&str> = out.iter().map(|o| o.key.as_str()).collect();
        assert_eq!(keys, ["f.cpu0", "f.cpu0 median"]);
        assert!(out[1].cmp.flags.contains(&crate::Flag::Summary));
        assert_eq!(out[1].cmp.base.n, 1);
    }

    #[test]
    fn medians() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }
}
