//! The samples of a table's series that have more than one: kept in place, or appended on a
//! thread of their own while a large input is parsed.
//!
//! Appending costs the parsing thread growing vectors (copies and fresh pages) on inputs of
//! millions of samples. With [`More::threaded`], the parsing thread writes `(vector, value)`
//! pairs into a batch and appends the first few full batches itself; a thread started then
//! takes the vectors and every later batch, in the order they were written, so every vector
//! ends up as it would in place. A smaller input never starts the thread, which would only
//! compete for the CPUs with the reading and the parsing.

use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

/// Pairs handed over at a time: 1 MiB.
const BATCH: usize = 1 << 16;
/// Full batches that may wait for the appending thread, which bounds the memory they hold.
const QUEUED: usize = 2;
/// Full batches appended here before the thread starts.
const HERE: usize = 4;

/// `(vector, value)`: a vector number equal to the count made so far makes that vector.
type Batch = Vec<(u32, f64)>;
/// The way to the appending thread, and the thread, which gives the vectors back.
type Appender = (SyncSender<Batch>, JoinHandle<Vec<Vec<f64>>>);

#[derive(Debug, Default)]
pub(super) struct More {
    vecs: Vec<Vec<f64>>,
    handed: Option<Handed>,
}

/// Vectors being built from batches: in `vecs` until the thread starts, then there until
/// [`More::finish`].
#[derive(Debug)]
struct Handed {
    /// Vectors made so far, here or there.
    made: usize,
    batch: Batch,
    /// Full batches appended here.
    here: usize,
    thread: Option<Appender>,
}

impl More {
    /// Appends elsewhere from now on, until [`More::finish`]; only while nothing is stored.
    pub(super) fn threaded(&mut self) {
        if self.vecs.is_empty() && self.handed.is_none() {
            self.handed = Some(Handed {
                made: 0,
                batch: Vec::with_capacity(BATCH),
                here: 0,
                thread: None,
            });
        }
    }

    /// How many vectors there are.
    pub(super) fn len(&self) -> usize {
        self.handed.as_ref().map_or(self.vecs.len(), |h| h.made)
    }

    /// A new vector holding `values`; its number.
    pub(super) fn make(&mut self, values: &[f64]) -> u32 {
        let n = self.len() as u32;
        match &mut self.handed {
            None => self.vecs.push(values.to_vec()),
            Some(h) => {
                h.made += 1;
                for &v in values {
                    h.pass(&mut self.vecs, n, v);
                }
            }
        }
        n
    }

    /// Appends `value` to vector `n`.
    #[inline]
    pub(super) fn push(&mut self, n: u32, value: f64) {
        match &mut self.handed {
            None => self.vecs[n as usize].push(value),
            Some(h) => h.pass(&mut self.vecs, n, value),
        }
    }

    /// Vector `n`, once [`More::finish`] has brought the vectors back.
    pub(super) fn get(&self, n: u32) -> &[f64] {
        assert!(
            self.handed.is_none(),
            "samples read while they are appended elsewhere: finish the table first"
        );
        &self.vecs[n as usize]
    }

    /// Waits for what was handed over and keeps the vectors here again.
    pub(super) fn finish(&mut self) {
        let Some(mut h) = self.handed.take() else {
            return;
        };
        let rest = std::mem::take(&mut h.batch);
        self.vecs = match h.thread.take() {
            None => append(std::mem::take(&mut self.vecs), rest),
            Some((tx, thread)) => {
                // The thread ends when the channel does, after the batches before this one. A
                // send fails only when the thread ended early, by a panic, which `join` passes on.
                let _ = tx.send(rest);
                drop(tx);
                thread
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e))
            }
        };
    }
}

impl Handed {
    #[inline]
    fn pass(&mut self, vecs: &mut Vec<Vec<f64>>, n: u32, value: f64) {
        self.batch.push((n, value));
        if self.batch.len() == BATCH {
            self.hand_over(vecs);
        }
    }

    /// A full batch: appended here while few came before, else sent to the thread, which
    /// the first one sent starts with the vectors made here.
    #[inline(never)]
    fn hand_over(&mut self, vecs: &mut Vec<Vec<f64>>) {
        if self.thread.is_none() && self.here < HERE {
            self.here += 1;
            *vecs = append(std::mem::take(vecs), self.batch.drain(..));
            return;
        }
        let full = std::mem::replace(&mut self.batch, Vec::with_capacity(BATCH));
        let (tx, _) = self.thread.get_or_insert_with(|| {
            let (tx, rx) = sync_channel::<Batch>(QUEUED);
            let start = std::mem::take(vecs);
            (tx, std::thread::spawn(move || receive(start, rx)))
        });
        // The thread only stops on a panic, which `finish` passes on.
        let _ = tx.send(full);
    }
}

fn receive(mut vecs: Vec<Vec<f64>>, rx: Receiver<Batch>) -> Vec<Vec<f64>> {
    for batch in rx {
        vecs = append(vecs, batch);
    }
    vecs
}

/// Applies a batch: a vector number one past the last makes that vector.
fn append(mut vecs: Vec<Vec<f64>>, batch: impl IntoIterator<Item = (u32, f64)>) -> Vec<Vec<f64>> {
    for (n, v) in batch {
        match vecs.get_mut(n as usize) {
            Some(vec) => vec.push(v),
            None => {
                debug_assert_eq!(n as usize, vecs.len());
                vecs.push(vec![v]);
            }
        }
    }
    vecs
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Vectors built in place and elsewhere from the same calls, over several batches.
    #[test]
    fn vectors_built_elsewhere_are_those_built_in_place() {
        for calls in [10, BATCH - 1, BATCH, 3 * BATCH + 17, (HERE + 3) * BATCH + 5] {
            let mut here = More::default();
            let mut there = More::default();
            there.threaded();
            let mut x: u64 = 88172645463325252;
            for i in 0..calls {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                let v = (x % 1000) as f64 + i as f64 * 1e-6;
                if here.len() == 0 || x.is_multiple_of(97) {
                    let values = [v, v + 1.0];
                    let take = 1 + (x as usize / 97) % 2;
                    assert_eq!(here.make(&values[..take]), there.make(&values[..take]));
                } else {
                    let n = (x >> 32) as u32 % here.len() as u32;
                    here.push(n, v);
                    there.push(n, v);
                }
                assert_eq!(here.len(), there.len());
            }
            there.finish();
            assert!(there.handed.is_none());
            assert_eq!(here.vecs, there.vecs, "{calls} calls");
            for n in 0..here.len() as u32 {
                assert_eq!(here.get(n), there.get(n));
            }
        }
    }
}
