//! Text formatting shared by the page and the charts: HTML escaping and value formatting.

use crate::metrics::Unit;

/// Escapes untrusted text (sites, file names) for HTML text and attribute values.
pub(crate) use simpler_artifacts::html::escape as html;

/// An integer with `,` thousands separators (any of `u64` and `i64`: the file's counts are
/// `u64`, and one past `i64::MAX` printed as negative).
pub(crate) fn int(v: impl Into<i128>) -> String {
    let v: i128 = v.into();
    let digits = v.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if v < 0 {
        out.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Binary byte prefixes, largest first: (divisor, suffix).
const BYTE_UNITS: [(f64, &str); 4] = [
    (1024.0 * 1024.0 * 1024.0 * 1024.0, "TiB"),
    (1024.0 * 1024.0 * 1024.0, "GiB"),
    (1024.0 * 1024.0, "MiB"),
    (1024.0, "KiB"),
];

/// The display scale for byte values up to `max`: (divisor, suffix).
pub(crate) fn byte_scale(max: f64) -> (f64, &'static str) {
    BYTE_UNITS
        .iter()
        .copied()
        .find(|(d, _)| max.abs() >= *d)
        .unwrap_or((1.0, "B"))
}

/// A value with its unit for summaries: `12,345 slots`, `8.00 KiB`, `512 B`.
pub(crate) fn value(v: i64, unit: Unit) -> String {
    match unit {
        Unit::Count(name) if v == 1 => format!("1 {}", singular(name)),
        Unit::Count(name) => format!("{} {name}", int(v)),
        Unit::Bytes => {
            let (div, suffix) = byte_scale(v as f64);
            if div == 1.0 {
                format!("{} B", int(v))
            } else {
                format!("{:.2} {suffix}", v as f64 / div)
            }
        }
    }
}

/// The singular of a count noun (`slots` → `slot`, `entries` → `entry`).
fn singular(name: &str) -> String {
    if let Some(stem) = name.strip_suffix("ies") {
        format!("{stem}y")
    } else {
        name.strip_suffix('s').unwrap_or(name).to_string()
    }
}

/// A value without the count noun (for tooltips and tick labels of count charts).
pub(crate) fn short(v: i64, unit: Unit) -> String {
    match unit {
        Unit::Count(_) => int(v),
        Unit::Bytes => value(v, unit),
    }
}

/// Serializes a list of strings as a JSON array safe to embed in a `<script>` element.
pub(crate) fn json_strings<'a>(items: impl Iterator<Item = &'a str>) -> String {
    let items: Vec<&str> = items.collect();
    simpler_artifacts::html::script_json(&items).expect("a list of strings serializes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            html("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn formats_values() {
        assert_eq!(int(0), "0");
        assert_eq!(int(1234567), "1,234,567");
        assert_eq!(int(-1000), "-1,000");
        // A file's u64 count past i64::MAX ("dropped" of 2^64 − 1 printed as -1).
        assert_eq!(int(u64::MAX), "18,446,744,073,709,551,615");
        assert_eq!(value(8192, Unit::Bytes), "8.00 KiB");
        assert_eq!(value(512, Unit::Bytes), "512 B");
        assert_eq!(value(3 << 20, Unit::Bytes), "3.00 MiB");
        assert_eq!(value(4, Unit::Count("slots")), "4 slots");
        assert_eq!(value(1, Unit::Count("slots")), "1 slot");
        assert_eq!(value(1, Unit::Count("entries")), "1 entry");
    }

    #[test]
    fn json_is_script_safe() {
        let j = json_strings(["a\"b", "</script>", "\n"].into_iter());
        assert_eq!(j, r#"["a\"b","\u003c/script\u003e","\n"]"#);
    }
}
