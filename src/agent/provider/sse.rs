//! An incremental Server-Sent Events parser (the WHATWG `text/event-stream`
//! rules) that takes bytes exactly as they come off the socket.
//!
//! Hand-written rather than a crate because it is ~100 lines, and the
//! servers we talk to bend the format in ways we want to tolerate on purpose:
//! CRLF or lone CR line endings, `: ping` keep-alive comments, `event:` lines,
//! multi-line `data:` fields, chunks split anywhere (even inside a UTF-8
//! character), and a last event not followed by a blank line before close.
//! It is pure and never panics; memory is bounded by `max_line`.

/// One dispatched event. `event` is `None` for the default `message` type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    pub event: Option<String>,
    pub data: String,
    pub id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SseError {
    #[error("a single event-stream line exceeded {limit} bytes")]
    LineTooLong { limit: usize },
}

/// The default line limit: far above any real chunk (a whole tool call's
/// arguments rarely exceed a few hundred KiB) yet bounded.
pub(crate) const DEFAULT_MAX_LINE: usize = 16 * 1024 * 1024;

#[derive(Debug)]
pub struct SseParser {
    /// Bytes of the current, not yet terminated line.
    line: Vec<u8>,
    /// The previous byte was a CR, so a following LF belongs to it.
    after_cr: bool,
    data: String,
    has_data: bool,
    event: Option<String>,
    id: Option<String>,
    max_line: usize,
}

impl Default for SseParser {
    fn default() -> Self {
        Self::with_max_line(DEFAULT_MAX_LINE)
    }
}

impl SseParser {
    pub(crate) fn with_max_line(max_line: usize) -> Self {
        SseParser {
            line: Vec::new(),
            after_cr: false,
            data: String::new(),
            has_data: false,
            event: None,
            id: None,
            max_line,
        }
    }

    /// Feeds the next bytes; returns the events they completed.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<SseEvent>, SseError> {
        let mut out = Vec::new();
        let mut rest = bytes;
        while let Some(&first) = rest.first() {
            if self.after_cr {
                self.after_cr = false;
                if first == b'\n' {
                    rest = &rest[1..];
                    continue;
                }
            }
            match rest.iter().position(|&b| b == b'\n' || b == b'\r') {
                Some(end) => {
                    self.extend_line(&rest[..end])?;
                    self.after_cr = rest[end] == b'\r';
                    rest = &rest[end + 1..];
                    let line = std::mem::take(&mut self.line);
                    self.process_line(&line, &mut out);
                }
                None => {
                    self.extend_line(rest)?;
                    rest = &[];
                }
            }
        }
        Ok(out)
    }

    /// The body ended: a final unterminated line and a final event without
    /// the blank line after it are still delivered (servers do close early).
    pub fn finish(&mut self) -> Option<SseEvent> {
        let mut out = Vec::new();
        if !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.process_line(&line, &mut out);
        }
        self.dispatch(&mut out);
        out.pop()
    }

    fn extend_line(&mut self, bytes: &[u8]) -> Result<(), SseError> {
        if self.line.len() + bytes.len() > self.max_line {
            self.line.clear();
            return Err(SseError::LineTooLong {
                limit: self.max_line,
            });
        }
        self.line.extend_from_slice(bytes);
        Ok(())
    }

    fn process_line(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line[0] == b':' {
            return; // comment / keep-alive
        }
        // Line boundaries are ASCII, so a complete line holds only whole
        // UTF-8 characters; invalid bytes become U+FFFD instead of failing.
        let text = String::from_utf8_lossy(line);
        let (field, value) = match text.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (text.as_ref(), ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.event = Some(value.to_owned()),
            "id" => self.id = Some(value.to_owned()),
            _ => {} // `retry` and unknown fields: nothing for us to do
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = self.event.take();
        if !self.has_data {
            return;
        }
        self.has_data = false;
        out.push(SseEvent {
            event,
            data: std::mem::take(&mut self.data),
            id: self.id.clone(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data_of(events: &[SseEvent]) -> Vec<&str> {
        events.iter().map(|e| e.data.as_str()).collect()
    }

    fn feed_bytewise(input: &[u8]) -> Vec<SseEvent> {
        let mut parser = SseParser::default();
        let mut out = Vec::new();
        for b in input {
            out.extend(parser.push(std::slice::from_ref(b)).unwrap());
        }
        out.extend(parser.finish());
        out
    }

    #[test]
    fn lf_crlf_and_cr_endings_give_the_same_events() {
        for sep in ["\n", "\r\n", "\r"] {
            let input = format!("data: a{sep}{sep}data: b{sep}{sep}");
            let mut parser = SseParser::default();
            let events = parser.push(input.as_bytes()).unwrap();
            assert_eq!(data_of(&events), ["a", "b"], "separator {sep:?}");
        }
    }

    #[test]
    fn crlf_split_between_chunks_is_one_line_end() {
        let mut parser = SseParser::default();
        let mut events = parser.push(b"data: x\r").unwrap();
        events.extend(parser.push(b"\n\r").unwrap());
        events.extend(parser.push(b"\ndata: y\r\n\r\n").unwrap());
        assert_eq!(data_of(&events), ["x", "y"]);
    }

    #[test]
    fn comments_event_and_id_fields() {
        let input = b": ping\n\nevent: delta\nid: 7\ndata: {\"a\":1}\n\n: keep-alive\n";
        let events = feed_bytewise(input);
        assert_eq!(
            events,
            [SseEvent {
                event: Some("delta".into()),
                data: "{\"a\":1}".into(),
                id: Some("7".into())
            }]
        );
    }

    #[test]
    fn multi_line_data_is_joined_with_newlines() {
        let events = feed_bytewise(b"data: one\ndata:two\ndata\n\n");
        assert_eq!(data_of(&events), ["one\ntwo\n"]);
    }

    #[test]
    fn utf8_split_inside_a_character_survives() {
        let input = "data: héllo 日本 🦀\n\n".as_bytes();
        for cut in 0..input.len() {
            let mut parser = SseParser::default();
            let mut events = parser.push(&input[..cut]).unwrap();
            events.extend(parser.push(&input[cut..]).unwrap());
            assert_eq!(data_of(&events), ["héllo 日本 🦀"], "cut at {cut}");
        }
    }

    #[test]
    fn last_event_without_blank_line_is_delivered_on_finish() {
        let mut parser = SseParser::default();
        assert!(parser.push(b"data: [DONE]").unwrap().is_empty());
        assert_eq!(parser.finish().map(|e| e.data), Some("[DONE]".into()));
        assert_eq!(parser.finish(), None);
    }

    #[test]
    fn event_without_data_is_not_dispatched() {
        let events = feed_bytewise(b"event: noop\n\ndata: real\n\n");
        assert_eq!(
            events,
            [SseEvent {
                event: None,
                data: "real".into(),
                id: None
            }]
        );
    }

    #[test]
    fn overlong_line_is_an_error_not_unbounded_memory() {
        let mut parser = SseParser::with_max_line(8);
        assert!(parser.push(b"data: 12").is_ok());
        assert_eq!(parser.push(b"3"), Err(SseError::LineTooLong { limit: 8 }));
    }

    #[test]
    fn garbage_never_panics() {
        let mut seed: u32 = 12345;
        let mut parser = SseParser::default();
        for _ in 0..2000 {
            seed = seed.wrapping_mul(1_103_515_245).wrapping_add(12345);
            let len = (seed >> 24) as usize % 17;
            let bytes: Vec<u8> = (0..len)
                .map(|i| (seed.rotate_left(i as u32 * 3) & 0xff) as u8)
                .collect();
            let _ = parser.push(&bytes);
        }
        let _ = parser.finish();
    }
}
