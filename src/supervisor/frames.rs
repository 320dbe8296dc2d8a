//! The host's end of a worker's answer pipe: frames read on the slot's own thread, each
//! bounded by what the reader expects next, with nothing read ahead.
//!
//! A reader thread that pulls frames into a queue would buffer whatever the worker
//! writes, before anyone knows whether a frame is a message or the third of two
//! artifacts: a job that reached its descriptors could fill the host's memory. Here the
//! pipe is non-blocking and read only when the slot asks for a frame, with the largest
//! length it accepts at that point (see `protocol::answer`), so a worker never gets more
//! of the host's memory than the frame being read.

use std::fs::File;
use std::io::{self, Read};
use std::time::Instant;

use crate::protocol::answer::{FrameError, FrameSource};

/// Frames from one worker's answer pipe.
pub(crate) struct FrameReader {
    pipe: File,
    /// The length prefix of the frame being read, as much of it as has arrived.
    head: [u8; 4],
    head_len: usize,
    /// The frame's bytes once its length was accepted, and how many have arrived.
    body: Option<(Vec<u8>, usize)>,
}

impl FrameReader {
    /// Reads frames from `pipe` (made non-blocking here: the host's end is its own).
    pub(crate) fn new(pipe: File) -> io::Result<FrameReader> {
        crate::sys::set_nonblocking(&pipe)?;
        Ok(FrameReader {
            pipe,
            head: [0; 4],
            head_len: 0,
            body: None,
        })
    }

    /// Whether the worker wrote anything (or closed its end) that nobody has read: an
    /// idle worker has nothing to say, so such a worker is not given a job.
    pub(crate) fn has_unread(&mut self) -> bool {
        self.head_len > 0
            || self.body.is_some()
            || crate::sys::wait_readable(&self.pipe, std::time::Duration::ZERO).unwrap_or(true)
    }

    /// Reads what is available into the frame being assembled; `Ok(true)` once it is
    /// whole.
    fn fill(&mut self, max: usize) -> Result<bool, FrameError> {
        loop {
            if let Some((buf, filled)) = &mut self.body {
                if *filled == buf.len() {
                    return Ok(true);
                }
                match read_some(&mut self.pipe, &mut buf[*filled..])? {
                    Some(n) => *filled += n,
                    None => return Ok(false),
                }
                continue;
            }
            if self.head_len == 4 {
                let len = u32::from_le_bytes(self.head) as usize;
                if len > max {
                    return Err(FrameError::TooLarge { len, max });
                }
                // Zeroed memory is mapped lazily: the host's resident memory grows
                // only with the bytes that really arrive.
                self.body = Some((vec![0; len], 0));
                continue;
            }
            match read_some(&mut self.pipe, &mut self.head[self.head_len..])? {
                Some(n) => self.head_len += n,
                None => return Ok(false),
            }
        }
    }

    fn take(&mut self) -> Vec<u8> {
        self.head_len = 0;
        self.body.take().map(|(buf, _)| buf).unwrap_or_default()
    }
}

impl FrameSource for FrameReader {
    fn next_frame(&mut self, max: usize, deadline: Instant) -> Result<Vec<u8>, FrameError> {
        loop {
            if self.fill(max)? {
                return Ok(self.take());
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(FrameError::Timeout);
            }
            crate::sys::wait_readable(&self.pipe, deadline - now)
                .map_err(|e| FrameError::Closed(format!("waiting for the worker: {e}")))?;
        }
    }
}

/// One non-blocking read: `Some(n)` bytes (n > 0), `None` when nothing is there yet; the
/// end of the pipe is an error (a worker never closes it between frames and lives on).
fn read_some(pipe: &mut File, buf: &mut [u8]) -> Result<Option<usize>, FrameError> {
    loop {
        return match pipe.read(buf) {
            Ok(0) => Err(FrameError::Closed("the worker closed its pipe".into())),
            Ok(n) => Ok(Some(n)),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => Err(FrameError::Closed(format!("reading from the worker: {e}"))),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::time::Duration;

    fn pair() -> (FrameReader, File) {
        let (r, w) = crate::sys::pipe().unwrap();
        (FrameReader::new(File::from(r)).unwrap(), File::from(w))
    }

    #[test]
    fn frames_arrive_in_pieces_across_deadlines() {
        let (mut reader, mut w) = pair();
        let soon = || Instant::now() + Duration::from_millis(20);
        assert!(!reader.has_unread());
        w.write_all(&[5, 0]).unwrap();
        assert!(matches!(
            reader.next_frame(16, soon()),
            Err(FrameError::Timeout)
        ));
        assert!(reader.has_unread());
        w.write_all(&[0, 0, b'h', b'e']).unwrap();
        assert!(matches!(
            reader.next_frame(16, soon()),
            Err(FrameError::Timeout)
        ));
        w.write_all(b"llo").unwrap();
        assert_eq!(reader.next_frame(16, soon()).unwrap(), b"hello");
        assert!(!reader.has_unread());
    }

    #[test]
    fn a_long_frame_is_refused_by_its_prefix_and_the_end_is_closed() {
        let (mut reader, mut w) = pair();
        w.write_all(&u32::MAX.to_le_bytes()).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        assert!(matches!(
            reader.next_frame(1 << 20, deadline),
            Err(FrameError::TooLarge { .. })
        ));
        let (mut reader, w) = pair();
        drop(w);
        assert!(reader.has_unread());
        assert!(matches!(
            reader.next_frame(16, deadline),
            Err(FrameError::Closed(_))
        ));
    }
}
