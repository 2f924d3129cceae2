//! Newline-delimited frames with a size bound, so a runaway kernel cannot make
//! the host buffer an unbounded line.

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// Reads `\n`-terminated frames; a frame longer than `max` bytes is skipped
/// whole (logged) instead of being buffered.
pub(crate) struct LineReader<R> {
    inner: BufReader<R>,
    max: usize,
    line: Vec<u8>,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub fn new(reader: R, max: usize) -> Self {
        Self {
            inner: BufReader::with_capacity(1 << 18, reader),
            max,
            line: Vec::new(),
        }
    }

    /// The next complete frame (without its `\n`), or `None` at end of stream.
    pub(crate) async fn next_line(&mut self) -> std::io::Result<Option<&[u8]>> {
        self.line.clear();
        let mut discarding = false;
        loop {
            let available = self.inner.fill_buf().await?;
            if available.is_empty() {
                // A final unterminated frame is still a frame.
                return Ok((!self.line.is_empty() && !discarding).then_some(&self.line[..]));
            }
            let (chunk, found) = match memchr_newline(available) {
                Some(at) => (&available[..at], Some(at)),
                None => (available, None),
            };
            if !discarding {
                if self.line.len() + chunk.len() > self.max {
                    tracing::warn!(max = self.max, "kernel frame too long; skipping it");
                    discarding = true;
                    self.line.clear();
                } else {
                    self.line.extend_from_slice(chunk);
                }
            }
            match found {
                Some(at) => {
                    self.inner.consume(at + 1);
                    if discarding {
                        discarding = false;
                        continue;
                    }
                    return Ok(Some(&self.line[..]));
                }
                None => {
                    let n = available.len();
                    self.inner.consume(n);
                }
            }
        }
    }
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|b| *b == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn splits_lines_and_skips_oversized_ones() {
        let mut data = b"first\n".to_vec();
        data.extend(std::iter::repeat_n(b'x', 100));
        data.extend(b"\nsecond\nlast");
        let mut reader = LineReader::new(&data[..], 50);
        assert_eq!(reader.next_line().await.unwrap(), Some(&b"first"[..]));
        assert_eq!(reader.next_line().await.unwrap(), Some(&b"second"[..]));
        assert_eq!(reader.next_line().await.unwrap(), Some(&b"last"[..]));
        assert_eq!(reader.next_line().await.unwrap(), None);
    }
}
