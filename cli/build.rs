//! The page at `/` is embedded from `web/dist` (see `src/serve/page.rs`); a new build
//! of it (new hashed file names) must rebuild the binary.

fn main() {
    println!("cargo:rerun-if-changed=web/dist");
}
