//! Samples moved to a temporary file while a large input is parsed, so that memory stays flat
//! whatever the input's size.
//!
//! The thread appending a table's samples ([`super::more`]) writes out every vector long
//! enough to be worth a segment once the vectors hold a quarter of [`LIMIT`] or their
//! capacity passes it. A series' samples are then its segments, in the order written,
//! followed by what its vector holds. The file is anonymous: it goes when the table does.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;

/// Capacity of the vectors, in samples, at which they are written out: 8 MiB. They are most
/// often written out at a quarter of it held, into room kept from the write before: the
/// smaller the room, the fewer fresh pages the samples fill (a page fault every 4 KiB, about
/// a tenth of an input's parse when its samples took 24 MiB), and a write costs the same
/// whatever the size.
pub(super) const LIMIT: usize = 1 << 20;
/// Shortest vector written out: a segment costs 16 bytes of memory, so a shorter vector
/// would keep most of what writing it frees.
const MIN_SEGMENT: usize = 64;
/// Samples read from the file at a time.
const CHUNK: usize = 1 << 16;

/// `len` samples from sample `at` of the file.
#[derive(Debug, Clone, Copy)]
pub(super) struct Segment {
    at: u64,
    len: u64,
}

/// The samples `segments` hold.
fn samples_in(segments: &[Segment]) -> u64 {
    segments.iter().map(|s| s.len).sum()
}

#[derive(Debug)]
pub(super) struct Spill {
    file: File,
    /// Samples written so far.
    written: u64,
    /// Each vector's segments, in order.
    segments: Vec<Vec<Segment>>,
}

impl Spill {
    pub(super) fn new() -> io::Result<Self> {
        Ok(Spill {
            file: tempfile::tempfile()?,
            written: 0,
            segments: Vec::new(),
        })
    }

    /// Writes out and empties each vector of at least [`MIN_SEGMENT`] samples; the capacity
    /// left in the vectors. The emptied vectors keep their room, up to `keep` samples of it in
    /// all (the samples that follow fill pages already in memory instead of fresh ones, a
    /// page fault every 4 KiB); a vector left empty since the last write gives its room back.
    /// On an error the vectors are left as they were, and the file must not be written again
    /// (its end is unknown).
    pub(super) fn write(&mut self, vecs: &mut [Vec<f64>], keep: usize) -> io::Result<usize> {
        let mut out = BufWriter::with_capacity(1 << 20, &self.file);
        let mut at = self.written;
        let mut new = Vec::new();
        for (n, v) in vecs.iter().enumerate() {
            if v.len() >= MIN_SEGMENT {
                out.write_all(bytemuck::cast_slice(v))?;
                new.push((
                    n,
                    Segment {
                        at,
                        len: v.len() as u64,
                    },
                ));
                at += v.len() as u64;
            }
        }
        out.flush()?;
        drop(out);
        self.written = at;
        if self.segments.len() < vecs.len() {
            self.segments.resize_with(vecs.len(), Vec::new);
        }
        for v in vecs.iter_mut().filter(|v| v.is_empty()) {
            // Emptied at a write before and unused since (a series that ended): given back.
            *v = Vec::new();
        }
        let mut kept = 0;
        for (n, s) in new {
            self.segments[n].push(s);
            let v = &mut vecs[n];
            if kept + v.capacity() <= keep {
                kept += v.capacity();
                v.clear();
            } else {
                *v = Vec::new();
            }
        }
        Ok(vecs.iter().map(Vec::capacity).sum())
    }

    /// The segments of vector `n`.
    pub(super) fn segments(&self, n: u32) -> &[Segment] {
        self.segments.get(n as usize).map_or(&[], Vec::as_slice)
    }

    /// Calls `f` with the samples of `segments`, in order, a chunk at a time.
    pub(super) fn read(&self, segments: &[Segment], f: &mut dyn FnMut(&[f64])) -> io::Result<()> {
        // Sized to what is read: a table of many short series reads each one at a time.
        let mut buf = vec![0f64; samples_in(segments).min(CHUNK as u64) as usize];
        for s in segments {
            let mut done = 0;
            while done < s.len {
                let take = (s.len - done).min(CHUNK as u64) as usize;
                let chunk = &mut buf[..take];
                self.file
                    .read_exact_at(bytemuck::cast_slice_mut(chunk), (s.at + done) * 8)?;
                f(chunk);
                done += take as u64;
            }
        }
        Ok(())
    }

    /// Pushes onto `out` the samples at `places` (ascending, each below the samples
    /// `segments` hold) of `segments`, one read for each run of consecutive places within a
    /// segment: for a few places spread over many samples, less than reading them all.
    fn read_at(
        &self,
        segments: &[Segment],
        places: &[usize],
        out: &mut Vec<f64>,
    ) -> io::Result<()> {
        let mut places = places.iter().map(|&p| p as u64).peekable();
        let mut start = 0;
        for s in segments {
            let end = start + s.len;
            while let Some(first) = places.next_if(|&p| p < end) {
                let mut last = first;
                while let Some(p) = places.next_if(|&p| p == last + 1 && p < end) {
                    last = p;
                }
                let from = out.len();
                out.resize(from + (last - first + 1) as usize, 0.0);
                let run = bytemuck::cast_slice_mut(&mut out[from..]);
                self.file.read_exact_at(run, (s.at + first - start) * 8)?;
            }
            start = end;
        }
        Ok(())
    }
}

/// The samples of one series after its first: segments written out, then what stayed in memory.
#[derive(Debug, Clone, Copy, Default)]
pub struct Stored<'a> {
    spilled: Option<(&'a Spill, &'a [Segment])>,
    held: &'a [f64],
}

impl<'a> Stored<'a> {
    pub(super) fn new(spill: Option<&'a Spill>, n: u32, held: &'a [f64]) -> Self {
        let spilled = spill
            .map(|s| (s, s.segments(n)))
            .filter(|(_, segs)| !segs.is_empty());
        Stored { spilled, held }
    }

    pub(super) fn len(&self) -> usize {
        let out = self.spilled.map_or(0, |(_, s)| samples_in(s));
        out as usize + self.held.len()
    }

    /// All of them, when none was written out.
    pub(super) fn in_memory(&self) -> Option<&'a [f64]> {
        self.spilled.is_none().then_some(self.held)
    }

    /// Pushes onto `out` those at `places`, ascending and each below [`Stored::len`].
    pub(super) fn values_at(&self, places: &[usize], out: &mut Vec<f64>) -> io::Result<()> {
        let written = self.spilled.map_or(0, |(_, s)| samples_in(s) as usize);
        let split = places.partition_point(|&p| p < written);
        if let Some((spill, segments)) = self.spilled {
            spill.read_at(segments, &places[..split], out)?;
        }
        out.extend(places[split..].iter().map(|&p| self.held[p - written]));
        Ok(())
    }

    /// Calls `f` with them in order, a chunk at a time.
    pub(super) fn each_chunk(&self, f: &mut dyn FnMut(&[f64])) -> io::Result<()> {
        if let Some((spill, segments)) = self.spilled {
            spill.read(segments, f)?;
        }
        if !self.held.is_empty() {
            f(self.held);
        }
        Ok(())
    }
}
