//! The supervisor reads frames a compromised worker writes: any bytes must decode to a
//! message or an error, never a panic or an allocation the frame length did not earn.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pyward::protocol::{decode, read_frame, HostMsg, WorkerMsg};

fuzz_target!(|data: &[u8]| {
    let mut reader = data;
    // A small frame limit, so that a lying length prefix is refused, not allocated.
    while let Ok(Some(frame)) = read_frame(&mut reader, 1 << 16) {
        let _ = decode::<WorkerMsg>(&frame);
        let _ = decode::<HostMsg>(&frame);
    }
    let _ = decode::<WorkerMsg>(data);
});
