//! The store's [`Sink`]: parser events forwarded in batches over a bounded channel from the
//! parsing thread to the importing transaction. Names are interned here, on the parsing thread:
//! a series travels as a few ids, and each name once, because a per-CPU profile declares
//! millions of series over a few thousand names.

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use ingest::model::{Direction, FastMap, SeriesId, SeriesSpec, Sink, Unit, Warning};
use tokio::sync::mpsc;

/// Samples per channel message.
pub(crate) const BATCH: usize = 4096;

/// No name (no label, no statistic, no parameters).
pub(crate) const NONE: u32 = u32::MAX;

/// A declared series: ids of names sent before it ([`Msg::Name`], [`Msg::Params`]).
#[derive(Clone, Copy)]
pub(crate) struct Decl {
    pub(crate) metric: u32,
    pub(crate) scope: u32,
    pub(crate) label: u32,
    pub(crate) statistic: u32,
    /// The series' own parameters ([`Msg::Params`]), NONE when it has none.
    pub(crate) params: u32,
    /// The names of its unit and direction.
    pub(crate) unit: u32,
    pub(crate) direction: u32,
}

pub(crate) enum Msg {
    /// The name with this id (numbered from 0 in the file).
    Name(u32, Box<str>),
    /// The parameters with this id.
    Params(u32, BTreeMap<String, String>),
    Series(SeriesId, Decl),
    Samples(Vec<(SeriesId, f64)>),
    Meta(String, String),
    Warning(Warning),
    Extra(String, serde_json::Value),
}

/// Messages per channel send: a trace_stat profile declares a series per row, and one
/// thread hand-off per series would cost more than its INSERT.
const MSGS_PER_SEND: usize = 512;

/// The names sent so far in an import, kept from file to file: the 64 files of a per-CPU
/// profile share every function's names.
#[derive(Default)]
pub(crate) struct Interner {
    names: ingest::intern::Interner,
    params: FastMap<BTreeMap<String, String>, u32>,
}

/// A sink that forwards everything to the importing transaction in batches.
pub(crate) struct ChannelSink {
    to: Dest,
    interner: Interner,
    /// (metric, scope, label, statistic, params) -> series id.
    index: FastMap<[u32; 5], SeriesId>,
    /// The scope of the last series declared: rows of one table share it.
    last_scope: Option<u32>,
    /// Unit and direction names seen so far.
    units: Vec<(Unit, u32)>,
    directions: [u32; 3],
    /// Metric name of each series, for error messages: the parser's context keeps none when
    /// the sink does.
    metrics: Vec<u32>,
    buf: Vec<(SeriesId, f64)>,
    out: Vec<Msg>,
}

/// Where a [`ChannelSink`]'s batches go.
enum Dest {
    /// To the importing task; `closed` once it stopped listening.
    Channel {
        tx: mpsc::Sender<Vec<Msg>>,
        closed: bool,
    },
    /// Kept, for a file parsed on the importing task itself.
    Kept(Vec<Vec<Msg>>),
}

impl ChannelSink {
    /// A sink for one file; `interner` holds the names earlier files of the import sent.
    pub(crate) fn new(tx: mpsc::Sender<Vec<Msg>>, interner: Interner) -> Self {
        Self::to(Dest::Channel { tx, closed: false }, interner)
    }

    fn to(to: Dest, interner: Interner) -> Self {
        ChannelSink {
            to,
            interner,
            index: FastMap::default(),
            last_scope: None,
            units: Vec::new(),
            directions: [NONE; 3],
            metrics: Vec::new(),
            buf: Vec::with_capacity(BATCH),
            out: Vec::new(),
        }
    }

    /// The names, for the next file of the import.
    pub(crate) fn into_interner(self) -> Interner {
        self.interner
    }

    /// The id of `name`, sent ahead of the series that uses it when new.
    fn name(&mut self, name: &str) -> u32 {
        let known = self.interner.names.len();
        let id = self.interner.names.id(name);
        if id as usize == known {
            self.send(Msg::Name(id, name.into()));
        }
        id
    }

    fn opt(&mut self, name: Option<&str>) -> u32 {
        name.map_or(NONE, |n| self.name(n))
    }

    fn scope(&mut self, scope: &str) -> u32 {
        if let Some(id) = self.last_scope
            && self.interner.names.get(id) == scope
        {
            return id;
        }
        let id = self.name(scope);
        self.last_scope = Some(id);
        id
    }

    fn unit(&mut self, unit: &Unit) -> u32 {
        if let Some(&(_, id)) = self.units.iter().find(|(u, _)| u == unit) {
            return id;
        }
        let id = self.name(unit.as_str());
        self.units.push((unit.clone(), id));
        id
    }

    fn direction(&mut self, d: Direction) -> u32 {
        let i = match d {
            Direction::LowerIsBetter => 0,
            Direction::HigherIsBetter => 1,
            Direction::Neutral => 2,
        };
        if self.directions[i] == NONE {
            self.directions[i] = self.name(d.as_str());
        }
        self.directions[i]
    }

    fn params(&mut self, params: &BTreeMap<String, String>) -> u32 {
        if params.is_empty() {
            return NONE;
        }
        if let Some(&id) = self.interner.params.get(params) {
            return id;
        }
        let id = self.interner.params.len() as u32;
        self.interner.params.insert(params.clone(), id);
        self.send(Msg::Params(id, params.clone()));
        id
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
        match &mut self.to {
            Dest::Kept(kept) => kept.push(batch),
            Dest::Channel { tx, closed } => {
                if !*closed && tx.blocking_send(batch).is_err() {
                    // The receiver gave up (an error on the database side); parsing continues
                    // to its end cheaply and the import reports the database error.
                    *closed = true;
                }
            }
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

    /// [`ChannelSink::finish`] for a sink that keeps its batches: them, and the names.
    fn finish_kept(mut self) -> (Vec<Vec<Msg>>, Interner) {
        self.finish();
        let kept = match self.to {
            Dest::Kept(kept) => kept,
            Dest::Channel { .. } => Vec::new(),
        };
        (kept, self.interner)
    }
}

impl Sink for ChannelSink {
    fn series(&mut self, spec: &SeriesSpec) -> SeriesId {
        let k = &spec.key;
        let metric = self.name(&k.metric);
        let scope = self.scope(&k.scope);
        let label = self.opt(k.label.as_deref());
        let statistic = self.opt(k.statistic.as_deref());
        let params = self.params(&k.params);
        let key = [metric, scope, label, statistic, params];
        if let Some(&id) = self.index.get(&key) {
            return id;
        }
        let id = self.index.len();
        self.index.insert(key, id);
        self.metrics.push(metric);
        let decl = Decl {
            metric,
            scope,
            label,
            statistic,
            params,
            unit: self.unit(&spec.unit),
            direction: self.direction(spec.direction),
        };
        // Queued after every sample buffered so far: those refer to series already declared,
        // so the samples need no flush here (a flush per series would ship one-sample batches).
        self.send(Msg::Series(id, decl));
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

    fn metric_name(&self, id: SeriesId) -> Option<&str> {
        let m = *self.metrics.get(id)?;
        Some(self.interner.names.get(m))
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

/// The names of an import's series ([`Msg::Name`], [`Msg::Params`]) as the import reads them,
/// each resolved to its stored id on first use.
#[derive(Default)]
pub(crate) struct ImportNames {
    names: Vec<Box<str>>,
    /// Stored id by name id; 0 until resolved (stored ids are never 0).
    ids: Vec<u32>,
    /// Names noted once by [`ImportNames::first_note`].
    noted: Vec<bool>,
    params: Vec<BTreeMap<String, String>>,
}

impl ImportNames {
    pub(crate) fn add(&mut self, id: u32, name: Box<str>) {
        debug_assert_eq!(id as usize, self.names.len());
        self.names.push(name);
        self.ids.push(0);
        self.noted.push(false);
    }

    pub(crate) fn add_params(&mut self, id: u32, params: BTreeMap<String, String>) {
        debug_assert_eq!(id as usize, self.params.len());
        self.params.push(params);
    }

    /// The name `id`, None for NONE.
    pub(crate) fn get(&self, id: u32) -> Option<&str> {
        (id != NONE).then(|| &*self.names[id as usize])
    }

    /// The stored id of name `id` (0 for NONE), allocated in `names` on first use.
    pub(crate) fn stored(&mut self, id: u32, names: &mut crate::write::Names) -> u32 {
        if id == NONE {
            return 0;
        }
        let slot = &mut self.ids[id as usize];
        if *slot == 0 {
            *slot = names.id(&self.names[id as usize]);
        }
        *slot
    }

    /// True the first time it is asked about name `id` (not NONE).
    pub(crate) fn first_note(&mut self, id: u32) -> bool {
        !std::mem::replace(&mut self.noted[id as usize], true)
    }

    pub(crate) fn params(&self, id: u32) -> Option<&BTreeMap<String, String>> {
        (id != NONE).then(|| &self.params[id as usize])
    }
}

/// A file being parsed: its messages, and at the end its summary and the names, for the next
/// file.
pub(crate) struct Parsing {
    pub(crate) rx: mpsc::Receiver<Vec<Msg>>,
    pub(crate) task: ParseTask,
}

type Parsed = (Result<ingest::ParseSummary, ingest::Error>, Interner);

/// Where a file is parsed.
pub(crate) enum ParseTask {
    /// On a blocking thread.
    Thread(tokio::task::JoinHandle<Parsed>),
    /// Already, on the importing task ([`INLINE_MAX_BYTES`]).
    Done(Box<Parsed>),
}

impl ParseTask {
    /// The summary and names once the parse is over.
    pub(crate) async fn join(self) -> Result<Parsed, String> {
        match self {
            ParseTask::Thread(h) => h.await.map_err(|e| e.to_string()),
            ParseTask::Done(p) => Ok(*p),
        }
    }
}

/// Batches queued ahead of the import: enough for the parser of the next file to run while
/// the import files the samples of the one before.
const QUEUED_BATCHES: usize = 64;

/// Files held in memory up to this size are parsed on the importing task: a thread hand-off
/// costs more than parsing them (tens of microseconds), and the small uploads test rigs send
/// most are all such files. Their batches are kept and queued whole once the parse is done.
const INLINE_MAX_BYTES: usize = 32 << 10;

/// Starts parsing `file` with the names of the files before it.
pub(crate) fn spawn_parse(
    file: &crate::InputFile,
    interner: Interner,
    progress: Option<Arc<AtomicU64>>,
) -> Result<Parsing, crate::Error> {
    let name = file.display_path();
    let format = file.format.clone();
    // Not gzip: a small one may decompress to much more.
    if let crate::Source::Bytes(bytes) = &file.source
        && bytes.len() <= INLINE_MAX_BYTES
        && !ingest::is_gzip(bytes)
    {
        if let Some(p) = &progress {
            p.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        }
        let mut sink = ChannelSink::to(Dest::Kept(Vec::new()), interner);
        let r = ingest::parse_reader(&name, &bytes[..], format.as_deref(), &mut sink);
        let (kept, names) = sink.finish_kept();
        let (tx, rx) = mpsc::channel::<Vec<Msg>>(kept.len().max(1));
        for batch in kept {
            // Room for every batch was made above.
            let _ = tx.try_send(batch);
        }
        return Ok(Parsing {
            rx,
            task: ParseTask::Done(Box::new((r, names))),
        });
    }
    let (tx, rx) = mpsc::channel::<Vec<Msg>>(QUEUED_BATCHES);
    let reader = file.open()?;
    let task = tokio::task::spawn_blocking(move || {
        let mut sink = ChannelSink::new(tx, interner);
        let reader = Counting {
            inner: reader,
            counter: progress,
        };
        let r = ingest::parse_reader(&name, reader, format.as_deref(), &mut sink);
        sink.finish();
        (r, sink.into_interner())
    });
    Ok(Parsing {
        rx,
        task: ParseTask::Thread(task),
    })
}
