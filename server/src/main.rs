//! The `quiescent` binary: see `quiescent --help`.

fn main() -> std::process::ExitCode {
    quiescent::cli::main()
}
