//! Text from a model, a tool, a kernel or a file is untrusted: before it is
//! drawn it loses every terminal control sequence, so it cannot clear the
//! screen, set the window title, write the clipboard (OSC 52) or end a
//! bracketed paste.

use std::borrow::Cow;

/// Makes `text` safe to draw: escape sequences (CSI, OSC, DCS, …) are dropped
/// whole, other control characters become visible (`^[`, `␍`), and tab and
/// newline are kept because panes lay them out themselves.
pub fn for_display(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_care) {
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
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Makes every control character in `text` visible instead of removing it,
/// for text the user approves (a shell command, a cell): what is shown must
/// be exactly what runs, so an OSC payload like `ESC ]0; touch x BEL` shows
/// as `␛]0; touch x ␇`, not as nothing. C0 controls become their Unicode
/// control pictures (`␛`, `␇`, `␍`, `␀`), DEL `␡`; C1 controls and the
/// invisible bidi/format characters that reorder or hide text (Trojan
/// Source) become `<U+202E>`. Tab and newline are kept.
pub fn visible_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_hidden) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            c if !is_hidden(c) => out.push(c),
            '\u{0}'..='\u{1f}' => out.push(char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}')),
            '\u{7f}' => out.push('\u{2421}'),
            c => out.push_str(&format!("<U+{:04X}>", c as u32)),
        }
    }
    Cow::Owned(out)
}

/// Whether `text` holds characters [`visible_controls`] has to reveal: the
/// approval overlay flags such a command.
pub fn has_hidden_characters(text: &str) -> bool {
    text.chars().any(is_hidden)
}

/// Control characters (but tab and newline) and the zero-width or
/// direction-changing format characters.
fn is_hidden(c: char) -> bool {
    needs_care(c)
        || matches!(
            c,
            '\u{200b}'..='\u{200f}'
                | '\u{202a}'..='\u{202e}'
                | '\u{2060}'..='\u{2069}'
                | '\u{feff}'
        )
}

fn needs_care(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
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

    #[test]
    fn unterminated_sequences_do_not_panic() {
        for input in ["\u{1b}", "\u{1b}[", "\u{1b}]0;title", "x\u{1b}(", "\u{9b}"] {
            let out = for_display(input);
            assert!(!out.contains('\u{1b}'), "{input:?} -> {out:?}");
        }
    }
}
