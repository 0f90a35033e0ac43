//! Stand-alone `swimlane` for development and memory measurements: `cargo run --release -p
//! simpler-swimlane --example swimlane -- [ARGS]`. Same flags as `simpler swimlane`; exits 1
//! with the error chain on stderr.

use std::process::ExitCode;

use clap::Parser;

#[derive(Parser)]
#[command(name = "swimlane")]
struct Cli {
    #[command(flatten)]
    args: simpler_swimlane::Args,
}

fn main() -> ExitCode {
    match simpler_swimlane::run(Cli::parse().args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
