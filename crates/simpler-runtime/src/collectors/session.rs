//! One run's diagnostics: start the enabled collectors before the run, hand their probes to
//! the run threads, and close each collector after the run (with or without producer-stop
//! proof).

use std::path::PathBuf;

use super::channel::ChannelFaults;
use super::{Collector, Faults, Finals, Outcomes, Probes, RunFacts, StartCtx, REGISTRY};

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
    collectors: Vec<Box<dyn Collector + 'w>>,
}

impl<'w> Session<'w> {
    /// Starts every collector the configuration enables; returns the session and the probes
    /// for the run threads. A collector may refuse the run here, before it starts.
    pub fn start(ctx: &StartCtx<'w>) -> Result<(Session<'w>, Probes), crate::collectors::DiagnosticsError> {
        let mut probes = Probes::default();
        let mut collectors = Vec::new();
        for start in REGISTRY {
            if let Some(c) = start(ctx, &mut probes)? {
                collectors.push(c);
            }
        }
        let session = Session {
            prefix: ctx.prefix.to_path_buf(),
            collectors,
        };
        Ok((session, probes))
    }

    /// Closes every collector of the run, in registry order, writing what they write at close
    /// under `moved_to` when the run's folder was moved while it went on, under the prefix they
    /// started with otherwise.
    pub fn close(self, run: &RunFacts, finals: &mut Finals, moved_to: Option<&std::path::Path>) -> Outcomes {
        let mut out = Outcomes::default();
        let prefix = moved_to.unwrap_or(&self.prefix);
        for c in self.collectors {
            c.close(prefix, run, finals, &mut out);
        }
        out
    }
}
