//! The `simpler` binary: the command line of `src/lib.rs`, with the interrupt handler.

use std::process::ExitCode;

fn main() -> ExitCode {
    ExitCode::from(simpler::main_with(std::env::args_os(), true))
}
