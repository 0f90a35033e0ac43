//! Stand-alone `deps-viewer` for development: `cargo run -p simpler-deps-viewer --example
//! deps_viewer -- [ARGS]`. Same flags and exit codes as `simpler deps-viewer`.

use std::process::ExitCode;

use clap::Parser;

#[derive(Parser)]
#[command(name = "deps-viewer")]
struct Cli {
    #[command(flatten)]
    args: simpler_deps_viewer::Args,
}

fn main() -> ExitCode {
    match simpler_deps_viewer::run(Cli::parse().args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => match e.downcast_ref::<clap::Error>() {
            Some(usage) => {
                let _ = usage.print();
                ExitCode::from(usage.exit_code() as u8)
            }
            None => {
                eprintln!("error: {e:#}");
                ExitCode::FAILURE
            }
        },
    }
}
