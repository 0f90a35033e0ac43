//! The host collector: a thread that drains published buffers while the run goes on and
//! streams one JSON line per sample into a body file on disk.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use simpler_artifacts::publish::GuardedFile;

use super::probe::{Phase, RecordBuffer, ScopeRecord};
use super::ARTIFACT_NAME;
use crate::collectors::channel::{BufferChannel, CollectorThread};

/// Sample lines written so far, in a body file next to the artifact.
pub(crate) struct Body {
    pub path: PathBuf,
    out: BufWriter<GuardedFile>,
    sites: HashMap<(bool, usize), String>,
}

impl Body {
    fn create(dir: &Path, run_epoch: u64) -> io::Result<Body> {
        crate::collectors::make_subfolder(dir)?;
        let path = dir.join(format!(".scope_stats.{run_epoch}.body"));
        let file = GuardedFile::work_file(File::create(&path)?, ARTIFACT_NAME);
        let out = BufWriter::with_capacity(64 << 10, file);
        Ok(Body {
            path,
            out,
            sites: HashMap::new(),
        })
    }

    fn write(&mut self, r: &ScopeRecord, run_epoch: u64, seq: u32) -> io::Result<()> {
        let key = r.site.key();
        // The site's JSON string (quoted and escaped) is built once per call site.
        let site = self
            .sites
            .entry(key)
            .or_insert_with(|| serde_json::to_string(&r.site.to_string()).unwrap_or_else(|_| "\"?\"".into()));
        self.out.write_all(b"{\"site\":")?;
        self.out.write_all(site.as_bytes())?;
        // The rest is bounded: fixed keys and at most eleven 20-digit numbers.
        let mut line = [0u8; 512];
        let mut n = 0;
        let mut put = |b: &[u8]| {
            line[n..n + b.len()].copy_from_slice(b);
            n += b.len();
        };
        let mut num = itoa::Buffer::new();
        put(match r.phase {
            Phase::Begin => b",\"phase\":\"begin\",\"depth\":",
            Phase::End => b",\"phase\":\"end\",\"depth\":",
        });
        put(num.format(r.depth).as_bytes());
        let fields: [(&[u8], u64); 10] = [
            (b",\"ring\":", u64::from(r.ring)),
            (b",\"task_window_start\":", u64::from(r.task_start)),
            (b",\"task_window_end\":", u64::from(r.task_end)),
            (b",\"heap_start\":", r.heap_start),
            (b",\"heap_end\":", r.heap_end),
            (b",\"dep_pool_start\":", r.dep_start),
            (b",\"dep_pool_end\":", r.dep_end),
            (b",\"tensormap\":", u64::from(r.tensormap)),
            (b",\"run_epoch\":", run_epoch),
            (b",\"buf_seq\":", u64::from(seq)),
        ];
        for (k, v) in &fields {
            put(k);
            put(num.format(*v).as_bytes());
        }
        put(b"}\n");
        self.out.write_all(&line[..n])
    }

    /// Flushes and closes the body, returning its path.
    pub fn close(mut self) -> io::Result<PathBuf> {
        self.out.flush()?;
        Ok(self.path)
    }
}

/// What the host holds after collection.
pub(crate) struct Collected {
    /// Records the host took delivery of.
    pub received: u64,
    /// Of those, records host storage kept.
    pub retained: u64,
    pub body: Option<Body>,
    /// The first storage error (later records are received but not retained).
    pub error: Option<String>,
    dir: PathBuf,
    run_epoch: u64,
    limit: Option<u64>,
}

impl Collected {
    /// Follows a move of the run's folder while the run went on: the body (read and renamed
    /// by path at the close) and the folder a late body is made in are where it is now.
    pub fn relocate(&mut self, now_at: impl Fn(&Path) -> PathBuf) {
        self.dir = now_at(&self.dir);
        if let Some(b) = self.body.as_mut() {
            b.path = now_at(&b.path);
        }
    }

    fn new(dir: PathBuf, run_epoch: u64, limit: Option<u64>) -> Self {
        Collected {
            received: 0,
            retained: 0,
            body: None,
            error: None,
            dir,
            run_epoch,
            limit,
        }
    }

    /// Stores the records of one buffer.
    pub fn append(&mut self, buf: &RecordBuffer) {
        for r in &buf.records {
            self.received += 1;
            if self.error.is_some() || self.limit.is_some_and(|l| self.retained >= l) {
                continue;
            }
            if self.body.is_none() {
                match Body::create(&self.dir, self.run_epoch) {
                    Ok(b) => self.body = Some(b),
                    Err(e) => {
                        self.error = Some(format!(
                            "cannot create the body file in {}: {e}",
                            self.dir.display()
                        ));
                        continue;
                    }
                }
            }
            let body = self.body.as_mut().expect("created above");
            match body.write(r, buf.run_epoch, buf.seq) {
                Ok(()) => self.retained += 1,
                Err(e) => self.error = Some(format!("writing {}: {e}", body.path.display())),
            }
        }
    }

    /// Removes the body file (nothing will be published from it).
    pub fn discard(&mut self) {
        if let Some(b) = self.body.take() {
            let path = b.path.clone();
            drop(b);
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The collector thread of one run: drains `channel` into a body file in `dir`.
pub(crate) fn spawn(
    channel: Arc<BufferChannel<RecordBuffer>>,
    dir: PathBuf,
    run_epoch: u64,
    limit: Option<u64>,
) -> CollectorThread<RecordBuffer, Collected> {
    CollectorThread::spawn(
        "simpler-scope-stats",
        channel,
        move || Collected::new(dir, run_epoch, limit),
        Collected::append,
    )
}
