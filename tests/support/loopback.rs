//! A tiny HTTP/1.1 server on 127.0.0.1 that plays scripted replies, one per
//! connection, speaking the real wire format (status line, headers,
//! chunked or close-delimited bodies) and recording every request. It
//! serves exactly as many connections as it has replies (or, made with
//! [`LoopbackServer::respond_with`], answers each request with a function
//! of it), and gives up on its own after a deadline, so a failing test
//! never hangs.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

const DEADLINE: Duration = Duration::from_secs(30);

/// One piece of a response body.
#[derive(Debug, Clone)]
pub enum Part {
    Bytes(Vec<u8>),
    Pause(Duration),
    /// Stop sending and keep the connection open until the client closes it.
    HoldOpen,
    /// Drop the connection right here, without finishing the body.
    Cut,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// `Transfer-Encoding: chunked`, one HTTP chunk per `Part::Bytes`.
    Chunked,
    /// No length: the body ends when the server closes the connection.
    Close,
    /// `Content-Length` of all the bytes parts.
    Length,
}

#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub framing: Framing,
    pub body: Vec<Part>,
}

impl Reply {
    pub fn sse(framing: Framing, body: Vec<Part>) -> Self {
        Reply {
            status: 200,
            headers: vec![("Content-Type".into(), "text/event-stream".into())],
            framing,
            body,
        }
    }

    pub fn status(status: u16, headers: &[(&str, &str)], body: &str) -> Self {
        Reply {
            status,
            headers: headers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            framing: Framing::Length,
            body: vec![Part::Bytes(body.as_bytes().to_vec())],
        }
    }
}

#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Names lowercased.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == &name.to_ascii_lowercase())
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("request body is JSON")
    }
}

/// Requests being answered now, and the most there ever were at once
/// (counted by [`LoopbackServer::respond_with`] servers).
#[derive(Debug, Default)]
struct OpenCount {
    now: AtomicUsize,
    max: AtomicUsize,
}

impl OpenCount {
    fn open(&self) {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.max.fetch_max(now, Ordering::SeqCst);
    }

    fn close(&self) {
        self.now.fetch_sub(1, Ordering::SeqCst);
    }
}

pub struct LoopbackServer {
    pub base_url: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
    open: Arc<OpenCount>,
    client_closed: watch::Receiver<usize>,
    task: JoinHandle<()>,
}

impl LoopbackServer {
    pub async fn start(replies: Vec<Reply>) -> Self {
        Self::listen(DEADLINE, move |listener, recorded, closed_tx| async move {
            for reply in replies {
                let Ok((socket, _)) = listener.accept().await else {
                    return;
                };
                let recorded = recorded.clone();
                let closed_tx = closed_tx.clone();
                // Serve connections concurrently so a held-open one
                // does not block the next.
                tokio::spawn(async move {
                    serve(socket, reply, recorded, closed_tx).await;
                });
            }
            // Keep the runtime resources alive until the deadline so
            // held-open connections can still report a close.
            std::future::pending::<()>().await;
        })
        .await
    }

    /// Answers every connection with `respond(&request)` until dropped or
    /// until `deadline`, for long sessions whose replies depend on what the
    /// client asked (a summary call, a given turn).
    #[allow(dead_code, reason = "only some test binaries answer by request")]
    pub async fn respond_with(
        deadline: Duration,
        respond: impl Fn(&Recorded) -> Reply + Send + Sync + 'static,
    ) -> Self {
        let respond = Arc::new(respond);
        let open = Arc::new(OpenCount::default());
        let counted = open.clone();
        let mut server = Self::listen(deadline, move |listener, recorded, closed_tx| async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let recorded = recorded.clone();
                let closed_tx = closed_tx.clone();
                let respond = respond.clone();
                let open = counted.clone();
                tokio::spawn(async move {
                    let Some(request) = read_request(&mut socket).await else {
                        return;
                    };
                    open.open();
                    let mut reply = respond(&request);
                    recorded.lock().unwrap().push(request);
                    // A leading pause is the request being worked on. The
                    // count ends before the first byte of the answer goes
                    // out: the client can only start another request after
                    // reading this one, so the count never lags behind it.
                    while let Some(Part::Pause(wait)) = reply.body.first().cloned() {
                        reply.body.remove(0);
                        tokio::time::sleep(wait).await;
                    }
                    open.close();
                    send_reply(socket, reply, closed_tx).await;
                });
            }
        })
        .await;
        server.open = open;
        server
    }

    /// The most requests this server was working on at one time (from
    /// reading a request to the start of its answer).
    #[allow(dead_code, reason = "only some test binaries measure concurrency")]
    pub fn max_open(&self) -> usize {
        self.open.max.load(Ordering::SeqCst)
    }

    /// Binds a port and runs `serve_all` on it until `deadline`.
    async fn listen<F, Fut>(deadline: Duration, serve_all: F) -> Self
    where
        F: FnOnce(TcpListener, Arc<Mutex<Vec<Recorded>>>, watch::Sender<usize>) -> Fut,
        Fut: std::future::Future<Output = ()> + Send + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let (closed_tx, client_closed) = watch::channel(0usize);
        let serving = serve_all(listener, requests.clone(), closed_tx);
        let task = tokio::spawn(async move {
            let _ = tokio::time::timeout(deadline, serving).await;
        });
        LoopbackServer {
            base_url: format!("http://{addr}"),
            requests,
            open: Arc::default(),
            client_closed,
            task,
        }
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }

    /// Waits until the client has closed `count` held-open connections.
    pub async fn wait_client_closed(&mut self, count: usize, within: Duration) -> bool {
        tokio::time::timeout(within, self.client_closed.wait_for(|n| *n >= count))
            .await
            .is_ok_and(|r| r.is_ok())
    }
}

impl Drop for LoopbackServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(
    mut socket: TcpStream,
    reply: Reply,
    recorded: Arc<Mutex<Vec<Recorded>>>,
    closed_tx: watch::Sender<usize>,
) {
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    recorded.lock().unwrap().push(request);
    send_reply(socket, reply, closed_tx).await;
}

async fn send_reply(mut socket: TcpStream, reply: Reply, closed_tx: watch::Sender<usize>) {
    let mut head = format!("HTTP/1.1 {} Scripted\r\n", reply.status);
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("Connection: close\r\n");
    match reply.framing {
        Framing::Chunked => head.push_str("Transfer-Encoding: chunked\r\n"),
        Framing::Close => {}
        Framing::Length => {
            let len: usize = reply
                .body
                .iter()
                .map(|p| match p {
                    Part::Bytes(b) => b.len(),
                    _ => 0,
                })
                .sum();
            head.push_str(&format!("Content-Length: {len}\r\n"));
        }
    }
    head.push_str("\r\n");
    if socket.write_all(head.as_bytes()).await.is_err() {
        return;
    }
    for part in reply.body {
        match part {
            Part::Bytes(bytes) => {
                let framed = if reply.framing == Framing::Chunked {
                    let mut framed = format!("{:x}\r\n", bytes.len()).into_bytes();
                    framed.extend_from_slice(&bytes);
                    framed.extend_from_slice(b"\r\n");
                    framed
                } else {
                    bytes
                };
                if socket.write_all(&framed).await.is_err() {
                    return;
                }
                let _ = socket.flush().await;
            }
            Part::Pause(d) => tokio::time::sleep(d).await,
            Part::Cut => return,
            Part::HoldOpen => {
                let mut buf = [0u8; 1024];
                loop {
                    match socket.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {}
                    }
                }
                closed_tx.send_modify(|n| *n += 1);
                return;
            }
        }
    }
    if reply.framing == Framing::Chunked {
        let _ = socket.write_all(b"0\r\n\r\n").await;
    }
    let _ = socket.shutdown().await;
}

async fn read_request(socket: &mut TcpStream) -> Option<Recorded> {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    let head_end = loop {
        if let Some(pos) = data.windows(4).position(|w| w == b"\r\n\r\n") {
            break pos;
        }
        let n = socket.read(&mut buf).await.ok()?;
        if n == 0 || data.len() > 1 << 20 {
            return None;
        }
        data.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&data[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let path = first.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = data[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&buf[..n]);
    }
    Some(Recorded {
        method,
        path,
        headers,
        body,
    })
}

/// One SSE event carrying `json`, with CRLF line endings.
pub fn data(json: &str) -> String {
    format!("data: {json}\r\n\r\n")
}

/// Splits `text` into `Part::Bytes` of `size` bytes, cutting anywhere,
/// including inside UTF-8 characters and CRLF pairs.
pub fn byte_pieces(text: &str, size: usize) -> Vec<Part> {
    text.as_bytes()
        .chunks(size)
        .map(|c| Part::Bytes(c.to_vec()))
        .collect()
}
