//! The worker program pyward starts; `cargo build` puts it next to `downstream`.

fn main() -> std::process::ExitCode {
    pyward::worker::main()
}
