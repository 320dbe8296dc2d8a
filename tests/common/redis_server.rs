//! A private `redis-server` for the queue tests and the queue bench. Included by path
//! (`#[path = ".../tests/common/redis_server.rs"] mod redis_server;`).

#![allow(dead_code)]

use std::net::TcpListener;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How the server writes its append-only file.
#[derive(Clone, Copy)]
pub enum Fsync {
    /// Synced on every write: a SIGKILL loses nothing acknowledged (the tests).
    Always,
    /// Synced once a second (the benches: throughput, not crash safety).
    EverySec,
}

/// A `redis-server` of a test's or bench's own: private port, temporary directory,
/// append-only file.
pub struct Redis {
    child: Option<Child>,
    port: u16,
    dir: tempfile::TempDir,
    fsync: Fsync,
}

impl Redis {
    pub fn start(fsync: Fsync) -> Redis {
        let mut redis = Redis {
            child: None,
            port: 0,
            dir: tempfile::tempdir().unwrap(),
            fsync,
        };
        // A port picked free can be taken before redis-server binds it: pick again.
        for _ in 0..5 {
            redis.port = TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            match redis.launch() {
                Ok(()) => return redis,
                Err(e) => eprintln!("{e}; trying another port"),
            }
        }
        panic!("redis-server did not start on any of 5 ports");
    }

    /// Starts redis-server on `self.port` and waits until it is the server answering
    /// there (not another test's, which a taken port would reach).
    pub fn launch(&mut self) -> Result<(), String> {
        let program = std::env::var("PYWARD_REDIS_SERVER").unwrap_or("redis-server".into());
        let child = Command::new(&program)
            .args(["--bind", "127.0.0.1", "--port", &self.port.to_string()])
            .arg("--dir")
            .arg(self.dir.path())
            .args(["--appendonly", "yes", "--save", ""])
            .args(["--appendfsync", match self.fsync {
                Fsync::Always => "always",
                Fsync::EverySec => "everysec",
            }])
            .stdout(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| {
                panic!("{program}: {e} (`make test` installs redis-server; or set PYWARD_REDIS_SERVER)")
            });
        let pid = child.id();
        self.child = Some(child);
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(10) {
            if self.server_pid() == Some(pid) {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        let answering = self.server_pid();
        self.kill();
        Err(format!(
            "redis-server {pid} did not start on port {} (answering: {answering:?})",
            self.port
        ))
    }

    /// The pid of the server answering on this port.
    fn server_pid(&self) -> Option<u32> {
        let info: String = redis::cmd("INFO")
            .arg("server")
            .query(&mut self.connect().ok()?)
            .ok()?;
        info.lines()
            .find_map(|l| l.strip_prefix("process_id:"))
            .and_then(|p| p.trim().parse().ok())
    }

    /// Stops the server (SIGKILL: nothing but the append-only file survives).
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    pub fn connect(&self) -> redis::RedisResult<redis::Connection> {
        redis::Client::open(self.url())?.get_connection()
    }

    /// Runs one command on a new connection; panics on any error.
    pub fn cmd<T: redis::FromRedisValue>(&self, cmd: &mut redis::Cmd) -> T {
        cmd.query(&mut self.connect().unwrap()).unwrap()
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        self.kill();
    }
}
