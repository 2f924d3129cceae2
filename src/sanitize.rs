//! Text from a model, a tool, a kernel, a server or a file is untrusted:
//! before it is drawn (in a pane, the status bar, or printed by a
//! subcommand) it loses every terminal control sequence, so it cannot clear
//! the screen, set the window title, write the clipboard (OSC 52) or end a
//! bracketed paste, and the invisible characters that reorder or hide text
//! (bidi overrides and isolates, zero-width characters, Unicode tags) are
//! shown as `<U+202E>`, so what the user reads is what is there. Emoji
//! presentation selectors are dropped, so every symbol is as wide on the
//! screen as the layout counts it.

use std::borrow::Cow;

/// Makes `text` safe to draw: escape sequences (CSI, OSC, DCS, …) are dropped
/// whole, other control characters become visible (`^[`, `␍`), invisible
/// format characters become `<U+202E>`, and tab and newline are kept
/// because panes lay them out themselves.
pub fn for_display(text: &str) -> Cow<'_, str> {
    if !has_hidden_characters(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' | '\t' => out.push(c),
            '\u{1b}' => skip_escape(&mut chars),
            // A lone carriage return would move the cursor to column 0 and
            // let later text overwrite what came before it.
            '\r' if chars.peek() == Some(&'\n') => {}
            '\r' => out.push('␍'),
            // C1 CSI / OSC introducers: same sequences as ESC [ and ESC ].
            '\u{9b}' => skip_csi(&mut chars),
            '\u{9d}' | '\u{90}' | '\u{98}' | '\u{9e}' | '\u{9f}' => skip_string(&mut chars),
            c if c.is_control() => push_caret(&mut out, c),
            c if is_invisible_format(c) => push_code_point(&mut out, c),
            // Emoji and text presentation selectors: terminals disagree on
            // how wide they make a symbol (tmux draws `❤️` in one cell,
            // `unicode-width` and so ratatui count two), and a symbol laid
            // out wider than drawn leaves a stale cell behind it. Without
            // one, a symbol is as wide as everyone says.
            '\u{fe0e}' | '\u{fe0f}' => {}
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// [`for_display`] for a place that has one line (the status bar, a list
/// row): newlines and tabs become spaces, so lines are not run together
/// (ratatui drops a newline inside a span).
pub(crate) fn one_line(text: &str) -> Cow<'_, str> {
    match for_display(text) {
        Cow::Borrowed(clean) if !clean.contains(['\n', '\t']) => Cow::Borrowed(clean),
        clean => Cow::Owned(clean.replace(['\n', '\t'], " ")),
    }
}

/// JSON text (as `serde_json` serialized it) for a stream another program
/// reads but a terminal (a CI log) may show: every string keeps its exact
/// value, but the characters [`for_display`] would not let through raw
/// (DEL, C1 controls, bidi and other invisible format characters) are
/// written as `\u` escapes, which JSON's own serializer leaves as they are.
/// (It escapes C0 controls and ESC already.)
pub(crate) fn json_text(text: String) -> String {
    if !has_hidden_characters(&text) {
        return text;
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        // Outside strings a serialized value is ASCII: every hidden
        // character is inside a string, where an escape means the same.
        if is_hidden(c) {
            let mut units = [0u16; 2];
            for unit in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{unit:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Makes every control character in `text` visible instead of removing it,
/// for text the user approves (a shell command, a cell): what is shown must
/// be exactly what runs, so an OSC payload like `ESC ]0; touch x BEL` shows
/// as `␛]0; touch x ␇`, not as nothing. C0 controls become their Unicode
/// control pictures (`␛`, `␇`, `␍`, `␀`), DEL `␡`; C1 controls and the
/// invisible bidi/format characters that reorder or hide text (Trojan
/// Source) become `<U+202E>`, and so do variation selectors, which a
/// pane drops for emoji (`❤️` draws as `❤`) but which in code make two names
/// that look alike different (`target︀` is not `target`). Tab and newline
/// are kept.
pub(crate) fn visible_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hidden_in_code) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            c if !is_hidden_in_code(c) => out.push(c),
            '\u{0}'..='\u{1f}' => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}')),
            '\u{7f}' => out.push('\u{2421}'),
            c => push_code_point(&mut out, c),
        }
    }
    Cow::Owned(out)
}

/// Whether `text` holds characters [`visible_controls`] has to reveal: the
/// approval overlay flags such a command. (All of them are also changed by
/// [`for_display`].)
pub(crate) fn has_hidden_characters(text: &str) -> bool {
    text.chars().any(is_hidden_in_code)
}

/// [`is_hidden`], and the variation selectors (U+FE00–FE0F; the
/// supplement, U+E0100–E01EF, is hidden everywhere).
pub(crate) fn is_hidden_in_code(c: char) -> bool {
    is_hidden(c) || matches!(c, '\u{fe00}'..='\u{fe0f}')
}

/// Control characters (but tab and newline) and the invisible format
/// characters.
fn is_hidden(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t') || is_invisible_format(c)
}

/// Characters a terminal draws as nothing but that change what the text
/// around them looks like: the bidi marks, embeddings, overrides and
/// isolates (U+061C, U+200E/F, U+202A–202E, U+2066–2069: "Trojan Source"),
/// zero-width spaces and joiners, word joiner and invisible operators,
/// line/paragraph separators, the byte-order mark, interlinear annotation
/// marks, and the tag characters (U+E0000–E007F), which can carry a whole
/// hidden ASCII message. Zero-width joiners inside emoji are shown too: a
/// terminal does not agree with ratatui on their width anyway. Also the
/// characters that are drawn blank though they are letters or marks, so
/// they hide inside a name (`target\u{3164}` is a Python identifier that
/// looks like `target`): the soft hyphen, the combining grapheme joiner,
/// the Hangul fillers, Khmer's inherent vowels, Mongolian's free variation
/// selectors, the musical formatting symbols and the variation selector
/// supplement (a review found each drawn as nothing).
fn is_invisible_format(c: char) -> bool {
    matches!(
        c,
        '\u{00ad}'
            | '\u{034f}'
            | '\u{061c}'
            | '\u{115f}'
            | '\u{1160}'
            | '\u{17b4}'
            | '\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{3164}'
            | '\u{ffa0}'
            | '\u{1d173}'..='\u{1d17a}'
            | '\u{e0100}'..='\u{e01ef}'
            | '\u{200b}'..='\u{200f}'
            | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}'
            | '\u{feff}'
            | '\u{fff9}'..='\u{fffb}'
            | '\u{e0000}'..='\u{e007f}'
    )
}

/// `<U+202E>`: a character shown by its code point.
fn push_code_point(out: &mut String, c: char) {
    out.push_str(&format!("<U+{:04X}>", c as u32));
}

fn push_caret(out: &mut String, c: char) {
    let code = c as u32;
    if code < 0x20 {
        out.push('^');
        out.push(char::from(b'@' + code as u8));
    } else {
        // DEL and C1 controls have no caret form; show the replacement mark.
        out.push('\u{fffd}');
    }
}

type Chars<'a> = std::iter::Peekable<std::str::Chars<'a>>;

/// Skips what follows an ESC: a CSI, an OSC/DCS/APC/PM/SOS string, or a
/// two-character escape.
fn skip_escape(chars: &mut Chars<'_>) {
    match chars.next() {
        Some('[') => skip_csi(chars),
        Some(']' | 'P' | '_' | '^' | 'X') => skip_string(chars),
        // ESC ( B and friends select character sets: one more character.
        Some('(' | ')' | '*' | '+' | '#' | '%') => {
            chars.next();
        }
        _ => {}
    }
}

/// CSI: parameter and intermediate bytes, then one final byte in `@`..=`~`.
fn skip_csi(chars: &mut Chars<'_>) {
    for c in chars.by_ref() {
        if ('@'..='~').contains(&c) {
            return;
        }
        if !(' '..='?').contains(&c) {
            // Not a valid CSI byte: stop so ordinary text is not swallowed.
            return;
        }
    }
}

/// String sequences end at BEL, ST (`ESC \`) or the C1 ST character.
fn skip_string(chars: &mut Chars<'_>) {
    while let Some(c) = chars.next() {
        match c {
            '\u{7}' | '\u{9c}' => return,
            '\u{1b}' => {
                if chars.peek() == Some(&'\\') {
                    chars.next();
                }
                return;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {

    /// Characters drawn blank though they are letters or marks: in an
    /// approval they are shown (a review approved a cell whose
    /// `target\u{3164}= "build"` looked like `target= "build"`).
    #[test]
    fn blank_letters_and_variation_selectors_are_revealed_in_code() {
        for c in [
            '\u{3164}',
            '\u{ffa0}',
            '\u{115f}',
            '\u{00ad}',
            '\u{1d173}',
            '\u{034f}',
            '\u{17b4}',
            '\u{fe0f}',
            '\u{e0100}',
        ] {
            let text = format!("target{c}= 1");
            assert!(has_hidden_characters(&text), "{:04X}", c as u32);
            let shown = visible_controls(&text);
            assert!(shown.contains(&format!("<U+{:04X}>", c as u32)), "{shown}");
        }
        // A pane draws an emoji without its presentation selector, at the
        // width every terminal agrees on.
        assert_eq!(for_display("\u{2764}\u{fe0f} ok"), "\u{2764} ok");
        assert_eq!(for_display("\u{263a}\u{fe0e}"), "\u{263a}");
    }

    use super::*;

    #[test]
    fn plain_text_is_borrowed() {
        assert!(matches!(for_display("hello\tworld\n"), Cow::Borrowed(_)));
    }

    #[test]
    fn hostile_sequences_are_removed() {
        let cases = [
            ("a\u{1b}[2Jb", "ab"),                     // clear screen
            ("a\u{1b}]0;pwned\u{7}b", "ab"),           // set title (BEL)
            ("a\u{1b}]52;c;aGVsbG8=\u{1b}\\b", "ab"),  // OSC 52 clipboard (ST)
            ("a\u{1b}[201~b", "ab"),                   // bracketed paste end
            ("a\u{1b}[38;5;196mred\u{1b}[0m", "ared"), // colours
            ("x\u{9b}31my", "xy"),                     // C1 CSI
            ("a\u{1b}Pq#0;2;0;0;0\u{1b}\\b", "ab"),    // DCS (sixel)
        ];
        for (input, expected) in cases {
            assert_eq!(for_display(input), expected, "input {input:?}");
        }
    }

    #[test]
    fn other_controls_become_visible() {
        assert_eq!(for_display("abc\rdef"), "abc␍def");
        assert_eq!(for_display("line\r\nnext"), "line\nnext");
        assert_eq!(for_display("ab\u{8}\u{8}c"), "ab^H^Hc");
        assert_eq!(for_display("bell\u{7}"), "bell^G");
        assert_eq!(for_display("nul\0"), "nul^@");
    }

    #[test]
    fn visible_controls_shows_every_hidden_character_and_drops_none() {
        let osc = "echo SAFE \u{1b}]0 ; touch /tmp/HIDDEN ; \u{7}";
        assert!(has_hidden_characters(osc));
        assert_eq!(
            visible_controls(osc),
            "echo SAFE ␛]0 ; touch /tmp/HIDDEN ; ␇"
        );
        assert_eq!(visible_controls("a\rb\0\u{7f}"), "a␍b␀␡");
        assert_eq!(visible_controls("x\u{9b}y\u{202e}z"), "x<U+009B>y<U+202E>z");
        assert!(matches!(
            visible_controls("ls -la\n\tgrep x"),
            Cow::Borrowed(_)
        ));
        assert!(!has_hidden_characters("ls -la\n\tgrep x"));
        // Nothing left for `for_display` to strip afterwards.
        assert_eq!(for_display(&visible_controls(osc)), visible_controls(osc));
    }

    /// Issue 25, route 18: a bidi override reordered what the diagnostics
    /// pane and the status bar showed.
    #[test]
    fn invisible_format_characters_are_shown_by_their_code_point() {
        assert_eq!(
            for_display("evil\u{202e}txt.exe\u{2066}x\u{2069}"),
            "evil<U+202E>txt.exe<U+2066>x<U+2069>"
        );
        assert_eq!(for_display("a\u{200b}b\u{feff}"), "a<U+200B>b<U+FEFF>");
        // A tag character (ASCII smuggling) and the Arabic letter mark.
        assert_eq!(for_display("x\u{e0041}\u{61c}"), "x<U+E0041><U+061C>");
        // Ordinary non-ASCII text is left alone.
        assert!(matches!(for_display("héllo 你好 🦀"), Cow::Borrowed(_)));
        // Idempotent: what it returns has nothing left to change.
        let once = for_display("\u{202e}\u{1b}]2;t\u{7}\r");
        assert_eq!(for_display(&once), once);
    }

    #[test]
    fn one_line_keeps_lines_apart_with_spaces() {
        assert_eq!(
            one_line("first\nsecond\tthird\u{202e}"),
            "first second third<U+202E>"
        );
        assert!(matches!(one_line("plain"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_text_escapes_what_a_terminal_would_obey_and_keeps_the_value() {
        let value = serde_json::json!({
            "text": "a\u{1b}]52;c;eA==\u{7}b\u{9b}31m\u{202e}c\u{e0041}\u{7f}",
            "plain": "héllo 🦀",
        });
        let line = json_text(value.to_string());
        assert!(!has_hidden_characters(&line), "{line}");
        assert!(
            line.contains("\\u202e") && line.contains("\\udb40\\udc41"),
            "{line}"
        );
        let back: serde_json::Value = serde_json::from_str(&line).expect("valid JSON");
        assert_eq!(back, value);
        let pretty = serde_json::to_string_pretty(&value).expect("serializes");
        let back: serde_json::Value = serde_json::from_str(&json_text(pretty)).expect("valid JSON");
        assert_eq!(back, value);
        let plain = serde_json::json!({"a": "b"});
        assert_eq!(json_text(plain.to_string()), plain.to_string());
    }

    #[test]
    fn unterminated_sequences_do_not_panic() {
        for input in ["\u{1b}", "\u{1b}[", "\u{1b}]0;title", "x\u{1b}(", "\u{9b}"] {
            let out = for_display(input);
            assert!(!out.contains('\u{1b}'), "{input:?} -> {out:?}");
        }
    }
}
