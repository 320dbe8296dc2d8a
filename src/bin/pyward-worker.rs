//! The worker program the pyward supervisor spawns; not meant to be run by hand.

fn main() -> std::process::ExitCode {
    pyward::worker::main()
}
