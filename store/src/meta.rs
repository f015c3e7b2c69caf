//! What an import is given (build, machine, run metadata, input files) and what it answers,
//! with the checks and hashes derived from them.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sha2::{Digest, Sha256};

use crate::Error;
use ingest::model::Warning;

/// The kernel under test, as given on import.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BuildMeta {
    pub label: String,
    pub commit: Option<String>,
    pub kernel_version: Option<String>,
    pub config: Option<String>,
    pub cmdline: Option<String>,
}

/// Everything about a run except its files.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RunMeta {
    pub build: BuildMeta,
    pub machine: String,
    pub machine_facts: BTreeMap<String, String>,
    pub benchmark: String,
    pub params: BTreeMap<String, String>,
    /// The upload token that sent it, if any.
    pub token_id: Option<i64>,
    /// Keep only the series of this labelled block of the input (`original`, `apply patch`,
    /// `BEFORE`...), stored without the label: one file holding before and after results
    /// is imported as two runs of two builds. An empty string selects the unlabelled series.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<String>,
}

/// Where an input file's bytes come from.
#[derive(Debug, Clone)]
pub enum Source {
    Path(PathBuf),
    Bytes(Arc<[u8]>),
}

/// One input file of a run.
#[derive(Debug, Clone)]
pub struct InputFile {
    /// The name stored with the artifact (and that parsers see, e.g. `function3`).
    pub name: String,
    pub source: Source,
    /// A forced format; `None` sniffs the content.
    pub format: Option<String>,
}

impl InputFile {
    pub fn path(path: impl Into<PathBuf>, format: Option<String>) -> Self {
        let path = path.into();
        InputFile {
            // Shown on pages and in listings: bidirectional controls appear escaped.
            name: escape_bidi(&path.display().to_string()),
            source: Source::Path(path),
            format,
        }
    }

    pub fn bytes(
        name: impl Into<String>,
        bytes: impl Into<Arc<[u8]>>,
        format: Option<String>,
    ) -> Self {
        InputFile {
            name: name.into(),
            source: Source::Bytes(bytes.into()),
            format,
        }
    }

    pub(crate) fn open(&self) -> Result<Box<dyn Read + Send>, Error> {
        match &self.source {
            Source::Path(p) => Ok(Box::new(std::fs::File::open(p).map_err(|source| {
                Error::Io {
                    path: p.clone(),
                    source,
                }
            })?)),
            Source::Bytes(b) => Ok(Box::new(std::io::Cursor::new(b.clone()))),
        }
    }

    pub(crate) fn display_path(&self) -> PathBuf {
        PathBuf::from(&self.name)
    }
}

/// What an import did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ImportOutcome {
    /// The runs created (or found, when `created` is false), one per parameter combination.
    pub run_ids: Vec<i64>,
    /// False when the same content with the same metadata was already stored.
    pub created: bool,
    pub series: u64,
    pub samples: u64,
    /// Warnings per file name.
    pub warnings: Vec<(String, Warning)>,
    pub warning_count: u64,
    /// The format of each file, in order.
    pub formats: Vec<(String, String)>,
    /// (run id, metric) of every whole-run `all` series the import stored, as the import saw
    /// them: the history keys the runs add to, without reading the runs back. `None` when
    /// nothing was stored (`created` is false).
    #[serde(skip)]
    pub history_metrics: Option<Vec<(i64, String)>>,
}

/// Canonical `k=v&k=v` form of parameters (sorted by key).
pub fn params_key(params: &BTreeMap<String, String>) -> String {
    params
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

pub(crate) fn validate_meta(meta: &RunMeta) -> Result<(), Error> {
    let check = |what: &str, v: &str| {
        if v.trim().is_empty() {
            Err(Error::Invalid(format!("{what} must not be empty")))
        } else if v.len() > 256 {
            Err(Error::Invalid(format!("{what} is longer than 256 bytes")))
        } else if v.chars().any(|c| c.is_control()) {
            Err(Error::Invalid(format!(
                "{what} must not contain control characters"
            )))
        } else if let Some((at, c)) = find_bidi(v) {
            Err(Error::Invalid(format!(
                "{what} must not contain bidirectional control characters (U+{:04X} at byte {at}): they make text display in another order than it is stored",
                c as u32
            )))
        } else {
            Ok(())
        }
    };
    check("build label", &meta.build.label)?;
    check("machine name", &meta.machine)?;
    check("benchmark name", &meta.benchmark)?;
    for (what, v) in [
        ("commit", &meta.build.commit),
        ("kernel version", &meta.build.kernel_version),
        ("block", &meta.block),
    ] {
        if let Some((at, c)) = v.as_deref().and_then(find_bidi) {
            return Err(Error::Invalid(format!(
                "{what} must not contain bidirectional control characters (U+{:04X} at byte {at})",
                c as u32
            )));
        }
    }
    for (k, v) in meta.params.iter().chain(meta.machine_facts.iter()) {
        check("parameter name", k)?;
        if let Some((at, c)) = find_bidi(v) {
            return Err(Error::Invalid(format!(
                "value of {k} must not contain bidirectional control characters (U+{:04X} at byte {at})",
                c as u32
            )));
        }
        if v.len() > 4096 {
            return Err(Error::Invalid(format!(
                "value of {k} is longer than 4096 bytes"
            )));
        }
    }
    Ok(())
}

/// Refuses text PostgreSQL cannot store: its text holds no NUL character (SQLite's does), so an
/// import naming one is invalid there rather than a database error. Names are checked by
/// [`validate_meta`] already (NUL is a control character).
pub(crate) fn refuse_nul(meta: &RunMeta, files: &[InputFile]) -> Result<(), Error> {
    let b = &meta.build;
    let mut texts: Vec<(String, &str)> = [
        ("commit", &b.commit),
        ("kernel version", &b.kernel_version),
        ("config", &b.config),
        ("boot command line", &b.cmdline),
        ("block", &meta.block),
    ]
    .into_iter()
    .filter_map(|(what, v)| Some((what.to_string(), v.as_deref()?)))
    .collect();
    for (k, v) in meta.params.iter().chain(&meta.machine_facts) {
        texts.push((format!("value of {k}"), v));
    }
    for f in files {
        texts.push(("file name".into(), &f.name));
    }
    match texts.into_iter().find(|(_, v)| v.contains('\0')) {
        Some((what, _)) => Err(Error::Invalid(format!(
            "{what} must not contain NUL characters (PostgreSQL cannot store them)"
        ))),
        None => Ok(()),
    }
}

/// Whether `c` is a bidirectional embedding, override or isolate control (U+202A-U+202E,
/// U+2066-U+2069): text holding one displays in another order than it is stored.
pub fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202A}'..='\u{202E}' | '\u{2066}'..='\u{2069}')
}

/// The first bidirectional control character of `s` and its byte offset.
pub fn find_bidi(s: &str) -> Option<(usize, char)> {
    s.char_indices().find(|&(_, c)| is_bidi_control(c))
}

/// `s` with every bidirectional control character written as `\u{202E}`, for display.
pub fn escape_bidi(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if is_bidi_control(c) {
            out.push_str(&format!("\\u{{{:04X}}}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// An import's identity: its metadata and its files' formats and artifacts, hashed, after
/// [`IMPORT_KEY_PREFIX`] hex digits of its largest artifact id. Artifact ids are
/// content-addressed (one id per sha256), so ids stand for content here. The prefix is for the
/// indexes of `runs.import_hash` and `runs.content_hash`: a new file's artifact id is the
/// highest yet, so an import with a new file puts its entries at the end of both indexes
/// instead of on a random page each (about a tenth more small uploads a second; see
/// `bench/README.md`). Runs stored before the prefix keep the bare hash,
/// [`legacy_import_hash`]; lookups ask for both.
pub(crate) fn import_hash(meta: &RunMeta, files: &[InputFile], artifacts: &[i64]) -> String {
    let last = artifacts.iter().copied().max().unwrap_or(0);
    format!("{last:016x}{}", bare_import_hash(meta, files, artifacts))
}

/// Hex digits before the hash in an import's key (see [`import_hash`]).
pub(crate) const IMPORT_KEY_PREFIX: usize = 16;

/// The form of `import_hash` stored for runs imported before the prefix (see [`import_hash`]).
pub(crate) fn legacy_import_hash(import_hash: &str) -> &str {
    import_hash.get(IMPORT_KEY_PREFIX..).unwrap_or(import_hash)
}

/// A run's content key: its import's prefix, then the hash of its import and parameters key.
pub(crate) fn content_hash(import_hash: &str, params_key: &str) -> String {
    let prefix = import_hash.get(..IMPORT_KEY_PREFIX).unwrap_or("");
    let content = format!("{import_hash}\0{params_key}");
    format!(
        "{prefix}{}",
        hex::encode(Sha256::digest(content.as_bytes()))
    )
}

fn bare_import_hash(meta: &RunMeta, files: &[InputFile], artifacts: &[i64]) -> String {
    let mut h = Sha256::new();
    let meta_json = serde_json::to_string(&(
        &meta.build,
        &meta.machine,
        &meta.machine_facts,
        &meta.benchmark,
        &meta.params,
        &meta.block,
    ))
    .unwrap_or_default();
    h.update(meta_json.as_bytes());
    for (f, a) in files.iter().zip(artifacts) {
        h.update(b"\0");
        h.update(f.format.as_deref().unwrap_or("").as_bytes());
        h.update(b"\0");
        h.update(a.to_le_bytes());
    }
    hex::encode(h.finalize())
}

/// A file name safe to write under an output directory: the last path component, with
/// anything odd replaced.
pub fn safe_file_name(name: &str) -> String {
    let base = Path::new(name)
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let cleaned: String = base
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '.' | '_' | '-' | '+') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if cleaned.is_empty() || cleaned.chars().all(|c| c == '.') {
        "artifact".into()
    } else {
        cleaned
    }
}
