//! The slash commands: the built-in ones, and custom ones that are
//! Markdown prompt templates (as Claude Code has them) in
//! `.hello-tui/commands/NAME.md` of the workspace and
//! `~/.config/hello-tui/commands/NAME.md` (the workspace's win). A custom
//! command sends its template as a prompt, with `$ARGUMENTS` replaced by
//! what follows the name. One list feeds the palette, the dispatcher's
//! "unknown command" answer and `/help`.

use std::path::{Path, PathBuf};

/// Largest template read (a prompt, not a document).
const MAX_TEMPLATE: u64 = 64 << 10;

/// Longest description shown in the palette.
const MAX_DESCRIPTION: usize = 72;

/// Declares the built-in commands once: the [`Builtin`] the dispatcher
/// (`app::update::run_builtin`) matches on exhaustively, and the
/// [`BUILTINS`] table the palette, `/help` and the dispatcher read. So an
/// entry without a handler does not compile, nor a handler without an
/// entry.
macro_rules! builtins {
    ($($command:ident => $name:literal, $args:literal, $description:literal;)*) => {
        /// A command the workbench itself answers.
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Builtin {
            $($command,)*
        }

        /// Every built-in command, in the palette's order.
        pub(crate) const BUILTINS: &[BuiltinEntry] = &[$(BuiltinEntry {
            command: Builtin::$command,
            name: $name,
            args: $args,
            description: $description,
        },)*];
    };
}

builtins! {
    Help => "help", "", "keys and commands";
    New => "new", "[kernel]", "start a new conversation (kernel variables stay unless `kernel`)";
    Model => "model", "[NAME]", "list the server's models, or switch for the next turn";
    Approval => "approval", "[ask|review|auto|full|deny]", "show or change what needs your approval";
    Compact => "compact", "[focus]", "summarise earlier messages now (optionally around a focus)";
    Undo => "undo", "", "take back the last turn's file changes";
    Redo => "redo", "", "put back what /undo took back";
    Diff => "diff", "", "every file change of this session";
    Copy => "copy", "", "copy the model's last answer to the clipboard (Alt+C: the selected message)";
    LspRestart => "lsp-restart", "", "restart the language servers";
    LspLarge => "lsp-large", "", "send the open file to its language servers even if it is large";
    Lsp => "lsp", "", "language servers: languages, state, last error";
    Sessions => "sessions", "", "this workspace's sessions, and how to resume one";
    Trust => "trust", "", "ask again whether this workspace's own programs may run";
    Hooks => "hooks", "", "the hooks configured, and the last that ran";
}

/// One row of [`BUILTINS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BuiltinEntry {
    pub command: Builtin,
    pub name: &'static str,
    /// How its arguments are written (`[NAME]`), empty for none.
    pub args: &'static str,
    pub description: &'static str,
}

/// The built-in command called `name`, if there is one.
pub(crate) fn builtin(name: &str) -> Option<Builtin> {
    BUILTINS
        .iter()
        .find(|entry| entry.name == name)
        .map(|entry| entry.command)
}

/// What running a command does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandKind {
    Builtin(Builtin),
    /// A custom command's template file.
    Template(PathBuf),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlashCommand {
    pub name: String,
    /// How its arguments are written (`[NAME]`), empty for none.
    pub args: String,
    pub description: String,
    pub kind: CommandKind,
}

impl SlashCommand {
    /// `/name [ARGS]`, as help and errors write it.
    pub fn usage(&self) -> String {
        usage(&self.name, &self.args)
    }
}

impl BuiltinEntry {
    /// `/name [ARGS]`, as help and errors write it.
    pub fn usage(&self) -> String {
        usage(self.name, self.args)
    }
}

fn usage(name: &str, args: &str) -> String {
    if args.is_empty() {
        format!("/{name}")
    } else {
        format!("/{name} {args}")
    }
}

/// The commands the workbench itself answers, as the palette lists them.
pub(crate) fn builtins() -> Vec<SlashCommand> {
    BUILTINS
        .iter()
        .map(|entry| SlashCommand {
            name: entry.name.to_owned(),
            args: entry.args.to_owned(),
            description: entry.description.to_owned(),
            kind: CommandKind::Builtin(entry.command),
        })
        .collect()
}

/// The user's templates, next to the config file:
/// `$XDG_CONFIG_HOME/hello-tui/commands` (`~/.config/hello-tui/commands`).
pub(crate) fn user_commands_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "hello-tui")
        .map(|dirs| dirs.config_dir().join("commands"))
}

/// Every command: built-ins, then custom ones by name — the workspace's
/// (`.hello-tui/commands`, only once the workspace is `trusted`: a
/// repository's templates are what it configures, see `crate::trust`),
/// then the user's. A custom command never shadows a built-in, and the
/// workspace's wins over the user's.
pub fn all(workspace: &Path, trusted: bool, user: Option<&Path>) -> Vec<SlashCommand> {
    let mut dirs = Vec::new();
    if trusted {
        dirs.push((workspace_dir(workspace), "project"));
    }
    dirs.extend(user.map(|user| (user.to_path_buf(), "yours")));
    all_in(&dirs)
}

fn workspace_dir(workspace: &Path) -> PathBuf {
    workspace.join(".hello-tui").join("commands")
}

/// The workspace's own templates (what trusting it would add).
pub(crate) fn workspace_templates(workspace: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(workspace_dir(workspace)) else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| custom_command(path).is_some())
        .collect();
    found.sort();
    found
}

/// Templates of each folder, with where they come from (shown: a
/// repository's own commands are not mistaken for the user's).
fn all_in(dirs: &[(PathBuf, &str)]) -> Vec<SlashCommand> {
    let mut commands = builtins();
    let mut custom: Vec<SlashCommand> = Vec::new();
    for (dir, origin) in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut found: Vec<SlashCommand> = entries
            .flatten()
            .filter_map(|entry| custom_command(&entry.path()))
            .map(|mut c| {
                c.description = format!("{} · {origin}", c.description);
                c
            })
            .filter(|c| !commands.iter().chain(&custom).any(|k| k.name == c.name))
            .collect();
        found.sort_by(|a, b| a.name.cmp(&b.name));
        custom.extend(found);
    }
    commands.extend(custom);
    commands
}

/// A template file as a command: its name from the file name (letters,
/// digits, `-`, `_`), its description from a front matter `description:`
/// or else its first line.
fn custom_command(path: &Path) -> Option<SlashCommand> {
    let name = path.file_name()?.to_str()?.strip_suffix(".md")?;
    let valid = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !valid || !path.metadata().is_ok_and(|m| m.is_file()) {
        return None;
    }
    let text = read_template(path).ok()?;
    let (front, body) = front_matter(&text);
    let described = front
        .lines()
        .find_map(|line| line.strip_prefix("description:"))
        .map(|d| d.trim().trim_matches('"').to_owned());
    let first_line = body
        .lines()
        .map(|l| l.trim().trim_start_matches('#').trim())
        .find(|l| !l.is_empty())
        .unwrap_or("")
        .to_owned();
    let description = crate::sanitize::for_display(&described.unwrap_or(first_line)).into_owned();
    let description = match description.char_indices().nth(MAX_DESCRIPTION) {
        Some((cut, _)) => format!("{}…", &description[..cut]),
        None => description,
    };
    let args = if body.contains("$ARGUMENTS") {
        "[ARGUMENTS]"
    } else {
        ""
    };
    Some(SlashCommand {
        name: name.to_owned(),
        args: args.to_owned(),
        description,
        kind: CommandKind::Template(path.to_owned()),
    })
}

fn read_template(path: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path)?
        .take(MAX_TEMPLATE)
        .read_to_string(&mut text)?;
    Ok(text)
}

/// `---\n…\n---\n` at the top, and the rest.
fn front_matter(text: &str) -> (&str, &str) {
    let Some(rest) = text.strip_prefix("---\n") else {
        return ("", text);
    };
    match rest.find("\n---\n") {
        Some(end) => (&rest[..end], &rest[end + 5..]),
        None => ("", text),
    }
}

/// The prompt a custom command sends: its template (front matter left
/// out), `$ARGUMENTS` replaced by `args`.
pub(crate) fn expand(command: &SlashCommand, args: &str) -> std::io::Result<String> {
    let CommandKind::Template(path) = &command.kind else {
        return Err(std::io::Error::other("a built-in command has no template"));
    };
    let text = read_template(path)?;
    let (_, body) = front_matter(&text);
    Ok(body.replace("$ARGUMENTS", args).trim().to_owned())
}

/// The commands whose name starts with `typed` (case-insensitive), then
/// those that contain it: what the palette lists as the user types.
pub fn matching<'a>(commands: &'a [SlashCommand], typed: &str) -> Vec<&'a SlashCommand> {
    let typed = typed.to_lowercase();
    let (mut first, mut then) = (Vec::new(), Vec::new());
    // The name typed in full comes first: Enter runs what was typed, not
    // a longer name that sorts before it (review finding).
    if let Some(exact) = commands.iter().find(|c| c.name == typed) {
        first.push(exact);
    }
    for command in commands {
        if command.name == typed {
            continue;
        }
        if command.name.starts_with(&typed) {
            first.push(command);
        } else if command.name.contains(&typed) {
            then.push(command);
        }
    }
    first.extend(then);
    first
}

/// "Commands: /help, /model [NAME], …" for an unknown command's answer.
pub fn listing(commands: &[SlashCommand]) -> String {
    let names: Vec<String> = commands.iter().map(SlashCommand::usage).collect();
    format!("Commands: {}.", names.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_commands_come_from_templates_and_never_shadow_builtins() {
        let dir = tempfile::tempdir().unwrap();
        let (workspace, user) = (dir.path().join("ws"), dir.path().join("user"));
        std::fs::create_dir_all(&workspace).unwrap();
        std::fs::create_dir_all(&user).unwrap();
        std::fs::write(
            workspace.join("review.md"),
            "---\ndescription: Review the diff\n---\nReview $ARGUMENTS carefully.\n",
        )
        .unwrap();
        std::fs::write(user.join("review.md"), "the user's review\n").unwrap();
        std::fs::write(user.join("explain.md"), "# Explain the code\nExplain it.\n").unwrap();
        std::fs::write(user.join("undo.md"), "not the built-in\n").unwrap();
        std::fs::write(user.join("bad name.md"), "x\n").unwrap();
        let all = all_in(&[(workspace, "project"), (user, "yours")]);
        let custom: Vec<(&str, &str, &str)> = all
            .iter()
            .filter(|c| matches!(c.kind, CommandKind::Template(_)))
            .map(|c| (c.name.as_str(), c.args.as_str(), c.description.as_str()))
            .collect();
        assert_eq!(
            custom,
            [
                ("review", "[ARGUMENTS]", "Review the diff · project"),
                ("explain", "", "Explain the code · yours"),
            ]
        );
        let review = all.iter().find(|c| c.name == "review").unwrap();
        assert_eq!(
            expand(review, "src/auth.ts").unwrap(),
            "Review src/auth.ts carefully."
        );
        assert_eq!(
            all.iter().filter(|c| c.name == "undo").count(),
            1,
            "the built-in stays"
        );
    }

    #[test]
    fn the_palette_lists_prefix_matches_first() {
        let commands = builtins();
        let names = |typed: &str| -> Vec<String> {
            matching(&commands, typed)
                .iter()
                .map(|c| c.name.clone())
                .collect()
        };
        assert_eq!(names("")[..3], ["help", "new", "model"]);
        assert_eq!(names("re"), ["redo", "lsp-restart"]);
        assert_eq!(names("DI"), ["diff"]);
        assert!(names("zzz").is_empty());
        let mut with_longer = commands.clone();
        with_longer.insert(
            0,
            SlashCommand {
                name: "undo-all".into(),
                args: String::new(),
                description: "x".into(),
                kind: CommandKind::Template("undo-all.md".into()),
            },
        );
        let typed: Vec<&str> = matching(&with_longer, "undo")
            .iter()
            .map(|c| c.name.as_str())
            .collect();
        assert_eq!(typed, ["undo", "undo-all"], "the exact name first");
        assert!(listing(&commands).contains("/model [NAME], /approval"));
    }

    /// Each command of the table, typed as the user would (the palette's
    /// name, Enter), reaches its handler: none is an unknown command.
    #[tokio::test]
    async fn every_command_in_the_table_is_answered() {
        for entry in BUILTINS {
            let dir = tempfile::tempdir().unwrap();
            let mut state = crate::app::AppState::new(
                dir.path().to_path_buf(),
                crate::config::Settings::defaults(),
            );
            state
                .conversation
                .composer
                .insert_str(format!("/{}", entry.name));
            crate::app::update::handle_terminal_event(
                &mut state,
                crossterm::event::Event::Key(crossterm::event::KeyEvent::new(
                    crossterm::event::KeyCode::Enter,
                    crossterm::event::KeyModifiers::NONE,
                )),
            );
            let unknown = state
                .workbench
                .transcript
                .iter()
                .find(|m| m.text.contains("Unknown command"));
            assert!(unknown.is_none(), "/{}: {unknown:?}", entry.name);
        }
    }
}
