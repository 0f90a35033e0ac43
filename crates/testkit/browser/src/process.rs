//! The chromedriver process: locating binaries, starting it on a free loopback port with a
//! private work directory, sending it commands, and killing it (with its process group) on drop.

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::{http, Error, Result};

/// How long chromedriver may take to answer `/status` as ready after it is spawned.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(30);

/// Distinguishes work directories of several browsers started by one test process.
static NEXT_DIR: AtomicU32 = AtomicU32::new(0);

/// Returns true if and only if the `CI` environment variable is set to a non-empty value.
pub(crate) fn in_ci() -> bool {
    std::env::var_os("CI").is_some_and(|v| !v.is_empty())
}

/// Finds a binary: the override variable `env` if set, else `/usr/bin/<name>`, else `PATH`.
pub(crate) fn find_binary(env: &str, names: &[&str]) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(env).filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<PathBuf> = std::iter::once(PathBuf::from("/usr/bin"))
        .chain(std::env::split_paths(&path))
        .collect();
    names
        .iter()
        .flat_map(|n| dirs.iter().map(move |d| d.join(n)))
        .find(|p| p.is_file())
}

/// A running chromedriver plus the temporary directory holding its log and the browser
/// profile. Dropping it kills the process group and removes the directory.
pub(crate) struct Driver {
    child: Child,
    port: u16,
    work_dir: PathBuf,
}

impl Driver {
    /// Spawns chromedriver in its own process group and waits until it reports ready.
    pub(crate) fn start(binary: &Path) -> Result<Driver> {
        let work_dir = std::env::temp_dir().join(format!(
            "simpler-browser-{}-{}-{}",
            std::process::id(),
            NEXT_DIR.fetch_add(1, Ordering::Relaxed),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or_default()
        ));
        std::fs::create_dir_all(work_dir.join("profile"))
            .map_err(|e| Error::new(format!("{}: {e}", work_dir.display())))?;
        let port = free_port()?;
        let child = Command::new(binary)
            .arg(format!("--port={port}"))
            .arg(format!(
                "--log-path={}",
                work_dir.join("chromedriver.log").display()
            ))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .map_err(|e| Error::new(format!("spawn {}: {e}", binary.display())));
        let child = match child {
            Ok(c) => c,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&work_dir);
                return Err(e);
            }
        };
        let mut driver = Driver {
            child,
            port,
            work_dir,
        };
        driver.wait_ready()?;
        Ok(driver)
    }

    fn wait_ready(&mut self) -> Result<()> {
        let deadline = Instant::now() + STARTUP_TIMEOUT;
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(self.with_log(Error::new(format!(
                    "chromedriver exited during startup ({status})"
                ))));
            }
            if let Ok(v) = self.command("GET", "/status", None) {
                if v["ready"] == Value::Bool(true) {
                    return Ok(());
                }
            }
            if Instant::now() >= deadline {
                return Err(self.with_log(Error::new(format!(
                    "chromedriver not ready after {} s",
                    STARTUP_TIMEOUT.as_secs()
                ))));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The fresh Chromium profile directory (`--user-data-dir`).
    pub(crate) fn profile_dir(&self) -> PathBuf {
        self.work_dir.join("profile")
    }

    /// Appends the tail of chromedriver's log to an error, to explain startup failures.
    pub(crate) fn with_log(&self, e: Error) -> Error {
        let log = std::fs::read_to_string(self.work_dir.join("chromedriver.log")).unwrap_or_default();
        let lines: Vec<&str> = log.lines().collect();
        let tail = lines[lines.len().saturating_sub(15)..].join("\n");
        if tail.is_empty() {
            e
        } else {
            Error::new(format!("{e}\nchromedriver log (tail):\n{tail}"))
        }
    }

    /// Sends one WebDriver command and returns the reply's `value`, or an error carrying the
    /// WebDriver error code and message.
    pub(crate) fn command(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Value> {
        let resp = http::request(self.port, method, path, body)?;
        let json: Value = serde_json::from_slice(&resp.body).map_err(|e| {
            Error::new(format!(
                "{method} {path}: HTTP {} with non-JSON body ({e}): {}",
                resp.status,
                String::from_utf8_lossy(&resp.body)
            ))
        })?;
        let value = json.get("value").cloned().unwrap_or(Value::Null);
        if resp.status >= 400 || value.get("error").is_some() {
            return Err(Error::new(format!(
                "{method} {path}: HTTP {}: {}: {}",
                resp.status,
                value["error"].as_str().unwrap_or("unknown error"),
                value["message"].as_str().unwrap_or_default()
            )));
        }
        Ok(value)
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        // chromedriver leads its own process group (process_group(0) above), so the group id is
        // its pid: this reaches chromium too if the session could not be deleted cleanly.
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.work_dir);
    }
}

/// A currently free TCP port on 127.0.0.1 (bound then released, so a tiny race remains).
fn free_port() -> Result<u16> {
    let listener =
        TcpListener::bind(("127.0.0.1", 0)).map_err(|e| Error::new(format!("bind a loopback port: {e}")))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| Error::new(format!("local_addr: {e}")))
}
