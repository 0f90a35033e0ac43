//! Making untrusted strings (kernel names, scope sites, file names, run messages) inert in the
//! HTML reports: one escaper for element text and attribute values, one for JSON data inside an
//! inline `<script>`. Both HTML tools use these and nothing else.

use serde::Serialize;

/// Escapes `&`, `<`, `>`, `"` and `'`: safe in element text and in quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// `value` as JSON that is safe inside an inline `<script>` element: `<`, `>` and `&` are
/// written as `\u003c`, `\u003e`, `\u0026` (so no `</script>`, `<!--` or `<script` can change
/// how the HTML parser reads the element), and U+2028/U+2029 as `\u2028`/`\u2029`. These
/// characters only occur inside JSON strings, where the escapes mean the same characters.
pub fn script_json<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<String> {
    let json = serde_json::to_string(value)?;
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_and_attributes() {
        assert_eq!(
            escape(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn script_data_cannot_open_or_close_anything_and_round_trips() {
        let names = vec![
            "<!--<script>",
            "</script><b>",
            "a&b",
            "line\u{2028}sep\u{2029}",
            "ok",
        ];
        let s = script_json(&names).unwrap();
        for bad in ["<", ">", "&", "\u{2028}", "\u{2029}"] {
            assert!(!s.contains(bad), "{bad:?} in {s}");
        }
        let back: Vec<String> = serde_json::from_str(&s).unwrap();
        assert_eq!(back, names);
    }
}
