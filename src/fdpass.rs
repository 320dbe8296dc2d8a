//! Descriptor passing over Unix stream sockets (`SCM_RIGHTS`, unix(7)).
//!
//! Two uses: the supervisor hands the zygote the pipes of a worker to fork, and hands a
//! worker the sealed shared memory of a job's arrays ([`crate::SharedArray`]). In both
//! cases the descriptors travel with the first byte of one protocol frame, so the
//! receiver has them by the time it has read that frame: Linux stops a stream read at
//! a message that carries descriptors and returns them with its data.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};

/// Most descriptors one frame may carry (a job's arrays; a fork's three pipes).
pub const MAX_FDS: usize = crate::sys::MAX_FDS;

/// Writes `frame` with `fds` attached to its first byte: one sendmsg(2), then the rest
/// of the frame (if the socket took only part of it) as plain data.
pub fn send<S>(sock: &S, frame: &[u8], fds: &[RawFd]) -> io::Result<()>
where
    S: AsRawFd,
    for<'a> &'a S: Write,
{
    let sent = crate::sys::send_with_fds(sock.as_raw_fd(), frame, fds)?;
    if sent < frame.len() {
        // The descriptors went with the first byte; the rest is plain data.
        let mut sock = sock;
        sock.write_all(&frame[sent..])?;
    }
    Ok(())
}

/// A reader over a Unix stream socket that keeps the descriptors arriving with the
/// data, in order, until the protocol layer claims them with [`FdReader::take_fds`].
pub struct FdReader {
    sock: File,
    fds: VecDeque<OwnedFd>,
}

impl FdReader {
    /// Reads from `sock` (a Unix stream socket; on anything else recvmsg(2) fails).
    pub fn new(sock: File) -> FdReader {
        FdReader {
            sock,
            fds: VecDeque::new(),
        }
    }

    /// The descriptors received so far and not yet taken, in arrival order, when there
    /// are exactly `n` of them; otherwise they are all closed and `None` is returned
    /// (a frame promised descriptors that did not come, or brought extra ones).
    pub fn take_fds(&mut self, n: usize) -> Option<Vec<OwnedFd>> {
        let fds: Vec<OwnedFd> = self.fds.drain(..).collect();
        (fds.len() == n).then_some(fds)
    }

    /// The socket descriptor.
    pub fn as_raw_fd(&self) -> RawFd {
        self.sock.as_raw_fd()
    }
}

impl Read for FdReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let (got, truncated) =
            crate::sys::recv_with_fds(self.sock.as_raw_fd(), buf, &mut self.fds)?;
        if truncated {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("more than {MAX_FDS} descriptors in one frame"),
            ));
        }
        Ok(got)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufReader;
    use std::os::unix::net::UnixStream;

    #[test]
    fn descriptors_arrive_with_their_frame_and_in_order() {
        let (a, b) = UnixStream::pair().unwrap();
        let (a, b) = (File::from(OwnedFd::from(a)), File::from(OwnedFd::from(b)));
        let passed: Vec<File> = (0..3).map(|_| tempfile::tempfile().unwrap()).collect();
        for (i, f) in passed.iter().enumerate() {
            (&*f).write_all(&[b'0' + i as u8]).unwrap();
        }
        let raw: Vec<RawFd> = passed.iter().map(|f| f.as_raw_fd()).collect();
        send(&a, b"first", &[]).unwrap();
        send(&a, b"second", &raw).unwrap();
        let mut r = BufReader::new(FdReader::new(b));
        let mut got = [0u8; 5];
        r.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"first");
        let mut got = [0u8; 6];
        r.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"second");
        let fds = r.get_mut().take_fds(3).expect("three descriptors");
        for (i, fd) in fds.into_iter().enumerate() {
            let mut f = File::from(fd);
            let mut s = String::new();
            std::io::Seek::rewind(&mut f).unwrap();
            f.read_to_string(&mut s).unwrap();
            assert_eq!(s, i.to_string());
        }
        assert!(r.get_mut().take_fds(0).is_some(), "nothing left over");
    }

    #[test]
    fn a_frame_with_too_many_or_too_few_descriptors_is_refused() {
        let (a, b) = UnixStream::pair().unwrap();
        let (a, b) = (File::from(OwnedFd::from(a)), File::from(OwnedFd::from(b)));
        let f = tempfile::tempfile().unwrap();
        send(&a, b"x", &[f.as_raw_fd(), f.as_raw_fd()]).unwrap();
        let mut r = FdReader::new(b);
        let mut got = [0u8; 1];
        r.read_exact(&mut got).unwrap();
        assert!(
            r.take_fds(1).is_none(),
            "two arrived where one was promised"
        );
        assert!(r.take_fds(0).is_some(), "and they were closed, not kept");
        let too_many = vec![f.as_raw_fd(); MAX_FDS + 1];
        assert!(send(&a, b"y", &too_many).is_err());
    }
}
