//! LSP base protocol: `Content-Length: N\r\n\r\n<N bytes of JSON>`.
//!
//! Servers are not always clean: some print banners or log lines on stdout
//! before their first header. The reader skips anything that is not a header
//! block until it finds `Content-Length:`, and caps every size so garbage can
//! never make it allocate without bound.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// Longest header line we keep; longer junk lines are discarded in pieces.
const MAX_HEADER_LINE: usize = 8 * 1024;
/// Largest message body we accept (rust-analyzer's biggest replies are far below).
pub(crate) const MAX_BODY: usize = 64 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum FramingError {
    #[error("i/o error on the server's stdio: {0}")]
    Io(#[from] std::io::Error),
    #[error("message of {0} bytes exceeds the {MAX_BODY}-byte limit")]
    TooLarge(usize),
    #[error("stream ended in the middle of a message")]
    Truncated,
}

/// Reads the next message body. `Ok(None)` is a clean end of stream.
pub async fn read_message<R: AsyncBufRead + Unpin>(
    reader: &mut R,
) -> Result<Option<Vec<u8>>, FramingError> {
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
                if len > MAX_BODY {
                    return Err(FramingError::TooLarge(len));
                }
                let mut body = vec![0; len];
                reader.read_exact(&mut body).await.map_err(|e| {
                    if e.kind() == std::io::ErrorKind::UnexpectedEof {
                        FramingError::Truncated
                    } else {
                        FramingError::Io(e)
                    }
                })?;
                return Ok(Some(body));
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
        let mut reader = tokio::io::BufReader::new(input);
        let mut out = Vec::new();
        loop {
            match read_message(&mut reader).await {
                Ok(Some(body)) => out.push(String::from_utf8_lossy(&body).into_owned()),
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
    async fn truncated_body_and_huge_length_are_errors() {
        let (_, err) = read_all(b"Content-Length: 10\r\n\r\n{}").await;
        assert!(err.unwrap().contains("ended"));
        let (_, err) = read_all(b"Content-Length: 99999999999\r\n\r\n").await;
        assert!(err.unwrap().contains("limit"));
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
