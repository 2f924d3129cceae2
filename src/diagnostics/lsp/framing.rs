//! LSP base protocol: `Content-Length: N\r\n\r\n<N bytes of JSON>`.
//!
//! Servers are not always clean: some print banners or log lines on stdout
//! before their first header. The reader skips anything that is not a header
//! block until it finds `Content-Length:`, and caps every size so garbage can
//! never make it allocate without bound.
//!
//! A message over the limit is not an error: it is a property of what the
//! server was asked about (ruff's answer about a 1 000 000-line file is
//! 92 MB), and dropping the connection would only start the server again to
//! send the same answer. Its body is read through to the end in the reader's
//! own buffer and thrown away, and the next message is read as usual; only
//! its first `PEEK_BYTES` are kept, to tell what it was about.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Longest header line we keep; longer junk lines are discarded in pieces.
const MAX_HEADER_LINE: usize = 8 * 1024;
/// Largest message body we keep by default (rust-analyzer's biggest replies
/// are far below); `LspTimings::max_message_bytes` sets it per service.
pub const MAX_BODY: usize = 64 * 1024 * 1024;
/// How much of a dropped message is kept to tell what it was about: the
/// `method`, `id` and `params.uri` of a message come first in the JSON that
/// servers write (ruff's `uri` is within its first 100 bytes).
pub const PEEK_BYTES: usize = 4 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum FramingError {
    #[error("i/o error on the server's stdio: {0}")]
    Io(#[from] std::io::Error),
    #[error("stream ended in the middle of a message")]
    Truncated,
}

/// What the reader found next on the stream.
#[derive(Debug)]
pub enum Frame {
    /// A whole message body, at most the limit long.
    Body(Vec<u8>),
    /// A message over the limit, read to its end and dropped.
    Dropped(Oversize),
}

/// A message that was too large to keep.
#[derive(Debug)]
pub struct Oversize {
    /// Its `Content-Length`.
    pub bytes: usize,
    /// Its first `PEEK_BYTES` (fewer if it was shorter): a JSON prefix.
    pub head: Vec<u8>,
}

/// Reads the next message; bodies over `limit` bytes are dropped as a
/// stream (see the module doc). `Ok(None)` is a clean end of stream.
pub async fn read_frame<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    limit: usize,
) -> Result<Option<Frame>, FramingError> {
    let mut length: Option<usize> = None;
    let mut line = Vec::new();
    loop {
        line.clear();
        let complete = read_line_capped(reader, &mut line).await?;
        if line.is_empty() && !complete {
            return if length.is_some() {
                Err(FramingError::Truncated)
            } else {
                Ok(None)
            };
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if let Some(len) = length {
                if len > limit {
                    return drop_body(reader, len).await.map(Some);
                }
                let mut body = vec![0; len];
                read_exact(reader, &mut body).await?;
                return Ok(Some(Frame::Body(body)));
            }
            continue; // blank junk line
        }
        match content_length(text) {
            Some(Ok(len)) => length = Some(len),
            Some(Err(())) => {
                tracing::warn!(header = text, "lsp: malformed Content-Length, skipping");
                length = None;
            }
            None if length.is_some() && text.contains(':') => {} // other header, e.g. Content-Type
            None => {
                tracing::debug!(junk = text, "lsp: skipping non-header output");
                length = None;
            }
        }
    }
}

/// Keeps the first `PEEK_BYTES` of a `len`-byte body and copies the rest
/// from the reader's buffer into a sink: memory stays at the reader's
/// buffer however large `len` is.
async fn drop_body<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    len: usize,
) -> Result<Frame, FramingError> {
    let mut head = vec![0; len.min(PEEK_BYTES)];
    read_exact(reader, &mut head).await?;
    let rest = (len - head.len()) as u64;
    let copied = tokio::io::copy_buf(&mut reader.take(rest), &mut tokio::io::sink()).await?;
    if copied < rest {
        return Err(FramingError::Truncated);
    }
    Ok(Frame::Dropped(Oversize { bytes: len, head }))
}

async fn read_exact<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    into: &mut [u8],
) -> Result<(), FramingError> {
    reader.read_exact(into).await.map(drop).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            FramingError::Truncated
        } else {
            FramingError::Io(e)
        }
    })
}

/// Finds `Content-Length: N` anywhere in the line (junk may precede it on
/// the same line when a server prints without a newline).
fn content_length(line: &str) -> Option<Result<usize, ()>> {
    const KEY: &str = "content-length:";
    let lower = line.to_ascii_lowercase();
    let at = lower.find(KEY)?;
    Some(
        line[at + KEY.len()..]
            .trim()
            .parse::<usize>()
            .map_err(|_| ()),
    )
}

/// Reads one line (up to and including `\n`) into `out`, keeping at most
/// `MAX_HEADER_LINE` bytes. Returns whether a newline ended it.
async fn read_line_capped<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    out: &mut Vec<u8>,
) -> std::io::Result<bool> {
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(false);
        }
        let (used, done) = match memchr_newline(available) {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        let room = MAX_HEADER_LINE.saturating_sub(out.len());
        out.extend_from_slice(&available[..used.min(room)]);
        reader.consume(used);
        if done {
            return Ok(true);
        }
    }
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == b'\n')
}

/// Writes one framed message and flushes it.
pub(crate) async fn write_message<W: AsyncWrite + Unpin>(
    writer: &mut W,
    body: &[u8],
) -> std::io::Result<()> {
    let header = format!("Content-Length: {}\r\n\r\n", body.len());
    writer.write_all(header.as_bytes()).await?;
    writer.write_all(body).await?;
    writer.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn read_all(input: &[u8]) -> (Vec<String>, Option<String>) {
        read_all_within(input, MAX_BODY).await
    }

    /// Bodies as text; a dropped one as `dropped N: <head>`.
    async fn read_all_within(input: &[u8], limit: usize) -> (Vec<String>, Option<String>) {
        let mut reader = tokio::io::BufReader::new(input);
        let mut out = Vec::new();
        loop {
            match read_frame(&mut reader, limit).await {
                Ok(Some(Frame::Body(body))) => {
                    out.push(String::from_utf8_lossy(&body).into_owned())
                }
                Ok(Some(Frame::Dropped(Oversize { bytes, head }))) => out.push(format!(
                    "dropped {bytes}: {}",
                    String::from_utf8_lossy(&head)
                )),
                Ok(None) => return (out, None),
                Err(e) => return (out, Some(e.to_string())),
            }
        }
    }

    #[tokio::test]
    async fn reads_consecutive_messages() {
        let input = b"Content-Length: 2\r\n\r\n{}Content-Length: 4\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\nnull";
        let (msgs, err) = read_all(input).await;
        assert_eq!(msgs, vec!["{}", "null"]);
        assert!(err.is_none());
    }

    #[tokio::test]
    async fn skips_junk_before_and_between_headers() {
        let input = b"Starting server v1.0...\nloading\r\n\r\nContent-Length: 2\r\n\r\n{}more junk\nnoise: yes\n\nContent-Length: 1\r\n\r\n1";
        let (msgs, err) = read_all(input).await;
        assert_eq!(msgs, vec!["{}", "1"]);
        assert!(err.is_none());
    }

    #[tokio::test]
    async fn junk_on_the_same_line_as_the_header_is_tolerated() {
        let (msgs, _) = read_all(b"garbageContent-Length: 2\r\n\r\n[]").await;
        assert_eq!(msgs, vec!["[]"]);
    }

    #[tokio::test]
    async fn malformed_length_is_skipped_not_fatal() {
        let input = b"Content-Length: banana\r\n\r\nContent-Length: 2\r\n\r\n{}";
        let (msgs, err) = read_all(input).await;
        assert_eq!(msgs, vec!["{}"]);
        assert!(err.is_none());
    }

    #[tokio::test]
    async fn truncated_bodies_are_errors_oversize_or_not() {
        let (_, err) = read_all(b"Content-Length: 10\r\n\r\n{}").await;
        assert!(err.unwrap().contains("ended"));
        let (_, err) = read_all(b"Content-Length: 99999999999\r\n\r\n").await;
        assert!(err.unwrap().contains("ended"));
        let (_, err) = read_all_within(b"Content-Length: 10\r\n\r\n0123", 4).await;
        assert!(err.unwrap().contains("ended"));
    }

    /// An oversize message is dropped whole, its head kept, and the reader
    /// goes on with the next message as if nothing happened.
    #[tokio::test]
    async fn an_oversize_message_is_dropped_and_the_next_one_read() {
        let big = format!("{{\"method\":\"m\",\"pad\":\"{}\"}}", "x".repeat(20_000));
        let input = format!(
            "Content-Length: 2\r\n\r\n{{}}Content-Length: {}\r\n\r\n{big}Content-Length: 4\r\n\r\nnull",
            big.len()
        );
        let (msgs, err) = read_all_within(input.as_bytes(), 1000).await;
        assert!(err.is_none(), "{err:?}");
        assert_eq!(msgs.len(), 3, "{msgs:?}");
        assert_eq!(msgs[0], "{}");
        assert_eq!(
            msgs[1],
            format!("dropped {}: {}", big.len(), &big[..PEEK_BYTES])
        );
        assert_eq!(msgs[2], "null");
        // At the limit is not over it; a short one keeps all it has.
        let (msgs, _) = read_all_within(
            b"Content-Length: 4\r\n\r\nnullContent-Length: 5\r\n\r\n[1,2]",
            4,
        )
        .await;
        assert_eq!(msgs, ["null", "dropped 5: [1,2]"]);
    }

    /// A stream of `header`, then `body` zero bytes served from one static
    /// buffer (nothing is copied or allocated per byte), then `tail`.
    struct Endless {
        header: Vec<u8>,
        body: u64,
        tail: &'static [u8],
        at: u64,
    }

    static ZEROS: [u8; 1 << 20] = [0; 1 << 20];

    impl Endless {
        fn available(&self) -> &[u8] {
            let header = self.header.len() as u64;
            if self.at < header {
                &self.header[self.at as usize..]
            } else if self.at < header + self.body {
                let left = header + self.body - self.at;
                &ZEROS[..left.min(ZEROS.len() as u64) as usize]
            } else {
                let at = (self.at - header - self.body) as usize;
                self.tail.get(at..).unwrap_or_default()
            }
        }
    }

    impl tokio::io::AsyncBufRead for Endless {
        fn poll_fill_buf(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<std::io::Result<&[u8]>> {
            std::task::Poll::Ready(Ok(self.get_mut().available()))
        }

        fn consume(self: std::pin::Pin<&mut Self>, amount: usize) {
            self.get_mut().at += amount as u64;
        }
    }

    impl tokio::io::AsyncRead for Endless {
        fn poll_read(
            self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            let this = self.get_mut();
            let from = this.available();
            let n = from.len().min(buf.remaining());
            buf.put_slice(&from[..n]);
            this.at += n as u64;
            std::task::Poll::Ready(Ok(()))
        }
    }

    /// A 1 TiB message streams through without being buffered: a reader
    /// that kept it whole could not even allocate it.
    #[tokio::test]
    async fn a_terabyte_message_is_dropped_without_being_buffered() {
        let body: u64 = 1 << 40;
        let stream = Endless {
            header: format!("Content-Length: {body}\r\n\r\n").into_bytes(),
            body,
            tail: b"Content-Length: 2\r\n\r\n{}",
            at: 0,
        };
        let mut reader = stream;
        match read_frame(&mut reader, MAX_BODY).await {
            Ok(Some(Frame::Dropped(Oversize { bytes, head }))) => {
                assert_eq!(bytes as u64, body);
                assert_eq!(head.len(), PEEK_BYTES);
            }
            other => panic!("expected a dropped message, got {other:?}"),
        }
        match read_frame(&mut reader, MAX_BODY).await {
            Ok(Some(Frame::Body(b))) => assert_eq!(b, b"{}"),
            other => panic!("expected the next message, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn endless_junk_line_does_not_grow_memory_and_ends_cleanly() {
        let junk = vec![b'x'; 1_000_000];
        let (msgs, err) = read_all(&junk).await;
        assert!(msgs.is_empty());
        assert!(err.is_none());
    }

    #[tokio::test]
    async fn write_then_read_round_trips() {
        let mut buf = Vec::new();
        write_message(&mut buf, "{\"名\":1}".as_bytes())
            .await
            .unwrap();
        let (msgs, _) = read_all(&buf).await;
        assert_eq!(msgs, vec!["{\"名\":1}"]);
    }
}
