//! The tail's output passed on after the head's, as one parse of the whole file would have.

use crate::model::{Ctx, MAX_EXTRAS, MAX_METAS, MAX_WARNINGS, SeriesId, SeriesKey, SeriesSpec};
use crate::summary::{SeriesTable, SeriesView};

use super::record::Event;
use super::{Mark, TailOut, Verdict};

const NONE: SeriesId = SeriesId::MAX;

fn spec(v: &SeriesView<'_>) -> SeriesSpec {
    SeriesSpec {
        key: SeriesKey {
            metric: v.metric.to_string(),
            scope: v.scope.to_string(),
            label: v.label.map(str::to_string),
            params: v.params.clone(),
            statistic: v.statistic.map(str::to_string),
        },
        unit: v.unit.clone(),
        direction: v.direction,
    }
}

/// Passes the tail's records from `mark` on, then its stored series, into `table` after what
/// the head gave (`head` is what the head counted). Returns the whole count, or `None` when
/// the tail's output cannot be placed as a whole parse would have placed it:
/// - the tail failed (a failure after the meeting line would be the whole parse's too, but
///   the file is then parsed again rather than reasoned about);
/// - the tail passed a cap (metadata, extras, warnings) having counted more before the
///   meeting line than the head had: it may have dropped what the whole parse keeps;
/// - a series the tail declared before the meeting line, and used after it, is new to the
///   head: the whole parse would have declared it where it was first used, so its place in
///   the order of series is not known.
pub(super) fn merge(
    table: &mut SeriesTable,
    file_name: Option<String>,
    head: crate::model::Tally,
    verdict: &Verdict,
    mark: &Mark,
    tail: TailOut,
) -> Option<crate::model::Tally> {
    tail.result.as_ref().ok()?;
    let (t, m, h) = (&tail.tally, &mark.tally, &verdict.tally);
    let passed = [
        (t.metas > MAX_METAS, m.metas > h.metas),
        (t.extras > MAX_EXTRAS, m.extras > h.extras),
        (t.warnings as usize > MAX_WARNINGS, m.warnings > h.warnings),
    ];
    if passed.iter().any(|&(cap, more)| cap && more) {
        return None;
    }
    let mut known = table.len();
    let mut ctx = Ctx::new(table, file_name);
    ctx.absorb(head);
    let from = &tail.table;
    let mut map = vec![NONE; from.len()];
    // Declares the tail's series `id` after the head's; whether it is new to them.
    let mut declare = |ctx: &mut Ctx<'_>, id: SeriesId| {
        let a = ctx.series(spec(&from.get(id)));
        let new = a >= known;
        known = known.max(a + 1);
        (a, new)
    };
    let (mut metas, mut extras, mut warnings) = (0, 0, 0);
    for event in &tail.events[mark.events..] {
        match event {
            Event::Series(id) => map[*id] = declare(&mut ctx, *id).0,
            Event::Sample(id, value) => {
                if map[*id] == NONE {
                    let (a, new) = declare(&mut ctx, *id);
                    if new && *id < mark.series {
                        return None;
                    }
                    map[*id] = a;
                }
                ctx.sample(map[*id], *value).ok()?;
            }
            Event::Meta(line, key, value) => {
                metas += 1;
                ctx.line = *line;
                ctx.meta(key, value);
            }
            Event::Warning(w) => {
                warnings += 1;
                ctx.warn_at(w.line, w.message.clone());
            }
            Event::Extra(line, key, value) => {
                extras += 1;
                ctx.line = *line;
                ctx.extra(key, value.clone());
            }
        }
    }
    for (id, slot) in map.iter_mut().enumerate() {
        let in_window = id < tail.window_series;
        // A tail that ended in its window used none of them after it.
        if in_window && tail.used_after.get(id) != Some(&true) {
            continue;
        }
        if *slot == NONE {
            let (a, new) = declare(&mut ctx, id);
            if new && in_window {
                return None;
            }
            *slot = a;
        }
        let a = *slot;
        let mut bad = false;
        from.get(id)
            .each_chunk(&mut |xs| {
                for &x in xs {
                    bad |= ctx.sample(a, x).is_err();
                }
            })
            .ok()?;
        if bad {
            return None;
        }
    }
    // What the tail counted after the meeting line but did not pass on (past its caps).
    let passed_on = ctx.tally();
    let samples = passed_on.samples - head.samples;
    if samples != t.samples - m.samples {
        return None;
    }
    ctx.absorb(crate::model::Tally {
        samples: 0,
        warnings: (t.warnings - m.warnings) - warnings,
        metas: (t.metas - m.metas) - metas,
        extras: (t.extras - m.extras) - extras,
    });
    Some(ctx.tally())
}
