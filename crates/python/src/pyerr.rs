//! A Python exception as the text of a fatal: `"KeyError: 'missing' (at k.py:8 in lookup)"`,
//! the location being the innermost traceback frame outside the `simpler` package (the user's
//! line, not the wrapper's), so that the run's message says where it was raised.

use pyo3::prelude::*;

/// `"TypeError: message (at file.py:12 in func)"` for a Python exception: the location is the
/// innermost frame of its traceback outside the `simpler` package (else the innermost frame).
pub fn python_error_text(py: Python<'_>, err: &PyErr) -> String {
    let ty = err
        .get_type(py)
        .qualname()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "Exception".into());
    match innermost_frame(py, err) {
        Some(at) => format!("{ty}: {} (at {at})", err.value(py)),
        None => format!("{ty}: {}", err.value(py)),
    }
}

/// `"file.py:12 in func"` of the innermost traceback frame of `err` outside the package.
fn innermost_frame(py: Python<'_>, err: &PyErr) -> Option<String> {
    // A `PyOnceLock`: it waits for another thread's initialization without holding the GIL.
    static PACKAGE: pyo3::sync::PyOnceLock<String> = pyo3::sync::PyOnceLock::new();
    let package = PACKAGE.get_or_init(py, || {
        let file = py
            .import("simpler")
            .and_then(|m| m.getattr("__file__")?.extract::<String>())
            .unwrap_or_default();
        let dir = file.rsplit_once(['/', '\\']).map_or("", |(d, _)| d);
        format!("{dir}{}", std::path::MAIN_SEPARATOR)
    });
    let mut tb = err.traceback(py).map(|t| t.into_any());
    let (mut inner, mut outside) = (None, None);
    while let Some(t) = tb.filter(|t| !t.is_none()) {
        let at = (|| -> PyResult<(String, String)> {
            let code = t.getattr("tb_frame")?.getattr("f_code")?;
            let file: String = code.getattr("co_filename")?.extract()?;
            let line: u32 = t.getattr("tb_lineno")?.extract()?;
            let func: String = code.getattr("co_name")?.extract()?;
            let base = file.rsplit(['/', '\\']).next().unwrap_or(&file);
            Ok((format!("{base}:{line} in {func}"), file))
        })();
        if let Ok((at, file)) = at {
            if package.len() <= 1 || !file.starts_with(package.as_str()) {
                outside = Some(at.clone());
            }
            inner = Some(at);
        }
        tb = t.getattr("tb_next").ok();
    }
    outside.or(inner)
}
