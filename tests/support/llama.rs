//! A real `llama-server` (llama.cpp) for the tests and the bench that
//! talk to a real model server: the binary and model `scripts/test`
//! builds, started on a free loopback port, killed on drop.

// Each user of this module uses a different part of it.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The built server and model (`scripts/test` exports both).
pub fn installed() -> (PathBuf, PathBuf) {
    let find = |var: &str, relative: &str| {
        std::env::var_os(var).map(PathBuf::from).or_else(|| {
            let deps = std::env::var_os("HELLO_TUI_TEST_DEPS").map(PathBuf::from)?;
            Some(deps.join(relative))
        })
    };
    let server = find("HELLO_TUI_LLAMA_SERVER", "llama-server/llama-server");
    let model = find(
        "HELLO_TUI_LLAMA_MODEL",
        "models/SmolLM2-135M-Instruct.Q4_1.gguf",
    );
    match (server, model) {
        (Some(server), Some(model)) if server.exists() && model.exists() => (server, model),
        _ => panic!(
            "llama-server or its model is not installed: run scripts/test (it builds both into \
             $HELLO_TUI_TEST_DEPS), or set HELLO_TUI_LLAMA_SERVER and HELLO_TUI_LLAMA_MODEL"
        ),
    }
}

/// A running `llama-server` on a free loopback port, killed on drop.
pub struct LlamaServer {
    child: Child,
    pub port: u16,
    pub base_url: String,
}

impl LlamaServer {
    /// Starts it with a context of `ctx` tokens and answers of at most
    /// `predict` tokens, and waits until it serves.
    pub fn start(ctx: usize, predict: usize) -> Self {
        Self::with_slots(ctx, predict, 1)
    }

    /// As [`Self::start`], with `slots` parallel slots (`-np`): each gets
    /// its share of `ctx`.
    pub fn with_slots(ctx: usize, predict: usize, slots: usize) -> Self {
        let (server, model) = installed();
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = Command::new(server)
            .args(["-m", &model.to_string_lossy(), "--host", "127.0.0.1"])
            .args(["--port", &port.to_string(), "-c", &ctx.to_string()])
            .args([
                "-n",
                &predict.to_string(),
                "-np",
                &slots.to_string(),
                "-t",
                "2",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("llama-server starts");
        let server = LlamaServer {
            child,
            port,
            base_url: format!("http://127.0.0.1:{port}"),
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if get(server.port, "/health").is_some_and(|h| h["status"] == "ok") {
                return server;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        panic!("llama-server did not become ready within 60 s");
    }
}

impl Drop for LlamaServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// GETs `path` of the server on `port` as JSON, over a plain socket (an
/// HTTP/1.0 request: the answer ends when the server closes).
pub fn get(port: u16, path: &str) -> Option<Value> {
    use std::io::{Read, Write};
    let mut socket = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    socket.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(socket, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut answer = String::new();
    socket.read_to_string(&mut answer).ok()?;
    serde_json::from_str(answer.split_once("\r\n\r\n")?.1).ok()
}
