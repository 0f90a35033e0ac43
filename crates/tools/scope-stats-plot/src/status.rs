//! Sampling status: what the metadata and the pairing say about how complete the data is.
//!
//! "Healthy" is shown only when `fatal` is `false`, `dropped` is `0`, the counts are known
//! (`total` and `dropped` present and not saturated, `counts_unknown` not `true`), the verdict
//! (if any) is `published`, and the file itself is complete (no cut-off line, no unpaired
//! samples, no host refusal, sample count consistent with the device counts). Every other
//! condition is reported as what it is, one chip each.

use simpler_artifacts::scope_stats::{CollectionVerdict, COUNTER_SATURATED};

use crate::format;
use crate::load::Loaded;

/// One status chip: CSS class (`ok`, `warn`, `danger`, `muted`) and text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Chip {
    pub(crate) class: &'static str,
    pub(crate) text: String,
}

fn chip(class: &'static str, text: impl Into<String>) -> Chip {
    Chip {
        class,
        text: text.into(),
    }
}

/// The verdict on the whole file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Status {
    /// True if and only if nothing below was found.
    pub(crate) healthy: bool,
    /// The headline chip, then one chip per finding.
    pub(crate) chips: Vec<Chip>,
}

/// Returns true if and only if the device counts can be trusted.
pub(crate) fn counts_known(l: &Loaded) -> bool {
    let m = &l.meta;
    m.counts_unknown != Some(true)
        && matches!(m.total, Some(t) if t != COUNTER_SATURATED)
        && matches!(m.dropped, Some(d) if d != COUNTER_SATURATED)
        && m.fatal.is_some()
}

/// Classifies a loaded file.
pub(crate) fn classify(l: &Loaded) -> Status {
    let m = &l.meta;
    let mut found = Vec::new();
    match m.fatal {
        Some(true) => found.push(chip(
            "danger",
            "Fatal latched: records after it are diagnostic-only",
        )),
        Some(false) => {}
        None => found.push(chip("warn", "Fatal: unknown (null)")),
    }
    match m.dropped {
        Some(COUNTER_SATURATED) => found.push(chip("warn", "Dropped: counter saturated, count unknown")),
        Some(0) => {}
        Some(d) => found.push(chip(
            "warn",
            format!("Dropped {} records on device", format::int(d)),
        )),
        None => found.push(chip("warn", "Dropped: unknown (null)")),
    }
    match m.total {
        Some(COUNTER_SATURATED) => found.push(chip("warn", "Total: counter saturated, count unknown")),
        Some(_) => {}
        None => found.push(chip("warn", "Total: unknown (null)")),
    }
    if m.counts_unknown == Some(true) {
        found.push(chip("warn", "Counts unknown (counts_unknown: true)"));
    }
    match &m.collection_verdict {
        None | Some(CollectionVerdict::Published) => {}
        Some(v @ CollectionVerdict::PartialSafe) => found.push(chip(
            "warn",
            format!(
                "Verdict {}: loss, host refusal or a fatal; counts known",
                v.as_str()
            ),
        )),
        Some(v @ CollectionVerdict::PartialCutUnknown) => found.push(chip(
            "danger",
            format!(
                "Verdict {}: producer stop unproved or counts untrusted",
                v.as_str()
            ),
        )),
        Some(CollectionVerdict::Other(v)) => {
            found.push(chip("warn", format!("Verdict {v} (not a known verdict)")))
        }
    }
    if let (Some(rx), Some(kept)) = (m.host_received_records, m.host_retained_records) {
        if kept < rx {
            found.push(chip(
                "warn",
                format!(
                    "Host storage refused {} of {} received records",
                    format::int(rx.saturating_sub(kept)),
                    format::int(rx)
                ),
            ));
        }
    }
    if let Some(t) = &l.truncated {
        found.push(chip("warn", format!("Incomplete file: {t}")));
    }
    let (begins, ends) = l.unpaired_counts();
    if begins + ends > 0 {
        found.push(chip(
            "warn",
            format!(
                "Incomplete statistics: {} unpaired begin(s), {} unpaired end(s)",
                format::int(begins),
                format::int(ends)
            ),
        ));
    }
    if counts_known(l) && l.truncated.is_none() {
        if let (Some(total), Some(dropped)) = (m.total, m.dropped) {
            let expected = total.saturating_sub(dropped);
            if l.samples != expected {
                found.push(chip(
                    "warn",
                    format!(
                        "Record count mismatch: file has {} samples, device total − dropped = {}",
                        format::int(l.samples),
                        format::int(expected)
                    ),
                ));
            }
        }
    }
    let healthy = found.is_empty();
    let headline = if healthy {
        chip("ok", "Healthy: no fatal, no dropped records, counts known")
    } else if !counts_known(l) {
        chip("danger", "Not healthy: counts unknown")
    } else {
        chip("danger", "Not healthy: incomplete collection")
    };
    let mut chips = vec![headline];
    chips.extend(found);
    Status { healthy, chips }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::Pairer;
    use simpler_artifacts::scope_stats::Metadata;

    fn meta(fatal: Option<bool>, dropped: Option<u64>, total: Option<u64>) -> Metadata {
        Metadata {
            fatal,
            dropped,
            total,
            ..Metadata::default()
        }
    }

    fn status(m: Metadata) -> Status {
        classify(&Pairer::new(m).finish())
    }

    #[test]
    fn healthy_only_when_everything_is_known_and_clean() {
        let s = status(meta(Some(false), Some(0), Some(0)));
        assert!(s.healthy, "{s:?}");
        assert!(s.chips[0].text.starts_with("Healthy"));
        for m in [
            meta(None, Some(0), Some(0)),
            meta(Some(false), None, Some(0)),
            meta(Some(false), Some(0), None),
            meta(Some(true), Some(0), Some(0)),
            meta(Some(false), Some(2), Some(2)),
            meta(Some(false), Some(0), Some(COUNTER_SATURATED)),
            Metadata {
                counts_unknown: Some(true),
                ..meta(Some(false), Some(0), Some(0))
            },
            Metadata {
                collection_verdict: Some(CollectionVerdict::PartialSafe),
                ..meta(Some(false), Some(0), Some(0))
            },
        ] {
            let s = status(m.clone());
            assert!(!s.healthy, "{m:?}");
            assert!(s.chips.iter().all(|c| !c.text.contains("Healthy")), "{s:?}");
        }
    }

    #[test]
    fn sample_count_must_match_device_counts() {
        let s = status(meta(Some(false), Some(0), Some(4)));
        assert!(!s.healthy);
        assert!(s.chips.iter().any(|c| c.text.contains("Record count mismatch")));
    }
}
