//! Runs a Graphviz layout program (`dot`, `sfdp`, ...) to turn DOT into SVG.

use std::io::{self, Read, Write};
use std::process::{Command, Stdio};
use std::thread;

use anyhow::{bail, Context};

/// Lays out `dot` with `program -Tsvg` and returns the SVG document (from its `<svg` tag on).
///
/// A program that cannot be found is an error that says how to install Graphviz.
pub fn render_svg(program: &str, dot: &str) -> anyhow::Result<String> {
    let mut child = match Command::new(program)
        .arg("-Tsvg")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(child) => child,
        Err(e) if e.kind() == io::ErrorKind::NotFound => bail!(
            "Graphviz `{program}` was not found on PATH; the HTML view needs it. Install \
             Graphviz (Debian/Ubuntu: `apt-get install graphviz`), or use the text view \
             (--format text), which needs no Graphviz"
        ),
        Err(e) => {
            return Err(e).with_context(|| format!("cannot start Graphviz `{program}`"));
        }
    };
    // Feed stdin from a thread: Graphviz may start writing before it has read everything.
    let mut stdin = child.stdin.take().context("Graphviz stdin")?;
    let input = dot.to_owned();
    let writer = thread::spawn(move || stdin.write_all(input.as_bytes()));
    let mut stderr = child.stderr.take().context("Graphviz stderr")?;
    let err_reader = thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let mut svg = String::new();
    child
        .stdout
        .take()
        .context("Graphviz stdout")?
        .read_to_string(&mut svg)
        .with_context(|| format!("reading the output of Graphviz `{program}`"))?;
    let status = child.wait()?;
    let errors = err_reader.join().unwrap_or_default();
    let fed = writer.join();
    if !status.success() {
        bail!("Graphviz `{program}` failed ({status}): {}", errors.trim());
    }
    if let Ok(Err(e)) = fed {
        return Err(e).with_context(|| format!("writing DOT to Graphviz `{program}`"));
    }
    match svg.find("<svg") {
        Some(start) => Ok(svg.split_off(start)),
        None => bail!("Graphviz `{program}` produced no SVG"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
