//! `@path` mentions in a prompt, as Codex and Claude Code have them: each
//! workspace file the prompt mentions (`@src/auth.py`, or a range of its
//! lines, `@src/auth.py:12-40`) goes with the message, in the same pinned
//! block as the search pane's pins, so the model reads it without spending
//! a cell. What is sent is what the user sees: an open file's buffer,
//! unsaved edits and all.
//!
//! The rules that keep the snapshot safe hold here too: only files inside
//! the workspace (a link out of it is refused), never a secret-bearing
//! file's content (`snapshot::PrivacyRules`), never a binary, and never
//! more than the budget: the mentioned files share at most a quarter of the
//! model's window (counted as four characters a token) and
//! [`MAX_CHARS`], cut at a line with a note that says how to read the rest.
//! A word that names no file (`@decorator`, an e-mail) is text.

use std::path::{Path, PathBuf};

use crate::snapshot::PrivacyRules;
use crate::workbench::{Pin, Workbench};

/// Characters all mentions of one message may carry at most, whatever the
/// window (a 1M-token window does not make a 4 MB message a good idea).
pub const MAX_CHARS: usize = 200_000;

/// A file bigger than this is not read for a mention: the F2 gauge reads
/// the mentions again as the user types, and a file this size is over any
/// budget anyway (a cell reads it with `fs.read`).
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// A mentioned file open in the file view: its buffer's text, or its size
/// when that is over [`MAX_FILE_BYTES`].
pub type OpenText = Result<String, u64>;

/// One `@…` word of a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mention {
    /// The path as typed, relative to the workspace.
    pub path: String,
    /// 1-based, inclusive lines (`:12-40`, or `:12` for one line).
    pub lines: Option<(usize, usize)>,
}

impl Mention {
    /// How the message's block names it: `@path` or `@path:12-40`.
    pub fn label(&self) -> String {
        match self.lines {
            Some((a, b)) if a == b => format!("@{}:{a}", self.path),
            Some((a, b)) => format!("@{}:{a}-{b}", self.path),
            None => format!("@{}", self.path),
        }
    }
}

/// The `@` words of `text`, each once, in order: an `@` at the start or
/// after whitespace, up to the next whitespace, trailing punctuation left
/// out. Whether a file is behind one is [`attach`]'s question.
pub fn parse(text: &str) -> Vec<Mention> {
    let mut found: Vec<Mention> = Vec::new();
    for word in text.split_whitespace() {
        let Some(rest) = word.strip_prefix('@') else {
            continue;
        };
        let rest = rest.trim_end_matches([',', '.', ';', '!', '?', ')', '"', '\'', '`']);
        let (path, lines) = match rest.rsplit_once(':') {
            Some((path, range)) => match parse_range(range) {
                Some(lines) => (path, Some(lines)),
                None => (rest.trim_end_matches(':'), None),
            },
            None => (rest, None),
        };
        if path.is_empty() {
            continue;
        }
        let mention = Mention {
            path: path.to_owned(),
            lines,
        };
        if !found.contains(&mention) {
            found.push(mention);
        }
    }
    found
}

/// `12` or `12-40` (1-based; an end before the start is swapped).
fn parse_range(range: &str) -> Option<(usize, usize)> {
    let number = |s: &str| s.parse::<usize>().ok().filter(|n| *n > 0);
    match range.split_once('-') {
        Some((a, b)) => {
            let (a, b) = (number(a)?, number(b)?);
            Some((a.min(b), a.max(b)))
        }
        None => number(range).map(|n| (n, n)),
    }
}

/// What the mentions of a prompt come to: the blocks that go with it, and
/// a line for the user about each mention that could not go.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Attached {
    pub pins: Vec<Pin>,
    pub notes: Vec<String>,
}

/// The blocks for the files `prompt` mentions, within the budget.
pub fn attach(workbench: &Workbench, prompt: &str) -> Attached {
    let window = crate::workbench::context_window::window(workbench);
    // A quarter of the window, at four characters a token.
    let budget = window.tokens.min(MAX_CHARS);
    let root = workbench.workspace_root();
    let open_text = |path: &Path| {
        let editors = workbench.editors();
        editors.index_of(path).map(|i| {
            let doc = &editors.tabs[i];
            let bytes = doc.rope().len_bytes() as u64;
            if bytes > MAX_FILE_BYTES {
                Err(bytes)
            } else {
                Ok(doc.text())
            }
        })
    };
    attach_in(root, prompt, budget, &open_text)
}

/// [`attach`] with its inputs spelled out: the workspace, the characters
/// the mentions may take in all, and the text of a file open in the file
/// view (`None` when it is not open).
pub fn attach_in(
    root: &Path,
    prompt: &str,
    budget: usize,
    open_text: &dyn Fn(&Path) -> Option<OpenText>,
) -> Attached {
    let mut attached = Attached::default();
    let mut left = budget;
    let rules = PrivacyRules::default();
    for mention in parse(prompt) {
        let label = mention.label();
        let file = match inside(root, &mention.path) {
            Ok(Some(file)) => file,
            // No such file: the word was text.
            Ok(None) => continue,
            Err(why) => {
                attached.notes.push(format!("{label} is not sent: {why}."));
                continue;
            }
        };
        // By the name typed and by the file it is (a link to `.env`).
        let real = std::fs::canonicalize(root)
            .ok()
            .and_then(|root| file.strip_prefix(root).ok().map(Path::to_path_buf))
            .unwrap_or_default();
        if rules.is_withheld(&mention.path) || rules.is_withheld(&real.to_string_lossy()) {
            attached
                .notes
                .push(format!("{label} is not sent: it may hold secrets."));
            continue;
        }
        let opened = open_text(&file);
        let size = match &opened {
            Some(Err(bytes)) => *bytes,
            Some(Ok(_)) => 0,
            None => std::fs::metadata(&file).map_or(0, |m| m.len()),
        };
        if size > MAX_FILE_BYTES {
            attached.notes.push(format!(
                "{label} is not sent: it is {:.1} MiB, over the {} MiB a mention reads; a cell \
                 reads it with fs.read.",
                size as f64 / f64::from(1 << 20),
                MAX_FILE_BYTES >> 20
            ));
            continue;
        }
        let text = match opened {
            Some(Ok(text)) => text,
            _ => match std::fs::read(&file) {
                Ok(bytes) if bytes.contains(&0) => {
                    attached
                        .notes
                        .push(format!("{label} is not sent: it is a binary file."));
                    continue;
                }
                Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Err(error) => {
                    attached
                        .notes
                        .push(format!("{label} is not sent: {error}."));
                    continue;
                }
            },
        };
        let Some((body, cut)) = excerpt(&text, mention.lines, left) else {
            // Not even its first line fits: an empty block would only
            // spend tokens, so the mention goes without one.
            attached.notes.push(if left < budget {
                format!(
                    "{label} is not sent: the budget for mentioned files ({budget} characters) \
                     is used up by the mentions before it."
                )
            } else {
                format!(
                    "{label} is not sent: its first line is longer than the budget for \
                     mentioned files ({budget} characters)."
                )
            });
            continue;
        };
        left = left.saturating_sub(body.len());
        if let Some(note) = &cut {
            attached.notes.push(format!("{label}: {note}"));
        }
        let mut block = body;
        if let Some(note) = cut {
            block.push_str(&format!("[{note}]\n"));
        }
        attached.pins.push(Pin { label, text: block });
    }
    attached
}

/// The file under `root` a mention names: `Ok(None)` when there is none
/// (the word was text), `Err` when it exists but may not go (outside the
/// workspace, through a link or `..`; a folder).
fn inside(root: &Path, relative: &str) -> Result<Option<PathBuf>, &'static str> {
    let joined = root.join(relative);
    if !joined.exists() {
        return Ok(None);
    }
    let (Ok(file), Ok(root)) = (std::fs::canonicalize(&joined), std::fs::canonicalize(root)) else {
        return Ok(None);
    };
    if !file.starts_with(&root) {
        return Err("it is outside the workspace");
    }
    if !file.is_file() {
        return Err("it is not a file");
    }
    Ok(Some(file))
}

/// The lines asked for (all without a range), at most `budget`
/// characters, cut at a line; the note says what was left out and how to
/// read it. `None` when lines were asked for and not one fits the budget.
fn excerpt(
    text: &str,
    lines: Option<(usize, usize)>,
    budget: usize,
) -> Option<(String, Option<String>)> {
    let total = text.lines().count();
    let (first, last) = match lines {
        Some((a, _)) if a > total => {
            return Some((
                String::new(),
                Some(format!(
                    "the file has {total} lines; nothing from line {a} on"
                )),
            ));
        }
        Some((a, b)) => (a, b.min(total)),
        None => (1, total),
    };
    let mut body = String::new();
    let mut shown_to = first.saturating_sub(1);
    for line in text.lines().skip(first - 1).take(last + 1 - first) {
        if body.len() + line.len() + 1 > budget {
            break;
        }
        body.push_str(line);
        body.push('\n');
        shown_to += 1;
    }
    if shown_to < first && first <= last {
        return None;
    }
    let cut = (shown_to < last).then(|| {
        format!(
            "cut at line {shown_to} of {total} (the message's budget for mentioned files); \
             a cell reads the rest with fs.read"
        )
    });
    let body = match lines {
        Some(_) => format!("(lines {first}-{last} of {total})\n{body}"),
        None => body,
    };
    Some((body, cut))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mention(path: &str, lines: Option<(usize, usize)>) -> Mention {
        Mention {
            path: path.into(),
            lines,
        }
    }

    #[test]
    fn words_after_an_at_sign_are_mentions_with_an_optional_range() {
        assert_eq!(
            parse("fix @src/a.py, then see @b.rs:12-40 and @c.md:7. not a@b.com @x:y @ @a.py"),
            vec![
                mention("src/a.py", None),
                mention("b.rs", Some((12, 40))),
                mention("c.md", Some((7, 7))),
                mention("x:y", None),
                mention("a.py", None),
            ]
        );
        assert_eq!(parse("@a.py:40-12")[0].lines, Some((12, 40)));
        assert_eq!(mention("b.rs", Some((12, 40))).label(), "@b.rs:12-40");
    }

    fn workspace() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        let lines: String = (1..=50).map(|i| format!("line {i}\n")).collect();
        std::fs::write(dir.path().join("src/a.py"), lines).unwrap();
        std::fs::write(dir.path().join(".env"), "TOKEN=hunter2\n").unwrap();
        std::fs::write(dir.path().join("blob.bin"), b"\x00\x01\x02").unwrap();
        dir
    }

    fn closed(_: &Path) -> Option<OpenText> {
        None
    }

    #[test]
    fn a_mentioned_file_goes_whole_or_as_its_range() {
        let dir = workspace();
        let whole = attach_in(dir.path(), "look at @src/a.py", 10_000, &closed);
        assert_eq!(whole.notes, Vec::<String>::new());
        assert_eq!(whole.pins.len(), 1);
        assert_eq!(whole.pins[0].label, "@src/a.py");
        assert!(whole.pins[0].text.starts_with("line 1\n"));
        assert!(whole.pins[0].text.ends_with("line 50\n"));

        let range = attach_in(dir.path(), "@src/a.py:3-5 why", 10_000, &closed);
        assert_eq!(
            range.pins[0].text,
            "(lines 3-5 of 50)\nline 3\nline 4\nline 5\n"
        );
        let past = attach_in(dir.path(), "@src/a.py:90", 10_000, &closed);
        assert!(past.notes[0].contains("has 50 lines"), "{past:?}");
    }

    #[test]
    fn an_open_file_is_sent_as_the_user_sees_it() {
        let dir = workspace();
        let file = std::fs::canonicalize(dir.path().join("src/a.py")).unwrap();
        let open = |path: &Path| (path == file).then(|| Ok("unsaved text\n".to_owned()));
        let attached = attach_in(dir.path(), "@src/a.py", 10_000, &open);
        assert_eq!(attached.pins[0].text, "unsaved text\n");
    }

    #[test]
    fn the_budget_cuts_at_a_line_and_says_so() {
        let dir = workspace();
        let attached = attach_in(dir.path(), "@src/a.py and @src/a.py:1-2", 30, &closed);
        assert_eq!(
            attached.pins[0].text,
            "line 1\nline 2\nline 3\nline 4\n[cut at line 4 of 50 (the message's budget for mentioned files); a cell reads the rest with fs.read]\n"
        );
        assert!(attached.notes[0].starts_with("@src/a.py: cut at line 4 of 50"));
        // Nothing is left for the second mention: it is not sent at all
        // (an empty block would cost tokens), and its note says why.
        assert_eq!(attached.pins.len(), 1, "{attached:?}");
        assert_eq!(
            attached.notes[1],
            "@src/a.py:1-2 is not sent: the budget for mentioned files (30 characters) is used \
             up by the mentions before it."
        );
        // Alone, a mention whose first line is over the budget says so.
        let attached = attach_in(dir.path(), "@src/a.py", 3, &closed);
        assert!(attached.pins.is_empty(), "{attached:?}");
        assert_eq!(
            attached.notes,
            vec![
                "@src/a.py is not sent: its first line is longer than the budget for mentioned \
                 files (3 characters)."
                    .to_owned()
            ]
        );
    }

    #[test]
    fn secrets_binaries_and_files_outside_the_workspace_are_not_sent() {
        let dir = workspace();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "outside\n").unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret.txt"),
            dir.path().join("link.txt"),
        )
        .unwrap();
        let up = format!(
            "@../{}/secret.txt",
            outside.path().file_name().unwrap().to_string_lossy()
        );
        std::os::unix::fs::symlink(".env", dir.path().join("notes.txt")).unwrap();
        let big = std::fs::File::create(dir.path().join("big.log")).unwrap();
        big.set_len(MAX_FILE_BYTES + 1).unwrap();
        let prompt =
            format!("@.env @notes.txt @blob.bin @link.txt {up} @src @nosuchfile.py @big.log:1-2");
        let attached = attach_in(dir.path(), &prompt, 10_000, &closed);
        assert!(attached.pins.is_empty(), "{attached:?}");
        assert_eq!(
            attached.notes,
            vec![
                "@.env is not sent: it may hold secrets.".to_owned(),
                "@notes.txt is not sent: it may hold secrets.".to_owned(),
                "@blob.bin is not sent: it is a binary file.".to_owned(),
                "@link.txt is not sent: it is outside the workspace.".to_owned(),
                format!("{} is not sent: it is outside the workspace.", &up),
                "@src is not sent: it is not a file.".to_owned(),
                "@big.log:1-2 is not sent: it is 1.0 MiB, over the 1 MiB a mention reads; a \
                 cell reads it with fs.read."
                    .to_owned(),
            ]
        );
    }
}
