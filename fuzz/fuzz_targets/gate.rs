//! The gate faces the attacker first: any bytes must give a verdict or a typed
//! `BadInput`, never a panic, a hang or a stack overflow.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pyward::gate::{check_bytes, Policy};

fuzz_target!(|data: &[u8]| {
    let _ = check_bytes(data, &Policy::figures());
});
