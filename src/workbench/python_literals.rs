//! The constant string literals of a piece of Python, decoded: what a
//! `%py` cell the user typed could pass to `shell.run` word for word.
//!
//! Only what can be decoded for certain counts: plain, `u` and raw literals
//! (single, double, triple quoted) and f-strings without replacement fields.
//! Bytes, f-strings with `{…}`, implicit concatenation and escapes beyond
//! the common ones are left out, so a command built from them is never
//! taken for one the user typed (it is asked about instead).

/// The constant literals passed straight to `shell.run` in `code`
/// (`shell.run("git status")`, `shell.run(cmd='ls')`): a literal assigned
/// or printed elsewhere in the cell is not a command the user ran, and
/// must not let a model's thread run it unasked.
pub(crate) fn shell_run_literals(code: &str) -> Vec<String> {
    literals_passed_to(
        code,
        &["shell.run(", "shell.run(cmd=", "shell.run(command="],
    )
}

/// The constant paths passed straight to `fs.write` or `fs.edit` in
/// `code` (`fs.write("notes.md", text)`): writes the user typed.
pub(crate) fn fs_write_paths(code: &str) -> Vec<String> {
    literals_passed_to(
        code,
        &["fs.write(", "fs.write(path=", "fs.edit(", "fs.edit(path="],
    )
}

/// The literals that directly follow one of `calls` (whitespace ignored).
fn literals_passed_to(code: &str, calls: &[&str]) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    literals_at(&chars)
        .into_iter()
        .filter(|(start, _)| {
            let before: String = chars[..*start]
                .iter()
                .filter(|c| !c.is_whitespace())
                .collect();
            calls.iter().any(|call| before.ends_with(call))
        })
        .map(|(_, text)| text)
        .collect()
}

/// Every constant string literal in `code`, in order (what the decoding
/// tests read).
#[cfg(test)]
fn string_literals(code: &str) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    literals_at(&chars)
        .into_iter()
        .map(|(_, text)| text)
        .collect()
}

/// Each decodable literal with where it starts (its prefix included).
fn literals_at(chars: &[char]) -> Vec<(usize, String)> {
    scan(chars).literals
}

/// One pass over the code: its decodable literals, and the code itself
/// with every comment and string literal blanked to spaces (where a name
/// typed in a string or a comment cannot pass for a call).
struct Scanned {
    literals: Vec<(usize, String)>,
    code: Vec<char>,
}

fn scan(chars: &[char]) -> Scanned {
    let mut found = Vec::new();
    let mut code = chars.to_vec();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        match c {
            '#' => {
                while chars.get(i).is_some_and(|c| *c != '\n') {
                    code[i] = ' ';
                    i += 1;
                }
            }
            '\'' | '"' => {
                let prefix = prefix_before(chars, i);
                let start = i - prefix.chars().count();
                let (literal, next) = read_literal(chars, i, &prefix);
                found.extend(literal.map(|text| (start, text)));
                code[start..next.min(chars.len())].fill(' ');
                i = next;
            }
            _ => i += 1,
        }
    }
    Scanned {
        literals: found,
        code,
    }
}

/// The MCP tools `code` calls directly, as `(server, tool)`:
/// `mcp.server.tool(` written out in the code itself — not in a string or
/// a comment, not reached through a variable — so a tool the user's cell
/// names is theirs to call, and any other is asked about.
pub(crate) fn mcp_tool_calls(code: &str) -> Vec<(String, String)> {
    let chars: Vec<char> = code.chars().collect();
    let code = scan(&chars).code;
    let is_name = |c: &char| c.is_alphanumeric() || *c == '_';
    let name_at = |from: usize| -> (String, usize) {
        let end = code[from..]
            .iter()
            .position(|c| !is_name(c))
            .map_or(code.len(), |n| from + n);
        (code[from..end].iter().collect(), end)
    };
    let mut calls = Vec::new();
    for start in 0..code.len() {
        let standalone = start == 0 || !(is_name(&code[start - 1]) || code[start - 1] == '.');
        if !standalone || !code[start..].starts_with(&['m', 'c', 'p', '.']) {
            continue;
        }
        let (server, after_server) = name_at(start + 4);
        if server.is_empty() || code.get(after_server) != Some(&'.') {
            continue;
        }
        let (tool, after_tool) = name_at(after_server + 1);
        let opens_call = code[after_tool..]
            .iter()
            .find(|c| !c.is_whitespace())
            .is_some_and(|c| *c == '(');
        if !tool.is_empty() && opens_call {
            calls.push((server, tool));
        }
    }
    calls
}

/// The string prefix (`r`, `f`, `rb`, …) right before the quote at `quote`,
/// lowercased; empty when the letters there are not a prefix.
fn prefix_before(chars: &[char], quote: usize) -> String {
    let start = chars[..quote]
        .iter()
        .rposition(|c| !(c.is_alphanumeric() || *c == '_'))
        .map_or(0, |p| p + 1);
    let word: String = chars[start..quote]
        .iter()
        .collect::<String>()
        .to_lowercase();
    match word.as_str() {
        "r" | "u" | "f" | "b" | "br" | "rb" | "fr" | "rf" => word,
        _ => String::new(),
    }
}

/// Reads the literal opening at `start`; returns its text when it is a
/// constant this module decodes, and where scanning goes on.
fn read_literal(chars: &[char], start: usize, prefix: &str) -> (Option<String>, usize) {
    let quote = chars[start];
    let triple = chars.get(start + 1) == Some(&quote) && chars.get(start + 2) == Some(&quote);
    let raw = prefix.contains('r');
    let mut i = start + if triple { 3 } else { 1 };
    let mut text = String::new();
    let mut decoded = true;
    loop {
        let Some(&c) = chars.get(i) else {
            return (None, i);
        };
        if c == '\\' {
            let Some(&next) = chars.get(i + 1) else {
                return (None, i + 1);
            };
            if raw {
                text.push('\\');
                text.push(next);
            } else {
                match escape(next) {
                    Some(Some(decoded_char)) => text.push(decoded_char),
                    Some(None) => {}
                    None => decoded = false,
                }
            }
            i += 2;
            continue;
        }
        if c == '\n' && !triple {
            return (None, i);
        }
        if c == quote
            && (!triple || (chars.get(i + 1) == Some(&quote) && chars.get(i + 2) == Some(&quote)))
        {
            i += if triple { 3 } else { 1 };
            break;
        }
        text.push(c);
        i += 1;
    }
    let constant = decoded
        && !prefix.contains('b')
        && !(prefix.contains('f') && (text.contains('{') || text.contains('}')));
    (constant.then_some(text), i)
}

/// A simple escape's character (`Some(None)`: a line continuation, no
/// character); `None` for escapes not decoded here.
fn escape(c: char) -> Option<Option<char>> {
    Some(Some(match c {
        '\\' => '\\',
        '\'' => '\'',
        '"' => '"',
        'n' => '\n',
        't' => '\t',
        'r' => '\r',
        'a' => '\u{7}',
        'b' => '\u{8}',
        'f' => '\u{c}',
        'v' => '\u{b}',
        '\n' => return Some(None),
        _ => return None,
    }))
}

#[cfg(test)]
mod tests {
    use super::{mcp_tool_calls, shell_run_literals, string_literals};

    /// Only what is passed to `shell.run` counts as a command the user ran.
    #[test]
    fn only_literals_passed_to_shell_run_are_commands() {
        let code = "msg = 'git push --force'\nprint(msg)\nshell.run( \"git status\")\n\
                    shell.run(cmd=r'ls -la')\nother.run('rm -rf x')\nshell.run(msg)";
        assert_eq!(shell_run_literals(code), ["git status", "ls -la"]);
    }

    #[test]
    fn plain_raw_and_triple_quoted_literals_are_decoded() {
        let code = "r = shell.run(\"git status --short\")\n\
                    shell.run('echo \\'hi\\'\\tthere')\n\
                    x = r'a\\b'  # 'not a literal: comment'\n\
                    y = \"\"\"two\nlines\"\"\"\n";
        assert_eq!(
            string_literals(code),
            vec![
                "git status --short".to_owned(),
                "echo 'hi'\tthere".to_owned(),
                "a\\b".to_owned(),
                "two\nlines".to_owned(),
            ]
        );
    }

    #[test]
    fn computed_bytes_and_unknown_escapes_are_left_out() {
        let code = "shell.run(f\"rm -rf {d}\")\n\
                    shell.run(b'ls')\n\
                    shell.run('\\x72m -rf /')\n\
                    shell.run(f'ls -la')\n\
                    shell.run(name + 'x')\n";
        assert_eq!(
            string_literals(code),
            vec!["ls -la".to_owned(), "x".to_owned()]
        );
    }

    #[test]
    fn a_quote_inside_a_word_or_an_unterminated_literal_finds_nothing_more() {
        assert_eq!(string_literals("it's"), Vec::<String>::new());
        assert_eq!(
            string_literals("a = 'open\nb = \"ok\""),
            vec!["ok".to_owned()]
        );
    }

    #[test]
    fn mcp_calls_written_in_the_code_count_and_strings_comments_and_aliases_do_not() {
        let code = "r = mcp.everything.echo(message='hi')\n\
                    s = mcp.fs.read_file (path='a')\n\
                    help(mcp.everything.get_sum)\n\
                    # mcp.everything.delete_all()\n\
                    t = 'mcp.everything.wipe()'\n\
                    f = mcp.everything.zap\n\
                    f()\n\
                    x.mcp.other.tool()\n\
                    mcp.everything()\n";
        assert_eq!(
            mcp_tool_calls(code),
            [
                ("everything".to_owned(), "echo".to_owned()),
                ("fs".to_owned(), "read_file".to_owned()),
            ]
        );
        assert!(
            mcp_tool_calls("\"\"\"\nmcp.a.b()\n\"\"\"").is_empty(),
            "in a docstring"
        );
    }
}
