//! The store's [`Sink`]: parser events forwarded in batches over a bounded channel from the
//! parsing thread to the importing transaction.

use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use ingest::model::{FastMap, SeriesId, SeriesKey, SeriesSpec, Sink, Warning};
use tokio::sync::mpsc;

/// Samples per channel message.
pub(crate) const BATCH: usize = 4096;

pub(crate) enum Msg {
    /// Shared with the sink's index, so that a declared series' key is copied once.
    Series(SeriesId, Arc<SeriesSpec>),
    Samples(Vec<(SeriesId, f64)>),
    Meta(String, String),
    Warning(Warning),
    Extra(String, serde_json::Value),
}

/// Messages per channel send: a trace_stat profile declares a series per row, and one
/// thread hand-off per series would cost more than its INSERT.
const MSGS_PER_SEND: usize = 512;

/// A declared series, looked up by its key.
struct Declared(Arc<SeriesSpec>);

impl std::hash::Hash for Declared {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.key.hash(state);
    }
}

impl PartialEq for Declared {
    fn eq(&self, other: &Self) -> bool {
        self.0.key == other.0.key
    }
}

impl Eq for Declared {}

impl std::borrow::Borrow<SeriesKey> for Declared {
    fn borrow(&self) -> &SeriesKey {
        &self.0.key
    }
}

/// A sink that forwards everything to the importing transaction in batches.
pub(crate) struct ChannelSink {
    tx: mpsc::Sender<Vec<Msg>>,
    index: FastMap<Declared, SeriesId>,
    buf: Vec<(SeriesId, f64)>,
    out: Vec<Msg>,
    closed: bool,
}

impl ChannelSink {
    pub(crate) fn new(tx: mpsc::Sender<Vec<Msg>>) -> Self {
        ChannelSink {
            tx,
            index: FastMap::default(),
            buf: Vec::with_capacity(BATCH),
            out: Vec::new(),
            closed: false,
        }
    }
}

impl ChannelSink {
    fn send(&mut self, msg: Msg) {
        self.out.push(msg);
        if self.out.len() >= MSGS_PER_SEND {
            self.ship();
        }
    }

    /// Hands the queued messages to the transaction.
    fn ship(&mut self) {
        if self.out.is_empty() {
            return;
        }
        let batch = std::mem::take(&mut self.out);
        if !self.closed && self.tx.blocking_send(batch).is_err() {
            // The receiver gave up (an error on the database side); parsing continues to its
            // end cheaply and the import reports the database error.
            self.closed = true;
        }
    }

    /// Queues the buffered samples; ships when a whole batch of samples is waiting.
    fn flush(&mut self) {
        if !self.buf.is_empty() {
            let full = self.buf.len() >= BATCH;
            let batch = std::mem::replace(&mut self.buf, Vec::with_capacity(BATCH));
            self.send(Msg::Samples(batch));
            if full {
                self.ship();
            }
        }
    }

    /// Everything, at the end of the input.
    pub(crate) fn finish(&mut self) {
        self.flush();
        self.ship();
    }
}

impl Sink for ChannelSink {
    fn series(&mut self, spec: &SeriesSpec) -> SeriesId {
        if let Some(&id) = self.index.get(&spec.key) {
            return id;
        }
        let id = self.index.len();
        let spec = Arc::new(spec.clone());
        self.index.insert(Declared(spec.clone()), id);
        // Queued after every sample buffered so far: those refer to series already declared,
        // so the samples need no flush here (a flush per series would ship one-sample batches).
        self.send(Msg::Series(id, spec));
        id
    }

    fn sample(&mut self, id: SeriesId, value: f64) {
        self.buf.push((id, value));
        if self.buf.len() >= BATCH {
            self.flush();
        }
    }

    fn meta(&mut self, key: &str, value: String) {
        self.flush();
        self.send(Msg::Meta(key.to_string(), value));
    }

    fn warning(&mut self, warning: Warning) {
        self.flush();
        self.send(Msg::Warning(warning));
    }

    fn extra(&mut self, key: &str, value: serde_json::Value) {
        self.flush();
        self.send(Msg::Extra(key.to_string(), value));
    }
}

/// Counts bytes read, for progress bars.
pub(crate) struct Counting<R> {
    pub(crate) inner: R,
    pub(crate) counter: Option<Arc<AtomicU64>>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(c) = &self.counter {
            c.fetch_add(n as u64, Ordering::Relaxed);
        }
        Ok(n)
    }
}
