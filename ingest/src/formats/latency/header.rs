//! The per-trace header fields and where they go: metadata keys with the trace's prefix and
//! the `latency` and `entries` series.

use std::fmt::{Display, Write};

use serde_json::Value;

use super::{rfind_space_paren, split_comm_pid};
use crate::error::ParseError;
use crate::lines::{self, words};
use crate::model::{Ctx, SeriesId, SeriesKey, SeriesSpec};

/// Writes a trace's metadata and samples. Keys and values are built in reused buffers: a file
/// of many traces passes the cap on metadata early, after which each value is only counted,
/// and a `String` per key would be wasted.
#[derive(Default)]
pub(super) struct Out {
    /// What the current trace's keys start with: nothing for the first trace, `traceN.` for
    /// the Nth.
    prefix: String,
    key: String,
    val: String,
    latency: Option<SeriesId>,
    entries: Option<SeriesId>,
}

impl Out {
    /// Starts the keys of the trace at 1-based position `index`.
    pub(super) fn set_trace(&mut self, index: usize) {
        self.prefix.clear();
        if index > 1 {
            let _ = write!(self.prefix, "trace{index}.");
        }
    }

    fn key(&mut self, name: &str) -> &str {
        self.key.clear();
        self.key.push_str(&self.prefix);
        self.key.push_str(name);
        &self.key
    }

    /// Meta `<prefix><name>`.
    pub(super) fn meta(&mut self, ctx: &mut Ctx<'_>, name: &str, value: &str) {
        if !ctx.keeps_metas() {
            return ctx.meta_dropped();
        }
        let key = self.key(name);
        ctx.meta(key, value);
    }

    /// [`Out::meta`] of a value as it displays.
    pub(super) fn meta_of(&mut self, ctx: &mut Ctx<'_>, name: &str, value: impl Display) {
        if !ctx.keeps_metas() {
            return ctx.meta_dropped();
        }
        self.val.clear();
        let _ = write!(self.val, "{value}");
        self.key.clear();
        self.key.push_str(&self.prefix);
        self.key.push_str(name);
        ctx.meta(&self.key, self.val.as_str());
    }

    /// [`Out::meta_of`] of a number, through the cheaper integer formatting when the number
    /// is a whole one that `f64` displays with the same digits.
    fn meta_num(&mut self, ctx: &mut Ctx<'_>, name: &str, value: f64) {
        if (1.0..9_007_199_254_740_992.0).contains(&value) && value.fract() == 0.0 {
            self.meta_of(ctx, name, value as u64);
        } else {
            self.meta_of(ctx, name, value);
        }
    }

    /// Extra `<prefix><name>`.
    pub(super) fn extra(&mut self, ctx: &mut Ctx<'_>, name: &str, value: Value) {
        let key = self.key(name);
        ctx.extra(key, value);
    }

    /// `12 us, #3/3, CPU#1 | (M:preempt VP:0, KP:0, SP:0 HP:0 #P:2)`
    pub(super) fn latency(&mut self, rest: &str, ctx: &mut Ctx<'_>) -> Result<(), ParseError> {
        let l = match super::fast::latency_line(rest) {
            Some(l) => l,
            None => latency_line(rest, ctx.line)?,
        };
        if !ctx.metas_done() {
            self.model(ctx, l.cpu, l.shown, l.total, l.model);
        }
        let id = *self
            .latency
            .get_or_insert_with(|| ctx.series(SeriesSpec::duration(SeriesKey::new("latency"))));
        ctx.sample(id, lines::us_to_s(l.latency_us))?;
        let id = *self
            .entries
            .get_or_insert_with(|| ctx.series(SeriesSpec::count(SeriesKey::new("entries"))));
        ctx.sample(id, l.total)
    }

    /// The metadata of a `latency:` line: its CPU, entry counts and preemption model. Past
    /// the cap on metadata ([`Ctx::metas_done`]) a file of many traces skips reading them.
    fn model(&mut self, ctx: &mut Ctx<'_>, cpu: &str, shown: f64, total: f64, model: &str) {
        self.meta(ctx, "cpu", lines::trim(cpu));
        self.meta_num(ctx, "entries_shown", shown);
        self.meta_num(ctx, "entries_total", total);
        let model = lines::trim(model)
            .trim_start_matches('(')
            .trim_end_matches(')');
        // `M:preempt VP:0, KP:0, SP:0 HP:0 #P:4`: tokens apart by single spaces and commas,
        // cut as bytes (both are ASCII, so every piece is whole characters).
        let mut start = 0;
        for end in memchr::memchr2_iter(b' ', b',', model.as_bytes()).chain([model.len()]) {
            let tok = &model[start..end];
            start = end + 1;
            let Some((name, value)) = tok.split_once(':') else {
                continue;
            };
            let key = match name {
                "M" => "preemption_model",
                "SP" => "sp",
                "HP" => "hp",
                "#P" => "ncpus",
                _ => continue,
            };
            self.meta(ctx, key, value);
        }
    }

    /// ` IRQ 233-2446 (uid:0 nice:-5 policy:1 rt_prio:40)`: metadata only, skipped past the
    /// cap ([`Ctx::metas_done`]).
    pub(super) fn task(&mut self, rest: &str, ctx: &mut Ctx<'_>) {
        if ctx.metas_done() {
            return;
        }
        let rest = lines::trim(rest);
        let (task, attrs) = match rfind_space_paren(rest) {
            Some(i) => (&rest[..i], rest[i + 2..].trim_end_matches(')')),
            None => (rest, ""),
        };
        let (comm, pid) = split_comm_pid(lines::trim(task));
        self.meta(ctx, "task", comm);
        if let Some(pid) = pid {
            self.meta_of(ctx, "pid", pid);
        }
        for tok in words(attrs) {
            if let Some((k, v)) = tok.split_once(':')
                && matches!(k, "uid" | "nice" | "policy" | "rt_prio")
            {
                self.meta(ctx, k, v);
            }
        }
    }
}

/// What a `latency:` line says: the latency (us), the entries shown and in all, the CPU's
/// text and the preemption model's (what follows `|`).
pub(super) struct LatencyLine<'a> {
    pub(super) latency_us: f64,
    pub(super) shown: f64,
    pub(super) total: f64,
    pub(super) cpu: &'a str,
    pub(super) model: &'a str,
}

/// The rest of a `latency:` line at `line` read with every spelling the general rules take
/// (numbers with fractions or thousands separators, any spaces).
pub(super) fn latency_line(rest: &str, line: u64) -> Result<LatencyLine<'_>, ParseError> {
    let bad = || {
        ParseError::syntax(
            line,
            "`latency: N us, #shown/total, CPU#n | (M:model ...)`",
            format!("latency:{rest}"),
        )
    };
    let (lat, rest) = rest.split_once(',').ok_or_else(bad)?;
    let lat = lines::trim(lat).strip_suffix("us").ok_or_else(bad)?;
    let latency_us = lines::parse_number(lat).ok_or_else(bad)?;
    let (counts, rest) = rest.split_once(',').ok_or_else(bad)?;
    let (shown, total) = lines::trim(counts)
        .strip_prefix('#')
        .and_then(|c| c.split_once('/'))
        .ok_or_else(bad)?;
    let shown = lines::parse_number(shown).ok_or_else(bad)?;
    let total = lines::parse_number(total).ok_or_else(bad)?;
    let (cpu, model) = rest.split_once('|').unwrap_or((rest, ""));
    let cpu = lines::trim(cpu).strip_prefix("CPU#").ok_or_else(bad)?;
    Ok(LatencyLine {
        latency_us,
        shown,
        total,
        cpu,
        model,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn whole_numbers_display_as_integers() {
        for v in [1.0, 168.0, 1e15, 9_007_199_254_740_991.0_f64] {
            assert_eq!((v as u64).to_string(), v.to_string());
        }
    }
}
