//! The tail's sink: records what it is given in its window, stores series and samples after.

use crate::model::{SeriesId, SeriesSpec, Sink, Warning};
use crate::summary::SeriesTable;

/// One thing the tail passed on, in order.
pub(crate) enum Event {
    /// A series declared (its id in the tail's table).
    Series(SeriesId),
    Sample(SeriesId, f64),
    /// Metadata and extras with the line they came from, for a cap passed on them.
    Meta(u64, String, String),
    Warning(Warning),
    Extra(u64, String, serde_json::Value),
}

/// Declares series in the tail's table throughout, so that ids are the table's. In the window,
/// samples are recorded as events (those before the line where the halves meet are not the
/// whole parse's); after it they are stored, and which series declared in the window they
/// went to is kept. Metadata, warnings and extras are always recorded (the head's counts
/// decide which are kept; each is capped, so the record is bounded).
pub(crate) struct Recorder<'t> {
    table: &'t mut SeriesTable,
    recording: bool,
    events: Vec<Event>,
    line: u64,
    window_series: usize,
    used_after: Vec<bool>,
}

impl<'t> Recorder<'t> {
    pub(crate) fn new(table: &'t mut SeriesTable) -> Self {
        Recorder {
            table,
            recording: true,
            events: Vec::new(),
            line: 0,
            window_series: 0,
            used_after: Vec::new(),
        }
    }

    /// The events, the series declared in the window and which of those were used after it.
    pub(crate) fn into_parts(self) -> (Vec<Event>, usize, Vec<bool>) {
        let window_series = if self.recording {
            self.table.len()
        } else {
            self.window_series
        };
        (self.events, window_series, self.used_after)
    }

    #[inline]
    fn used(&mut self, id: SeriesId) {
        if id < self.window_series {
            self.used_after[id] = true;
        }
    }
}

impl Sink for Recorder<'_> {
    fn series(&mut self, spec: &SeriesSpec) -> SeriesId {
        let id = self.table.series(spec);
        if self.recording {
            self.events.push(Event::Series(id));
        } else {
            self.used(id);
        }
        id
    }

    fn sample(&mut self, id: SeriesId, value: f64) {
        if self.recording {
            self.events.push(Event::Sample(id, value));
        } else {
            self.used(id);
            self.table.sample(id, value);
        }
    }

    fn series_sample(&mut self, spec: &SeriesSpec, value: f64) -> SeriesId {
        if self.recording {
            let id = self.series(spec);
            self.events.push(Event::Sample(id, value));
            return id;
        }
        let id = self.table.series_sample(spec, value);
        self.used(id);
        id
    }

    fn meta(&mut self, key: &str, value: String) {
        self.events
            .push(Event::Meta(self.line, key.to_string(), value));
    }

    fn warning(&mut self, warning: Warning) {
        self.events.push(Event::Warning(warning));
    }

    fn extra(&mut self, key: &str, value: serde_json::Value) {
        self.events
            .push(Event::Extra(self.line, key.to_string(), value));
    }

    fn metric_name(&self, id: SeriesId) -> Option<&str> {
        self.table.metric_name(id)
    }

    fn is_nonnegative(&self, id: SeriesId) -> Option<bool> {
        self.table.is_nonnegative(id)
    }

    fn keeps_names_and_units(&self) -> bool {
        self.table.keeps_names_and_units()
    }

    fn split_line(&mut self, line: u64) {
        self.line = line;
    }

    fn split_mark(&mut self, end_window: bool) -> Option<(usize, usize)> {
        if end_window && self.recording {
            self.recording = false;
            self.window_series = self.table.len();
            self.used_after = vec![false; self.window_series];
        }
        Some((self.events.len(), self.table.len()))
    }
}
