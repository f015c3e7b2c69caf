//! [`Dataset`]: a sink that keeps everything in memory.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{FastMap, Series, SeriesId, SeriesKey, SeriesSpec, Sink, Warning, set_meta};

/// Everything parsed from one input, collected in memory: what `quiescent parse` prints.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Dataset {
    pub meta: BTreeMap<String, String>,
    pub series: Vec<Series>,
    pub warnings: Vec<Warning>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, serde_json::Value>,
    #[serde(skip)]
    index: FastMap<SeriesKey, SeriesId>,
}

impl Dataset {
    pub fn new() -> Self {
        Self::default()
    }

    /// The series with this metric and scope (first match, any label).
    pub fn get(&self, metric: &str, scope: &str) -> Option<&Series> {
        self.series
            .iter()
            .find(|s| s.spec.key.metric == metric && s.spec.key.scope == scope)
    }

    /// The series with this metric, scope and block label.
    pub fn get_labelled(&self, metric: &str, scope: &str, label: &str) -> Option<&Series> {
        self.series.iter().find(|s| {
            s.spec.key.metric == metric
                && s.spec.key.scope == scope
                && s.spec.key.label.as_deref() == Some(label)
        })
    }

    /// Distinct block labels in order of first appearance.
    pub fn labels(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for s in &self.series {
            if let Some(l) = &s.spec.key.label
                && !out.contains(l)
            {
                out.push(l.clone());
            }
        }
        out
    }

    pub fn sample_count(&self) -> usize {
        self.series.iter().map(|s| s.samples.len()).sum()
    }
}

impl Sink for Dataset {
    fn series(&mut self, spec: &SeriesSpec) -> SeriesId {
        if let Some(&id) = self.index.get(&spec.key) {
            return id;
        }
        let id = self.series.len();
        self.index.insert(spec.key.clone(), id);
        self.series.push(Series {
            spec: spec.clone(),
            samples: Vec::new(),
        });
        id
    }

    fn sample(&mut self, id: SeriesId, value: f64) {
        self.series[id].samples.push(value);
    }

    fn meta(&mut self, key: &str, value: String) {
        self.meta.insert(key.to_string(), value);
    }

    fn meta_str(&mut self, key: &str, value: &str) {
        set_meta(&mut self.meta, key, value);
    }

    fn warning(&mut self, warning: Warning) {
        self.warnings.push(warning);
    }

    fn extra(&mut self, key: &str, value: serde_json::Value) {
        self.extra.insert(key.to_string(), value);
    }

    fn metric_name(&self, id: SeriesId) -> Option<&str> {
        self.series.get(id).map(|s| s.spec.key.metric.as_str())
    }

    fn is_nonnegative(&self, id: SeriesId) -> Option<bool> {
        self.series.get(id).map(|s| s.spec.unit.is_nonnegative())
    }

    fn keeps_names_and_units(&self) -> bool {
        true
    }
}
