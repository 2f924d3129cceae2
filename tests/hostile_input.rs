//! Every parser that takes outside input must survive garbage: the model's
//! SSE stream, the kernel protocol, LSP framing, scene JSON, session JSONL,
//! theme and config TOML, and text drawn on the terminal. These are property
//! tests (bounded: they run in CI on every push); where a property is
//! stronger than "does not panic", it is checked too.
//!
//! Crashing inputs found here are kept as named regression cases at the end.

use hello_tui::agent::provider::sse::{SseEvent, SseParser};
use hello_tui::config::ConfigFile;
use hello_tui::kernel::protocol::parse_kernel_line;
use hello_tui::sanitize;
use hello_tui::session::parse_session;
use hello_tui::snapshot::Source;
use hello_tui::theme::Theme;
use hello_tui::ui::markdown::{self, PlainCode};
use proptest::prelude::*;
use unicode_width::UnicodeWidthStr;

/// 384 cases, or `PROPTEST_CASES` to explore more (docs/development.md).
fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(384);
    ProptestConfig {
        cases,
        ..ProptestConfig::default()
    }
}

/// Bytes that look like an event stream often enough to reach deep states.
fn sse_bytes() -> impl Strategy<Value = Vec<u8>> {
    let piece = prop_oneof![
        Just(b"data: ".to_vec()),
        Just(b"data:".to_vec()),
        Just(b"event: message\n".to_vec()),
        Just(b": ping\n".to_vec()),
        Just(b"\r\n".to_vec()),
        Just(b"\n".to_vec()),
        Just(b"\r".to_vec()),
        Just(b"[DONE]".to_vec()),
        Just(
            "{\"choices\":[{\"delta\":{\"content\":\"h\u{e9}\"}}]}"
                .as_bytes()
                .to_vec()
        ),
        prop::collection::vec(any::<u8>(), 0..12),
    ];
    prop::collection::vec(piece, 0..40).prop_map(|pieces| pieces.concat())
}

fn parse_all(chunks: &[&[u8]]) -> Vec<SseEvent> {
    let mut parser = SseParser::default();
    let mut events = Vec::new();
    for chunk in chunks {
        if let Ok(more) = parser.push(chunk) {
            events.extend(more);
        }
    }
    events.extend(parser.finish());
    events
}

proptest! {
    #![proptest_config(config())]

    /// Splitting a stream at arbitrary byte boundaries (inside CRLF, inside
    /// a UTF-8 character) never changes the events.
    #[test]
    fn sse_events_do_not_depend_on_chunking(bytes in sse_bytes(), cuts in prop::collection::vec(any::<prop::sample::Index>(), 0..6)) {
        let whole = parse_all(&[&bytes]);
        let mut points: Vec<usize> = cuts.iter().map(|c| c.index(bytes.len() + 1)).collect();
        points.sort_unstable();
        let mut chunks = Vec::new();
        let mut at = 0;
        for p in points {
            chunks.push(&bytes[at..p]);
            at = p;
        }
        chunks.push(&bytes[at..]);
        prop_assert_eq!(parse_all(&chunks), whole);
    }

    #[test]
    fn kernel_protocol_lines_never_panic(line in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = parse_kernel_line(&line);
    }

    #[test]
    fn kernel_protocol_json_shapes_never_panic(
        kind in prop_oneof![Just("ready"), Just("stream"), Just("result"), Just("state"), Just("call"), Just("x")],
        id in any::<i64>(),
        junk in ".{0,40}",
    ) {
        let line = format!("{{\"type\":\"{kind}\",\"id\":{id},\"name\":{junk:?},\"text\":{junk:?},\"ok\":{junk:?}}}");
        let _ = parse_kernel_line(line.as_bytes());
    }

    /// LSP framing on garbage ends (a message, an error or end of stream)
    /// without panicking or looping forever.
    #[test]
    fn lsp_framing_terminates_on_garbage(bytes in prop_oneof![
        prop::collection::vec(any::<u8>(), 0..400),
        (0usize..200, ".{0,60}").prop_map(|(n, s)| format!("Content-Length: {n}\r\n\r\n{s}").into_bytes()),
        ".{0,80}".prop_map(|s| format!("junk {s}\r\nContent-Length: x\r\n\r\n").into_bytes()),
    ]) {
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        runtime.block_on(async {
            let mut reader = tokio::io::BufReader::new(&bytes[..]);
            for _ in 0..64 {
                use hello_tui::diagnostics::lsp::framing::{MAX_BODY, read_frame};
                match read_frame(&mut reader, MAX_BODY).await {
                    Ok(Some(_)) => continue,
                    Ok(None) | Err(_) => return,
                }
            }
            panic!("framing kept producing messages from {} bytes", bytes.len());
        });
    }

    #[test]
    fn scene_json_never_panics(text in ".{0,200}") {
        let _ = Source::from_json(&text);
    }

    #[test]
    fn scene_json_shapes_never_panic(line in any::<i64>(), ch in any::<i64>(), sev in ".{0,10}", path in ".{0,30}") {
        let scene = format!(
            "{{\"workspace\":{{\"name\":\"w\",\"roots\":[{path:?}]}},\"active_editor\":{{\"path\":{path:?},\"text\":\"a\\nb\",\"cursor\":{{\"line\":{line},\"character\":{ch}}}}},\"diagnostics\":[{{\"path\":{path:?},\"severity\":{sev:?},\"line\":{line},\"message\":\"m\"}}]}}"
        );
        if let Ok(source) = Source::from_json(&scene) {
            let options = hello_tui::snapshot::CollectOptions { budget: 2_000, ..Default::default() };
            let (_, rendered) = hello_tui::snapshot::build(&source, &options);
            prop_assert!(rendered.markdown.chars().count() <= 2_000);
        }
    }

    /// Session files: garbage lines are reported, never fatal; a valid
    /// session followed by a torn line loads every whole record.
    #[test]
    fn session_jsonl_tolerates_garbage(garbage in ".{0,120}", cut in 0usize..40) {
        let (_, warnings) = parse_session(&garbage);
        prop_assert!(warnings.len() <= garbage.lines().count() + 1);
        let good = "{\"type\":\"message\",\"role\":\"user\",\"content\":\"hi\"}\n";
        let torn = &good[..cut.min(good.len() - 1)];
        let text = format!("{good}{good}{torn}");
        let (records, _) = parse_session(&text);
        prop_assert!(records.len() >= 2);
    }

    #[test]
    fn theme_and_config_toml_never_panic(text in "[a-z_=\\[\\]\" .#0-9\n{},]{0,160}") {
        let _ = Theme::parse(&text, "t.toml");
        let _ = ConfigFile::parse(&text, std::path::Path::new("c.toml"));
    }

    /// Nothing drawn on the terminal keeps an escape or control character.
    #[test]
    fn sanitised_text_has_no_controls(text in "(\\PC|\\p{Cc}|\u{1b}\\[[0-9;]*[A-Za-z]|\u{1b}\\][^\u{7}]*\u{7}){0,40}") {
        let clean = sanitize::for_display(&text);
        prop_assert!(clean.chars().all(|c| !c.is_control() || c == '\n' || c == '\t'), "{:?}", clean);
    }

    /// Model text of any shape renders within the pane's width.
    #[test]
    fn markdown_stays_within_width(text in "(\\PC|\n|`|\\||#|-|\\*){0,200}", width in 4usize..60) {
        let theme = Theme::builtin_default();
        for line in markdown::render(&text, width, &theme, &PlainCode) {
            let w: usize = line.spans.iter().map(|s| s.content.width()).sum();
            prop_assert!(w <= width, "{} > {}: {:?}", w, width, line);
        }
    }
}

/// Regression cases found by the properties above.
mod regressions {
    use super::*;

    #[test]
    fn crlf_split_between_chunks_is_one_line_end() {
        let whole = parse_all(&[b"data: a\r\n\r\ndata: b\r\n\r\n"]);
        let split = parse_all(&[b"data: a\r", b"\n\r", b"\ndata: b\r\n", b"\r\n"]);
        assert_eq!(whole, split);
        assert_eq!(whole.len(), 2);
    }

    /// A fence's info string wider than the pane was drawn past its edge.
    #[test]
    fn long_code_fence_language_is_cut_to_the_width() {
        let theme = Theme::builtin_default();
        for width in [4, 9, 20] {
            for line in markdown::render("```||𝚨||ਸ||||||| \nx\n```", width, &theme, &PlainCode)
            {
                let w: usize = line.spans.iter().map(|s| s.content.width()).sum();
                assert!(w <= width, "{w} > {width}: {line:?}");
            }
        }
    }
}
