//! Helpers for the tests of the crates that look for runs' files under a folder (hidden from the
//! docs): a file with a fixed modification time, so which one is newer does not depend on how
//! fast a test runs, and the smallest `run.json` a reader takes.

use std::path::Path;
use std::time::{Duration, SystemTime};

/// Writes `text` to `path` (creating its folder) with a modification time `secs` seconds after
/// a fixed instant. Panics on any error: for tests only.
#[doc(hidden)]
pub fn put(path: &Path, text: &str, secs: u64) {
    std::fs::create_dir_all(path.parent().expect("a file in a folder")).unwrap();
    std::fs::write(path, text).unwrap();
    let t = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000 + secs);
    let file = std::fs::File::options().write(true).open(path).unwrap();
    file.set_modified(t).unwrap();
}

/// A minimal `run.json` of a run with `status` (`completed`, `running`, ...) and the diagnostics
/// `diagnostics` (the JSON array's text, `[]` for none).
#[doc(hidden)]
pub fn run_json(status: &str, diagnostics: &str) -> String {
    format!(
        r#"{{"schema":1,"run_id":"r","runtime":"tmr","subject":"s","started":"2026-12-01T00:00:00.000Z","status":"{status}","diagnostics":{diagnostics}}}"#
    )
}

/// A tmpfs of `size` (`"256k"`) mounted at `dir/name`, for a test of a real full disk, where
/// this machine lets a test mount one (root with CAP_SYS_ADMIN); `None`, after saying the test
/// skipped, elsewhere. The caller unmounts it.
#[doc(hidden)]
pub fn mount_tmpfs(dir: &Path, name: &str, size: &str) -> Option<std::path::PathBuf> {
    let mnt = dir.join(name);
    std::fs::create_dir(&mnt).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
        .arg(&mnt)
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        crate::errln!("skipped: cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)");
        return None;
    }
    Some(mnt)
}

/// The names of the entries of `dir`, sorted: what a test expects a folder to hold.
#[doc(hidden)]
pub fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}
