//! UTC times for folder names and the run manifest (no time-zone database needed).

use std::time::{SystemTime, UNIX_EPOCH};

/// The current UTC time as `YYYYmmdd_HHMMSS`.
pub fn utc_stamp() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    stamp_of(secs)
}

/// `t` as an RFC 3339 UTC time with milliseconds, e.g. `2026-11-30T15:23:54.123Z`.
pub fn iso_utc(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let (y, m, day, h, min, s) = civil(d.as_secs());
    format!(
        "{y:04}-{m:02}-{day:02}T{h:02}:{min:02}:{s:02}.{:03}Z",
        d.subsec_millis()
    )
}

/// `secs` since the Unix epoch as `YYYYmmdd_HHMMSS` (civil-from-days, proleptic Gregorian).
pub fn stamp_of(secs: u64) -> String {
    let (y, m, d, h, min, s) = civil(secs);
    format!("{y:04}{m:02}{d:02}_{h:02}{min:02}{s:02}")
}

/// Year, month, day, hour, minute, second of `secs` since the Unix epoch.
fn civil(secs: u64) -> (i64, i64, i64, u64, u64, u64) {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d, rem / 3600, rem % 3600 / 60, rem % 60)
}

#[cfg(test)]
mod tests {
    #[test]
    fn known_instants() {
        assert_eq!(super::stamp_of(0), "19700101_000000");
        assert_eq!(super::stamp_of(951_782_400), "20000229_000000");
        assert_eq!(super::stamp_of(1_795_958_321), "20261129_131841");
        let t = std::time::UNIX_EPOCH + std::time::Duration::from_millis(1_795_958_321_042);
        assert_eq!(super::iso_utc(t), "2026-11-29T13:18:41.042Z");
    }
}
