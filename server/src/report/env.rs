//! How the environments of base and head differ besides the samples: build facts, kernel
//! config lines and machines.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use store::BuildInfo;

/// A difference between the environments of base and head other than the samples.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct EnvDiff {
    /// `commit`, `kernel_version`, `config`, `cmdline`, `machine`, or `CONFIG_FOO` for a
    /// config line that differs.
    pub field: String,
    pub base: String,
    pub head: String,
}

impl EnvDiff {
    /// Whether this difference is more than "a different build" (a different machine or boot
    /// command line makes the comparison less clean).
    pub fn is_environmental(&self) -> bool {
        matches!(self.field.as_str(), "machine" | "cmdline")
    }
}

/// How base and head differ: build facts, config lines, machines.
pub fn env_diff(base: &BuildInfo, head: &BuildInfo, bm: &[String], hm: &[String]) -> Vec<EnvDiff> {
    let mut out = Vec::new();
    let show = |v: &Option<String>| v.clone().unwrap_or_else(|| "(not recorded)".into());
    for (field, b, h) in [
        ("commit", &base.commit, &head.commit),
        ("kernel_version", &base.kernel_version, &head.kernel_version),
        ("cmdline", &base.cmdline, &head.cmdline),
    ] {
        if b != h {
            out.push(EnvDiff {
                field: field.into(),
                base: show(b),
                head: show(h),
            });
        }
    }
    match (&base.config, &head.config) {
        (Some(b), Some(h)) if b != h => {
            let parse = |c: &str| -> BTreeMap<String, String> {
                c.lines()
                    .filter_map(|l| {
                        let l = l.trim();
                        if let Some(rest) = l.strip_prefix("# ")
                            && let Some(name) = rest.strip_suffix(" is not set")
                        {
                            return Some((name.to_string(), "n".to_string()));
                        }
                        l.split_once('=')
                            .map(|(k, v)| (k.to_string(), v.to_string()))
                    })
                    .filter(|(k, _)| k.starts_with("CONFIG_"))
                    .collect()
            };
            let (pb, ph) = (parse(b), parse(h));
            let names: BTreeSet<&String> = pb.keys().chain(ph.keys()).collect();
            for n in names {
                let (vb, vh) = (pb.get(n), ph.get(n));
                if vb != vh {
                    out.push(EnvDiff {
                        field: n.clone(),
                        base: vb.cloned().unwrap_or_else(|| "(unset)".into()),
                        head: vh.cloned().unwrap_or_else(|| "(unset)".into()),
                    });
                }
            }
        }
        (b, h) if b.is_some() != h.is_some() => out.push(EnvDiff {
            field: "config".into(),
            base: if b.is_some() {
                "recorded"
            } else {
                "(not recorded)"
            }
            .into(),
            head: if h.is_some() {
                "recorded"
            } else {
                "(not recorded)"
            }
            .into(),
        }),
        _ => {}
    }
    if bm != hm {
        out.push(EnvDiff {
            field: "machine".into(),
            base: bm.join(", "),
            head: hm.join(", "),
        });
    }
    out
}
