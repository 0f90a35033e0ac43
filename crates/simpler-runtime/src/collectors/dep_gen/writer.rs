//! The deps.json writer thread: writes the graph's encoded buffers to their files, in order,
//! off the thread that encodes them (the replay's, or hbg's orchestrator).
//!
//! Why a thread: handing pages to the page cache is the kernel's work (allocating, charging
//! and filling a page per 4 KB), and it was a third of the live replay's time, the core that
//! bounds a dep_gen run. The encoding thread now fills one buffer while this one writes the
//! last.
//!
//! Buffers circulate: the encoding side swaps a full buffer for an empty one
//! ([`SectionWriter::write`]), waiting only when every buffer is in flight (a bounded pool of
//! [`SPARE_BUFFERS`]: back-pressure, bounded memory). The thread parks on its channel when
//! there is nothing to write. After a write error it keeps recycling buffers without writing,
//! and [`SectionWriter::finish`] returns the first error with the outputs.

use std::io::{self, Write};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::thread::JoinHandle;

/// Buffers in circulation besides the one each section fills.
pub(super) const SPARE_BUFFERS: usize = 4;

/// The outputs of one graph, by section index (`tasks[]`, `tensors[]`, `edges[]`).
pub(super) type Outputs<T, P> = (T, [P; 2]);

/// What the thread hands back: the outputs and the first write error.
type Finished<T, P> = (Outputs<T, P>, io::Result<()>);

/// A section's full buffer on its way to the thread.
struct Job {
    section: usize,
    bytes: Vec<u8>,
}

/// See the module docs.
pub(super) struct SectionWriter<T, P> {
    jobs: Option<SyncSender<Job>>,
    free: Receiver<Vec<u8>>,
    thread: Option<JoinHandle<Finished<T, P>>>,
}

impl<T, P> SectionWriter<T, P>
where
    T: Write + Send + 'static,
    P: Write + Send + 'static,
{
    /// Starts the thread with `outputs` and a pool of empty buffers of `capacity` bytes.
    pub fn spawn(outputs: Outputs<T, P>, capacity: usize) -> io::Result<SectionWriter<T, P>> {
        // Every buffer that exists fits in either channel, so neither side blocks on a send.
        let bound = SPARE_BUFFERS + 3;
        let (jobs, queued) = sync_channel::<Job>(bound);
        let (recycle, free) = sync_channel::<Vec<u8>>(bound);
        for _ in 0..SPARE_BUFFERS {
            recycle
                .send(Vec::with_capacity(capacity))
                .expect("the receiver is alive");
        }
        let thread = std::thread::Builder::new()
            .name("simpler-deps-writer".into())
            .spawn(move || write_all_jobs(outputs, &queued, &recycle))?;
        Ok(SectionWriter {
            jobs: Some(jobs),
            free,
            thread: Some(thread),
        })
    }

    /// Hands the bytes of `buf` to the thread for `section`, leaving an empty buffer in `buf`
    /// (waits while every buffer is in flight). Fails only when the thread is gone; the bytes
    /// are then dropped, so `buf` does not grow for nothing.
    pub fn write(&mut self, section: usize, buf: &mut Vec<u8>) -> io::Result<()> {
        let gone = || io::Error::other("the deps.json writer thread stopped");
        let Ok(empty) = self.free.recv() else {
            buf.clear();
            return Err(gone());
        };
        let bytes = std::mem::replace(buf, empty);
        let jobs = self.jobs.as_ref().ok_or_else(gone)?;
        jobs.send(Job { section, bytes }).map_err(|_| gone())
    }

    /// Waits until everything handed over is written; returns the outputs and the first write
    /// error, if any.
    pub fn finish(mut self) -> io::Result<Finished<T, P>> {
        drop(self.jobs.take());
        let thread = self.thread.take().expect("finished once");
        thread
            .join()
            .map_err(|_| io::Error::other("the deps.json writer thread panicked"))
    }
}

impl<T, P> Drop for SectionWriter<T, P> {
    fn drop(&mut self) {
        // Dropped unfinished (an abandoned graph): the thread ends once the queue is closed,
        // dropping its outputs; it is not waited for.
        drop(self.jobs.take());
    }
}

/// The thread's loop: each job's bytes to its section's output, in the order they came.
fn write_all_jobs<T: Write, P: Write>(
    mut outputs: Outputs<T, P>,
    queued: &Receiver<Job>,
    recycle: &SyncSender<Vec<u8>>,
) -> Finished<T, P> {
    let mut result = Ok(());
    for Job { section, mut bytes } in queued.iter() {
        if result.is_ok() {
            result = match section {
                0 => outputs.0.write_all(&bytes),
                s => outputs.1[s - 1].write_all(&bytes),
            };
        }
        bytes.clear();
        // The encoding side may be gone already (it finished); the buffer is then dropped.
        let _ = recycle.send(bytes);
    }
    (outputs, result)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every buffer lands in its own section's output, in the order handed over, however many
    /// more buffers than the pool holds go through.
    #[test]
    fn buffers_reach_their_sections_in_order() {
        let mut w = SectionWriter::spawn((Vec::new(), [Vec::new(), Vec::new()]), 8).unwrap();
        let mut want: [Vec<u8>; 3] = Default::default();
        let mut buf = Vec::new();
        for i in 0..100u8 {
            let section = usize::from(i % 3);
            buf.extend_from_slice(&[i, i]);
            want[section].extend_from_slice(&[i, i]);
            w.write(section, &mut buf).unwrap();
            assert!(buf.is_empty(), "an empty buffer comes back");
        }
        let ((tasks, [tensors, edges]), result) = w.finish().unwrap();
        result.unwrap();
        assert_eq!([tasks, tensors, edges], want);
    }

    /// A writer whose thread is gone (here: it panicked in an output) says so, and drops
    /// the bytes handed to it instead of letting the caller's buffer grow.
    #[test]
    fn a_writer_whose_thread_is_gone_drops_the_bytes() {
        struct Panics;
        impl Write for Panics {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                panic!("an output that panics (test)")
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut w = SectionWriter::spawn((Panics, [Vec::new(), Vec::new()]), 8).unwrap();
        let mut buf = vec![1u8; 4];
        let mut failed = None;
        for _ in 0..(SPARE_BUFFERS + 8) {
            buf.extend_from_slice(&[1, 2, 3]);
            if let Err(e) = w.write(0, &mut buf) {
                failed = Some(e);
                assert!(buf.is_empty(), "the bytes are dropped");
                break;
            }
        }
        let e = failed.expect("the writes fail once the pool is used up");
        assert_eq!(e.to_string(), "the deps.json writer thread stopped");
        assert_eq!(
            w.finish().err().unwrap().to_string(),
            "the deps.json writer thread panicked"
        );
    }

    /// An output that fails stops the writing (later buffers are dropped, not written), the
    /// writer keeps accepting buffers, and the first error comes back at the end.
    #[test]
    fn the_first_write_error_is_returned_at_the_end() {
        struct Full(usize);
        impl Write for Full {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                if self.0 == 0 {
                    return Err(io::Error::new(io::ErrorKind::StorageFull, "disk full"));
                }
                self.0 -= 1;
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let mut w = SectionWriter::spawn((Full(2), [Vec::new(), Vec::new()]), 8).unwrap();
        let mut buf = Vec::new();
        for i in 0..20u8 {
            buf.push(i);
            w.write(usize::from(i % 2), &mut buf).unwrap();
        }
        let ((full, [tensors, _]), result) = w.finish().unwrap();
        assert_eq!(result.unwrap_err().kind(), io::ErrorKind::StorageFull);
        assert_eq!(full.0, 0);
        assert_eq!(tensors, [1, 3], "nothing is written after the first error");
    }
}
