//! What a block's header (`Performance counter stats for 'hackbench 20 thread 20000' (10
//! runs):`) gives after its fixed words: the count of runs, the command or the target. A file
//! of `--repeat` summaries repeats a few headers, one per block: each is read once and its
//! reading remembered with its text.

use super::summary_lines::runs;
use crate::formats::recent::Recent;
use crate::lines::trim;

/// The reading of a header's text, as places in that text (so that the same text read again
/// gives the same slices of it).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(super) struct Header {
    pub runs: Option<u32>,
    /// `'make'`: the command, unquoted.
    pub command: Option<(u32, u32)>,
    /// `'system wide'`, `CPU(s) 0-3`, `process id '42'`: a target other than a command.
    pub target: Option<(u32, u32)>,
}

impl Header {
    /// The part of `text` (the text read) a place gives.
    pub fn part(text: &str, at: Option<(u32, u32)>) -> Option<&str> {
        at.map(|(a, b)| &text[a as usize..b as usize])
    }
}

/// Headers read lately, with their readings.
#[derive(Default)]
pub(super) struct Headers {
    pub(super) recent: Recent<Header>,
}

impl Headers {
    /// The reading of `text`, the rest of a header line after its fixed words.
    pub fn read(&mut self, text: &str) -> Header {
        if let Some(h) = self.recent.find(text, |_| true) {
            return h;
        }
        let h = read(text);
        self.recent.remember(text, h);
        h
    }
}

fn read(text: &str) -> Header {
    let runs_match = runs(text);
    let runs = runs_match.and_then(|(_, n)| n.parse::<u32>().ok());
    let target = match runs_match {
        Some((start, _)) => &text[..start],
        None => text,
    };
    let target = trim(trim(target).trim_end_matches(':'));
    let quoted = target
        .strip_prefix('\'')
        .and_then(|t| t.strip_suffix('\''))
        .filter(|t| !t.is_empty());
    let command = quoted.filter(|t| *t != "system wide");
    let place = |s: &str| {
        let a = s.as_ptr() as usize - text.as_ptr() as usize;
        (a as u32, (a + s.len()) as u32)
    };
    let target = (command.is_none() && !target.is_empty()).then(|| place(quoted.unwrap_or(target)));
    Header {
        runs,
        command: command.map(place),
        target,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Parser, strip_box};
    use crate::lines::strip_line;
    use crate::model::Ctx;

    /// Each line of `text` through the parser as the format's parse gives it (none read ahead),
    /// with headers remembered or each read afresh: the dataset and what each line returned.
    fn read_lines(text: &str, memo: bool) -> (crate::Dataset, Vec<String>) {
        let mut ds = crate::Dataset::new();
        let mut results = Vec::new();
        let mut ctx = Ctx::new(&mut ds, None);
        let mut p = Parser::default();
        p.headers.recent.off = !memo;
        for (i, raw) in text.lines().enumerate() {
            ctx.line = i as u64 + 1;
            let r = p.line(strip_box(strip_line(raw)), None, &mut ctx);
            results.push(format!("{r:?}"));
        }
        results.push(format!("{:?}", p.finish(&mut ctx)));
        drop(ctx);
        (ds, results)
    }

    /// Headers of every kind (runs or none, a command, a target, quoted or not, spaces that
    /// are not ASCII), each coming back after others and after itself: remembered, they give
    /// what reading them again gives. So do the fixtures, each read three times over.
    #[test]
    fn remembered_headers_read_as_read_again() {
        let headers = [
            " Performance counter stats for 'hackbench 20 thread 20000' (10 runs):",
            " Performance counter stats for 'hackbench 20 thread 20000' (5 runs):",
            " Performance counter stats for 'make -j8':",
            " Performance counter stats for 'system wide' (3 runs):",
            " Performance counter stats for 'system wide':",
            " Performance counter stats for 'CPU(s) 0-3' (2 runs):",
            " Performance counter stats for CPU(s) 0-3:",
            " Performance counter stats for process id '42':",
            " Performance counter stats for '' (4 runs):",
            " Performance counter stats for 'ls'\u{a0}(7\u{2003}runs):",
            " Performance counter stats for 'ls' (x runs):",
            " Performance counter stats for 'ls' (99999999999 runs):",
            "Performance counter stats for:",
            "Performance counter stats for",
        ];
        let elapsed = "      24.536050899 seconds time elapsed          ( +-  0.24% )";
        let mut text = String::new();
        for round in 0..3 {
            for (i, h) in headers.iter().enumerate() {
                for h in [h, &headers[(i * 5 + round) % headers.len()]] {
                    text.push_str(h);
                    text.push('\n');
                    text.push_str(elapsed);
                    text.push_str("\n\n");
                }
            }
        }
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/perf_stat");
        let mut texts = vec![text];
        for e in std::fs::read_dir(dir).expect("the fixtures") {
            let path = e.expect("an entry").path();
            if path.extension().is_some_and(|x| x == "txt") {
                texts.push(std::fs::read_to_string(&path).expect("a fixture").repeat(3));
            }
        }
        for text in &texts {
            let with = read_lines(text, true);
            assert_eq!(
                with,
                read_lines(text, false),
                "{}",
                &text[..text.len().min(200)]
            );
            assert!(
                with.0.sample_count() > 0,
                "{}",
                &text[..text.len().min(200)]
            );
        }
    }
}
