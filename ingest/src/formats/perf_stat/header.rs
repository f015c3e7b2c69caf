//! What a block's header (`Performance counter stats for 'hackbench 20 thread 20000' (10
//! runs):`) gives after its fixed words: the count of runs, the command or the target. A file
//! of `--repeat` summaries repeats a few headers, one per block: each is read once and its
//! reading remembered with its text.

use super::summary_lines::runs;
use crate::formats::recent::Recent;
use crate::intern::Interner;
use crate::lines::trim;

/// The reading of a header's text, as places in that text (so that the same text read again
/// gives the same slices of it).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(super) struct Header {
    pub runs: Option<u32>,
    /// `'make'`: the command, unquoted.
    pub command: Option<(u32, u32)>,
    /// The command's id among the file's commands.
    pub command_id: Option<u32>,
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
    /// The reading of `text`, the rest of a header line after its fixed words; a command is
    /// given its id in `commands`.
    pub fn read(&mut self, text: &str, commands: &mut Interner) -> Header {
        if let Some(h) = self.recent.find(text, |_| true) {
            return h;
        }
        let mut h = read(text);
        h.command_id = Header::part(text, h.command).map(|c| commands.id(c));
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
        command_id: None,
        target,
    }
}
