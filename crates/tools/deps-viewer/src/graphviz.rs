//! Runs a Graphviz layout program (`dot`, `sfdp`, ...) to turn DOT into SVG.

use std::io::{self, Read, Write};
use std::process::{Command, Stdio};
use std::thread;

use crate::{Error, ErrorKind};

/// The address-space limit a Graphviz program runs under: half of this machine's memory
/// (`MemTotal`), so a layout too big for the host fails with a message instead of exhausting it.
pub fn memory_limit() -> Option<u64> {
    simpler_artifacts::host::mem_total_bytes().map(|b| b / 2)
}

/// True when `program` is an executable file on `PATH` (or a path to one).
fn on_path(program: &str) -> bool {
    if program.contains('/') {
        return std::path::Path::new(program).is_file();
    }
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
}

/// Lays out `dot` with `program -Tsvg` and returns the SVG document (from its `<svg` tag on).
///
/// A program that cannot be found is [`ErrorKind::GraphvizNotFound`], which says how to install
/// Graphviz. The program runs under [`memory_limit`], or the process's own limit when that is
/// lower (through `sh -c 'ulimit -v ..'`); running
/// out of it is [`ErrorKind::GraphvizOutOfMemory`], which suggests a smaller view.
pub fn render_svg(program: &str, dot: &str) -> Result<String, Error> {
    render_svg_limited(program, dot, memory_limit())
}

/// [`render_svg`] with an explicit address-space limit in bytes (`None`: unlimited).
pub fn render_svg_limited(program: &str, dot: &str, limit: Option<u64>) -> Result<String, Error> {
    let program_name = || program.to_string();
    let not_found = || ErrorKind::GraphvizNotFound {
        program: program_name(),
    };
    let pipe = |stream| ErrorKind::GraphvizPipe {
        program: program_name(),
        stream,
    };
    if !on_path(program) {
        return Err(not_found().into());
    }
    let mut command = match limit {
        Some(bytes) => {
            let mut c = Command::new("sh");
            // Lowered only: a limit the caller's shell already set below it stays (raising a
            // hard limit is refused, found by a review: every layout failed under
            // `ulimit -v` below MemTotal/2, blamed on Graphviz).
            c.args([
                "-c",
                "cur=$(ulimit -v); if [ \"$cur\" = unlimited ] || [ \"$cur\" -gt \"$1\" ]; then \
                 ulimit -v \"$1\" || exit 125; fi; exec \"$0\" -Tsvg",
                program,
                &(bytes / 1024).to_string(),
            ]);
            c
        }
        None => {
            let mut c = Command::new(program);
            c.arg("-Tsvg");
            c
        }
    };
    let mut child = match command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(not_found().into()),
        Err(source) => {
            return Err(ErrorKind::GraphvizStart {
                program: program_name(),
                source,
            }
            .into());
        }
    };
    // Feed stdin from a thread: Graphviz may start writing before it has read everything.
    let mut stdin = child.stdin.take().ok_or_else(|| pipe("stdin"))?;
    let input = dot.to_owned();
    let writer = thread::spawn(move || stdin.write_all(input.as_bytes()));
    let mut stderr = child.stderr.take().ok_or_else(|| pipe("stderr"))?;
    let err_reader = thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut svg = String::new();
    child
        .stdout
        .take()
        .ok_or_else(|| pipe("stdout"))?
        .read_to_string(&mut svg)
        .map_err(|source| ErrorKind::GraphvizRead {
            program: program_name(),
            source,
        })?;
    let status = child.wait().map_err(ErrorKind::GraphvizWait)?;
    let errors = err_reader.join().unwrap_or_default();
    let fed = writer.join();
    if !status.success() {
        let out_of_memory = errors.contains("out of memory") || errors.contains("alloc");
        let stderr = errors.trim().to_string();
        if let (true, Some(limit)) = (out_of_memory || status.code().is_none(), limit) {
            return Err(ErrorKind::GraphvizOutOfMemory {
                program: program_name(),
                limit,
                status,
                stderr,
            }
            .into());
        }
        return Err(ErrorKind::GraphvizFailed {
            program: program_name(),
            status,
            stderr,
        }
        .into());
    }
    if let Ok(Err(source)) = fed {
        return Err(ErrorKind::GraphvizWrite {
            program: program_name(),
            source,
        }
        .into());
    }
    match svg.find("<svg") {
        Some(start) => Ok(svg.split_off(start)),
        None => Err(ErrorKind::GraphvizNoSvg {
            program: program_name(),
        }
        .into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_layout_past_the_memory_limit_fails_with_a_suggestion() {
        if !on_path("dot") {
            simpler_artifacts::errln!("skipped: Graphviz is not installed");
            return;
        }
        // A complete graph of 300 nodes needs far more than 64 MiB.
        let mut text = String::from("digraph {");
        for a in 0..300 {
            for b in (a + 1)..300 {
                text.push_str(&format!("n{a}->n{b};"));
            }
        }
        text.push('}');
        let err = render_svg_limited("dot", &text, Some(64 << 20))
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("Graphviz `dot` ran out of its memory limit (64 MiB"),
            "{err}"
        );
        assert!(
            err.ends_with("Use --engine sfdp, or show one task's neighbourhood with --focus TASK --depth K")
        );
        let small = render_svg_limited("dot", "digraph { a -> b }", Some(256 << 20)).unwrap();
        assert!(small.starts_with("<svg"));
    }

    #[test]
    fn missing_program_says_how_to_install_graphviz() {
        let err = render_svg("simpler-no-such-graphviz-program", "digraph {}")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "Graphviz `simpler-no-such-graphviz-program` was not found on PATH; the HTML view \
             needs it. Install Graphviz (Debian/Ubuntu: `apt-get install graphviz`), or use the \
             text view (--format text), which needs no Graphviz"
        );
    }
}
