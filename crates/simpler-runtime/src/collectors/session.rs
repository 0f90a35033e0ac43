//! One run's diagnostics: start the enabled collectors before the run, hand their producers to
//! the run threads, and close each collector after the run (with or without producer-stop
//! proof).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use simpler_artifacts::swimlane::Header as LaneHeader;

use super::channel::{BufferChannel, ChannelFaults};
use super::dep_gen::capture::DepGenCapture;
use super::dep_gen::graph::GraphWriter;
use super::dep_gen::record::{SlotBuffer, BUFFERS as DEP_GEN_BUFFERS, SLOTS_PER_BUFFER};
use super::dep_gen::replay::{DepGenCollector, Replay};
use super::scope_stats::background::BackgroundWriter;
use super::scope_stats::collector::Collector;
use super::scope_stats::export::{close_metadata_only, close_run, Capacities};
use super::scope_stats::probe::{RecordBuffer, ScopeStatsProducer, BACKPRESSURE_WAIT};
use super::scope_stats::{ARTIFACT, BUFFERS};
use super::swimlane::{self, RowBuffer as LaneBuffer, RunClock, SwimlaneCollector, SwimlaneShared};
use super::{dep_gen, Faults};
use crate::config::{CallConfig, RingSizes, RuntimeKind};
use crate::run::{DiagInputs, Executed, RunError};

impl From<&Faults> for ChannelFaults {
    fn from(f: &Faults) -> Self {
        ChannelFaults {
            refuse_ready: f.refuse_ready,
            starve_free: f.starve_free,
        }
    }
}

/// The host side of a run's diagnostics, between start and close.
pub(crate) struct Session<'w> {
    prefix: PathBuf,
    caps: Capacities,
    run_epoch: u64,
    background: Option<&'w BackgroundWriter>,
    scope_stats: Option<Collector>,
    dep_gen: Option<DepGenCollector>,
    swimlane: Option<(SwimlaneCollector, Arc<AtomicU64>)>,
}

impl<'w> Session<'w> {
    /// Starts the collectors `cfg` enables; returns the session and the producers for the run
    /// threads (the swimlane hand-off goes into `swimlane`, which the run's shared state holds).
    /// A background-mode run that cannot be admitted is refused here, before it starts.
    pub fn start(
        cfg: &CallConfig,
        sizes: &RingSizes,
        run_epoch: u64,
        buf_seq: &Arc<AtomicU32>,
        background: Option<&'w BackgroundWriter>,
        swimlane_shared: &mut Option<SwimlaneShared>,
    ) -> Result<(Session<'w>, DiagInputs), RunError> {
        let f = &cfg.faults;
        let wait = f.backpressure_wait.unwrap_or(BACKPRESSURE_WAIT);
        let prefix = cfg.output_prefix.clone().unwrap_or_default();
        let mut session = Session {
            caps: Capacities {
                task_window: sizes.task_window.map(u64::from),
                heap: sizes.heap,
                dep_pool: sizes.dep_pool.map(u64::from),
                tensormap: cfg.tensormap_capacity as u64,
            },
            prefix,
            run_epoch,
            background,
            scope_stats: None,
            dep_gen: None,
            swimlane: None,
        };
        let mut inputs = DiagInputs::default();
        if cfg.enable_scope_stats && cfg.runtime == RuntimeKind::Tmr {
            if let Some(bg) = background {
                bg.admit().map_err(RunError::Refused)?;
            }
            let buffers = (0..BUFFERS).map(|_| Box::new(RecordBuffer::new())).collect();
            let channel = Arc::new(BufferChannel::new(buffers, f.into()));
            inputs.scope_stats = Some(ScopeStatsProducer::new(
                channel.clone(),
                run_epoch,
                buf_seq.clone(),
                f.saturate_counters,
                wait,
            ));
            let dir = session
                .prefix
                .join(ARTIFACT)
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default();
            session.scope_stats = Some(Collector::spawn(channel, dir, run_epoch, f.host_storage_limit));
        }
        if cfg.enable_dep_gen {
            let tag = run_epoch.to_string();
            match cfg.runtime {
                RuntimeKind::Tmr => {
                    let per = f.dep_gen_slots_per_buffer.unwrap_or(SLOTS_PER_BUFFER).max(1);
                    let buffers = (0..DEP_GEN_BUFFERS)
                        .map(|_| Box::new(SlotBuffer::new(per)))
                        .collect();
                    let channel = Arc::new(BufferChannel::new(buffers, f.into()));
                    inputs.dep_gen = Some(DepGenCapture::new(channel.clone(), wait));
                    let mut replay = Replay::new(&session.prefix, &tag, f.corrupt_dep_gen_annotation);
                    replay.skip = f.skip_dep_gen_replay;
                    session.dep_gen = Some(DepGenCollector::spawn(channel, replay));
                }
                RuntimeKind::Hbg => inputs.dep_graph = GraphWriter::create(&session.prefix, &tag, false).ok(),
            }
        }
        if cfg.enable_l2_swimlane {
            let threads = cfg.effective_scheduler_threads().min(cfg.clusters).max(1);
            let buffers = (0..2 * (threads + 1) + 2)
                .map(|_| Box::new(LaneBuffer::new()))
                .collect();
            let channel = Arc::new(BufferChannel::new(buffers, f.into()));
            let dropped = Arc::new(AtomicU64::new(0));
            *swimlane_shared = Some(SwimlaneShared {
                channel: channel.clone(),
                dropped: dropped.clone(),
                clock: RunClock(Instant::now()),
                wait,
            });
            session.swimlane = Some((
                SwimlaneCollector::spawn(channel, session.prefix.clone(), run_epoch),
                dropped,
            ));
        }
        Ok((session, inputs))
    }

    /// Closes every collector of the run into its report.
    pub fn close(self, cfg: &CallConfig, executed: &mut Executed) {
        let prefix = &self.prefix;
        if let Some((c, dropped)) = self.swimlane {
            let spilled = c.stop();
            let header =
                LaneHeader::for_clusters(cfg.clusters as u32, executed.report.scheduler_threads as u32);
            let proven = executed.report.stop_proven;
            let dropped = dropped.load(Ordering::Relaxed);
            executed.report.swimlane = Some(swimlane::close(prefix, spilled, dropped, &header, proven));
        }
        if let Some(c) = self.dep_gen {
            let replay = c.stop();
            executed.report.dep_gen = Some(dep_gen::close_tmr(
                prefix,
                replay,
                executed.diag.dep_gen_final.take(),
            ));
        } else if cfg.enable_dep_gen {
            executed.report.dep_gen = Some(dep_gen::close_hbg(prefix, executed.diag.dep_graph.take()));
        }
        let fatal = executed.fatal.is_some();
        if let Some(collector) = self.scope_stats {
            let collected = collector.stop();
            let fin = executed.diag.scope_final.take();
            executed.report.scope_stats = Some(close_run(
                prefix,
                &self.caps,
                collected,
                fin,
                fatal,
                self.background,
                self.run_epoch,
            ));
        } else if cfg.enable_scope_stats {
            executed.report.scope_stats = Some(close_metadata_only(prefix, &self.caps, fatal));
        }
    }
}
