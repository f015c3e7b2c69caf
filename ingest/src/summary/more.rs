//! The samples of a table's series that have more than one: kept in place, or appended on a
//! thread of their own while a large input is parsed.
//!
//! Appending costs the parsing thread growing vectors (copies and fresh pages) on inputs of
//! millions of samples. With [`More::threaded`], the parsing thread writes `(vector, value)`
//! pairs into a batch and appends the first few full batches itself; a thread started then
//! takes the vectors and every later batch, in the order they were written, so every vector
//! ends up as it would in place. A smaller input never starts the thread, which would only
//! compete for the CPUs with the reading and the parsing. The vectors of a threaded table
//! are written out to a [`Spill`] as they fill, so its memory stays flat; the batches and
//! the vectors written out keep their memory, so that what follows fills pages already in
//! memory.

use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use super::spill::{self, Spill, Stored};

/// Pairs handed over at a time: 1 MiB.
const BATCH: usize = 1 << 16;
/// Full batches that may wait for the appending thread, which bounds the memory they hold.
const QUEUED: usize = 2;
/// Full batches appended here before the thread starts.
const HERE: usize = 4;

/// `(vector, value)`: a vector number equal to the count made so far makes that vector.
type Batch = Vec<(u32, f64)>;

/// The appending thread: the way to it, the way back of the batches it emptied, and the
/// thread, which gives the vectors back.
#[derive(Debug)]
struct Appender {
    tx: SyncSender<Batch>,
    spent: Receiver<Batch>,
    thread: JoinHandle<Vectors>,
}

/// The vectors, and what of them went to the file.
#[derive(Debug, Default)]
struct Vectors {
    vecs: Vec<Vec<f64>>,
    /// The vectors' capacities added up, in samples.
    capacity: usize,
    /// Capacity at which the vectors are written out next; 0: never (a table not threaded,
    /// or a file that failed, after which memory grows with the input as it would without).
    spill_at: usize,
    /// The capacity vectors may hold: [`spill::LIMIT`] but in tests.
    limit: usize,
    /// Samples the vectors hold, counted by batch.
    held: usize,
    /// Samples held at which the vectors are written out next, before they outgrow the room
    /// kept from the last write.
    held_at: usize,
    spill: Option<Spill>,
}

impl Vectors {
    /// Vectors written out to a file once they hold a quarter of `limit` samples or their
    /// capacity reaches it.
    fn within(limit: usize) -> Self {
        Vectors {
            limit,
            spill_at: limit,
            held_at: limit / 4,
            ..Vectors::default()
        }
    }

    #[inline]
    fn push(&mut self, n: u32, value: f64) {
        let v = &mut self.vecs[n as usize];
        let before = v.capacity();
        v.push(value);
        self.capacity += v.capacity() - before;
    }

    fn make(&mut self, values: &[f64]) {
        let v = values.to_vec();
        self.capacity += v.capacity();
        self.vecs.push(v);
    }

    /// Writes the vectors out once they hold enough: a quarter of the limit in samples, so
    /// that the samples after a write fit in the room kept, or the limit in capacity.
    fn check(&mut self) {
        if self.spill_at == 0 || (self.capacity < self.spill_at && self.held < self.held_at) {
            return;
        }
        let spill = match self.spill.take().map_or_else(Spill::new, Ok) {
            Ok(s) => self.spill.insert(s),
            Err(_) => {
                self.spill_at = 0;
                return;
            }
        };
        match spill.write(&mut self.vecs, self.limit / 2) {
            Ok(left) => {
                self.capacity = left;
                self.held = self.vecs.iter().map(Vec::len).sum();
                // Many short vectors may hold most of the limit; they are not rewritten at
                // every batch.
                self.spill_at = left.max(self.limit / 2) + self.limit / 2;
                self.held_at = self.held + self.limit / 4;
            }
            Err(_) => self.spill_at = 0,
        }
    }

    /// Applies a batch: a vector number one past the last makes that vector.
    fn append(&mut self, batch: impl ExactSizeIterator<Item = (u32, f64)>) {
        self.held += batch.len();
        for (n, v) in batch {
            if (n as usize) < self.vecs.len() {
                self.push(n, v);
            } else {
                debug_assert_eq!(n as usize, self.vecs.len());
                self.make(&[v]);
            }
        }
        self.check();
    }
}

#[derive(Debug, Default)]
pub(super) struct More {
    vecs: Vectors,
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
    /// Appends elsewhere from now on, until [`More::finish`], and writes long vectors out to
    /// a file; only while nothing is stored.
    pub(super) fn threaded(&mut self) {
        self.threaded_within(spill::LIMIT);
    }

    /// [`More::threaded`], writing out from `limit` samples of capacity.
    pub(super) fn threaded_within(&mut self, limit: usize) {
        if self.vecs.vecs.is_empty() && self.handed.is_none() {
            self.vecs = Vectors::within(limit);
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
        self.handed
            .as_ref()
            .map_or(self.vecs.vecs.len(), |h| h.made)
    }

    /// A new vector holding `values`; its number.
    pub(super) fn make(&mut self, values: &[f64]) -> u32 {
        let n = self.len() as u32;
        match &mut self.handed {
            None => self.vecs.make(values),
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
            None => self.vecs.push(n, value),
            Some(h) => h.pass(&mut self.vecs, n, value),
        }
    }

    /// [`More::push`] when the batch being filled has room for more than this value, which
    /// is all it does then; false (nothing done) otherwise.
    #[inline]
    pub(super) fn pass_with_room(&mut self, n: u32, value: f64) -> bool {
        match &mut self.handed {
            Some(h) if h.batch.len() + 1 < BATCH => {
                h.batch.push((n, value));
                true
            }
            _ => false,
        }
    }

    /// Whether some samples were written out to a file.
    #[cfg(test)]
    pub(super) fn written_out(&self) -> bool {
        self.vecs.spill.is_some()
    }

    /// Vector `n`, once [`More::finish`] has brought the vectors back.
    pub(super) fn get(&self, n: u32) -> Stored<'_> {
        assert!(
            self.handed.is_none(),
            "samples read while they are appended elsewhere: finish the table first"
        );
        Stored::new(self.vecs.spill.as_ref(), n, &self.vecs.vecs[n as usize])
    }

    /// Waits for what was handed over and keeps the vectors here again.
    pub(super) fn finish(&mut self) {
        let Some(mut h) = self.handed.take() else {
            return;
        };
        let rest = std::mem::take(&mut h.batch);
        match h.thread.take() {
            None => self.vecs.append(rest.into_iter()),
            Some(Appender { tx, thread, .. }) => {
                // The thread ends when the channel does, after the batches before this one. A
                // send fails only when the thread ended early, by a panic, which `join` passes on.
                let _ = tx.send(rest);
                drop(tx);
                self.vecs = thread
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e));
            }
        }
    }
}

impl Handed {
    #[inline]
    fn pass(&mut self, vecs: &mut Vectors, n: u32, value: f64) {
        self.batch.push((n, value));
        if self.batch.len() == BATCH {
            self.hand_over(vecs);
        }
    }

    /// A full batch: appended here while few came before, else sent to the thread, which
    /// the first one sent starts with the vectors made here.
    #[inline(never)]
    fn hand_over(&mut self, vecs: &mut Vectors) {
        if self.thread.is_none() && self.here < HERE {
            self.here += 1;
            vecs.append(self.batch.drain(..));
            return;
        }
        let appender = self.thread.get_or_insert_with(|| {
            let (tx, rx) = sync_channel::<Batch>(QUEUED);
            let (back, spent) = sync_channel::<Batch>(QUEUED + 1);
            let start = std::mem::take(vecs);
            Appender {
                tx,
                spent,
                thread: std::thread::spawn(move || receive(start, rx, back)),
            }
        });
        // A batch the thread emptied, when one is back: its pages are in memory, where a new
        // batch costs this thread a page fault every 4 KiB it fills.
        let next = appender
            .spent
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(BATCH));
        let full = std::mem::replace(&mut self.batch, next);
        // The thread only stops on a panic, which `finish` passes on.
        let _ = appender.tx.send(full);
    }
}

fn receive(mut vecs: Vectors, rx: Receiver<Batch>, back: SyncSender<Batch>) -> Vectors {
    for mut batch in rx {
        vecs.append(batch.drain(..));
        // Dropped instead when enough are on their way back.
        let _ = back.try_send(batch);
    }
    vecs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contents(m: &More, n: u32) -> Vec<f64> {
        let mut out = Vec::new();
        m.get(n)
            .each_chunk(&mut |xs| out.extend_from_slice(xs))
            .unwrap();
        out
    }

    /// Vectors built in place and elsewhere from the same calls, over several batches, with
    /// and without some of them written out, the values passed on both ways.
    #[test]
    fn vectors_built_elsewhere_are_those_built_in_place() {
        for limit in [spill::LIMIT, BATCH / 2] {
            for calls in [10, BATCH - 1, BATCH, 3 * BATCH + 17, (HERE + 3) * BATCH + 5] {
                let mut here = More::default();
                let mut there = More::default();
                there.threaded_within(limit);
                let mut x: u64 = 88172645463325252;
                for i in 0..calls {
                    xorshift(&mut x);
                    let v = (x % 1000) as f64 + i as f64 * 1e-6;
                    if here.len() == 0 || x.is_multiple_of(97) {
                        let values = [v, v + 1.0];
                        let take = 1 + (x as usize / 97) % 2;
                        assert_eq!(here.make(&values[..take]), there.make(&values[..take]));
                    } else {
                        // Mostly the first few vectors, so that some grow long enough to go.
                        let n = (x >> 32) as u32 % (here.len() as u32).min(1 + (x as u32 % 8));
                        here.push(n, v);
                        // As `SeriesTable::sample` passes a value on.
                        if x.is_multiple_of(3) || !there.pass_with_room(n, v) {
                            there.push(n, v);
                        }
                    }
                    assert_eq!(here.len(), there.len());
                    // A full batch is handed over at once: the batches bound the memory.
                    let batch = there.handed.as_ref().map_or(0, |h| h.batch.len());
                    assert!(batch < BATCH, "{batch} values in a batch");
                }
                there.finish();
                assert!(there.handed.is_none());
                // Written out once a quarter of the limit is held (the capacity stays below
                // the limit in these cases).
                let spilled = there.vecs.spill.is_some();
                assert_eq!(spilled, calls >= limit / 4, "{calls} calls, limit {limit}");
                assert!(there.vecs.spill_at > 0, "the file failed");
                for n in 0..here.len() as u32 {
                    assert_eq!(
                        here.get(n).in_memory(),
                        Some(&here.vecs.vecs[n as usize][..])
                    );
                    assert_eq!(contents(&here, n), contents(&there, n), "vector {n}");
                }
            }
        }
    }

    /// The next of a xorshift sequence: the tests' choices, the same from run to run.
    fn xorshift(x: &mut u64) {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
    }

    /// `n` samples of vectors `0..vectors` in turn, `(vector, value)`.
    fn pairs(n: usize, vectors: u32) -> impl ExactSizeIterator<Item = (u32, f64)> {
        (0..n).map(move |i| (i as u32 % vectors, i as f64))
    }

    /// A write keeps the room of the vectors written, within half the limit, so that the
    /// samples that follow fill it without growing them; a vector unused since the write
    /// before gives its room back.
    #[test]
    fn written_vectors_keep_their_room() {
        let limit = 4096;
        let mut v = Vectors::within(limit);
        // Makes vectors 0 and 1, then holds 1,001 samples each: written out (2,002 >= 1,024).
        v.append([(0, 0.0), (1, 1.0)].into_iter());
        v.append(pairs(2000, 2));
        assert!(v.spill.is_some());
        assert_eq!(v.held, 0);
        let room = v.vecs[0].capacity();
        assert!(v.vecs.iter().all(|x| x.is_empty() && x.capacity() >= 1001));
        assert_eq!(v.capacity, room + v.vecs[1].capacity());
        assert!(v.capacity <= limit / 2);
        // Vector 0 alone: 1,000 samples fit in its room, nothing written.
        v.append(pairs(1000, 1));
        assert_eq!((v.vecs[0].len(), v.vecs[0].capacity()), (1000, room));
        assert_eq!(v.held, 1000);
        // Past a quarter of the limit again: vector 0 written and kept, vector 1 (unused
        // since the last write) given back.
        v.append(pairs(100, 1));
        assert!(v.vecs[0].is_empty() && v.vecs[0].capacity() >= 1100);
        assert_eq!(v.vecs[1].capacity(), 0);
        assert_eq!(v.capacity, v.vecs[0].capacity());
        let spill = v.spill.as_ref().unwrap();
        assert_eq!(spill.segments(0).len(), 2);
        assert_eq!(spill.segments(1).len(), 1);
    }

    /// Whatever the vectors' sizes, the room kept stays within half the limit, and the
    /// samples held and the capacity below the points at which the vectors are written out.
    #[test]
    fn room_kept_is_bounded() {
        let limit = 1 << 14;
        let mut v = Vectors::within(limit);
        v.append((0..400).map(|n| (n, 0.0)));
        let mut x: u64 = 88172645463325252;
        for round in 0..400 {
            // A few vectors take most samples, changing from round to round; or samples
            // spread over all, so that vectors grow without being written out.
            let batch: Vec<(u32, f64)> = (0..1000)
                .map(|i| {
                    xorshift(&mut x);
                    let n = if round % 100 >= 50 || x.is_multiple_of(4) {
                        x as u32 % 400
                    } else {
                        (round / 10 + i % 3) % 400
                    };
                    (n, i as f64)
                })
                .collect();
            v.append(batch.into_iter());
            let room: usize = v
                .vecs
                .iter()
                .filter(|x| x.is_empty())
                .map(Vec::capacity)
                .sum();
            assert!(room <= limit / 2, "round {round}: room {room}");
            assert!(v.capacity < v.spill_at, "round {round}: {}", v.capacity);
            assert!(v.held < v.held_at, "round {round}: {}", v.held);
            assert_eq!(v.capacity, v.vecs.iter().map(Vec::capacity).sum::<usize>());
            assert_eq!(v.held, v.vecs.iter().map(Vec::len).sum::<usize>());
        }
    }
}
