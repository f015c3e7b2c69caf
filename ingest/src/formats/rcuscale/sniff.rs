//! How sure the rcuscale parser is that a head is its own ([`super::RcuScale`]'s `sniff`).

use super::rows::parse_stat_row;
use super::split_prefix;
use crate::formats::head_holds;
use crate::lines::{strip_dmesg, strip_mail};

/// 95 for a line only rcuscale prints, 90 for one of its console lines opening a test, 60 for
/// any of its console lines, 50 for a statistics table beside the words rcuperf or rcuscale.
pub(super) fn sniff(head: &str) -> u32 {
    const SURE: [&str; 4] = [
        "writer-duration:",
        "grace-period duration:",
        "Total time taken by all kfree'ers",
        "Running 'sync/rcu' benchmark",
    ];
    const WORDS: [&str; 2] = ["rcuperf", "rcuscale"];
    let sure: Vec<&str> = SURE.into_iter().filter(|n| head_holds(head, n)).collect();
    let any_word = WORDS.into_iter().any(|n| head_holds(head, n));
    let mut score = 0;
    let mut rcuperf_words = false;
    let mut table_row = false;
    for raw in head.lines().take(2000) {
        let line = strip_dmesg(strip_mail(raw));
        if sure.iter().any(|n| line.contains(n)) {
            return 95;
        }
        if let Some((_, rest)) = split_prefix(line) {
            let rest = rest.trim_start();
            if rest.starts_with("---") || rest.starts_with("writer ") || rest.starts_with("start:")
            {
                return 90;
            }
            score = score.max(60);
        }
        if any_word && WORDS.iter().any(|n| line.contains(n)) {
            rcuperf_words = true;
        }
        if parse_stat_row(line).is_some() {
            table_row = true;
        }
    }
    if table_row && rcuperf_words {
        score = score.max(50);
    }
    score
}
