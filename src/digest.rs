//! Content digests: what records and reports name artifacts and inputs by.

use sha2::{Digest, Sha256};

/// Hex sha256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
