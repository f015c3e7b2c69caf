//! Tables as JSON in the shape of serialized `Series`, written as they are read: a large
//! input's samples are never gathered into one vector.

use serde::ser::{SerializeMap, SerializeSeq};

use super::{SeriesTable, SeriesView};

impl serde::Serialize for SeriesView<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // The shape of a serialized `Series`: its key flattened, unit, direction, samples.
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("metric", self.metric)?;
        m.serialize_entry("scope", self.scope)?;
        if let Some(l) = self.label {
            m.serialize_entry("label", l)?;
        }
        if !self.params.is_empty() {
            m.serialize_entry("params", self.params)?;
        }
        if let Some(st) = self.statistic {
            m.serialize_entry("statistic", st)?;
        }
        m.serialize_entry("unit", self.unit.as_str())?;
        m.serialize_entry("direction", &self.direction)?;
        m.serialize_entry("samples", &Samples(self))?;
        m.end()
    }
}

struct Samples<'a, 'b>(&'a SeriesView<'b>);

impl serde::Serialize for Samples<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error;
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        let mut failed = None;
        self.0
            .each_chunk(&mut |xs| {
                for v in xs {
                    if failed.is_none() {
                        failed = seq.serialize_element(v).err();
                    }
                }
            })
            .map_err(S::Error::custom)?;
        if let Some(e) = failed {
            return Err(e);
        }
        seq.end()
    }
}

/// All series of a table as a JSON array, written one series at a time.
pub struct AllSeries<'a>(pub &'a SeriesTable);

impl serde::Serialize for AllSeries<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for v in self.0.iter() {
            seq.serialize_element(&v)?;
        }
        seq.end()
    }
}
