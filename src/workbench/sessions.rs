//! Starting the workbench's agent: the model (configured, demo, or none),
//! a resumed session (`--continue`, `--resume ID`), the `sessions`
//! subcommand and the `--demo` workspace.

use std::path::Path;
use std::process::ExitCode;

use crate::agent::conversation::Conversation;
use crate::agent::setup;
use crate::context::SharedContext;
use crate::sanitize;
use crate::session;
use crate::workbench::Workbench;

/// The files of the demo workspace, embedded so the binary is enough.
const DEMO_FILES: [(&str, &str); 3] = [
    ("auth.ts", include_str!("../../assets/demo/auth.ts")),
    ("api.ts", include_str!("../../assets/demo/api.ts")),
    ("README.md", include_str!("../../assets/demo/README.md")),
];

/// Copies the demo workspace to a fresh temp dir (removed when dropped).
pub fn demo_workspace() -> std::io::Result<tempfile::TempDir> {
    let dir = tempfile::Builder::new()
        .prefix("hello-tui-demo-")
        .tempdir()?;
    for (name, text) in DEMO_FILES {
        std::fs::write(dir.path().join(name), text)?;
    }
    Ok(dir)
}

/// Picks the model and, when asked, resumes a session. `resume` is
/// `Some(None)` for `--continue` (the latest) and `Some(Some(id))` for
/// `--resume ID`. An `Err` is a usage error for the command line.
pub fn configure(
    workbench: &mut Workbench,
    demo: bool,
    resume: Option<Option<String>>,
) -> Result<(), String> {
    if demo {
        workbench.agent.set_provider(setup::demo()?);
        workbench.notice(&format!(
            "Welcome to the hello-tui demo. Answers come from the {} replaying a recorded \
                 conversation, offline. Ask e.g. \"why does checkAuth reject users?\" and watch it \
                 search the context, read auth.ts in the kernel, fix it and answer.",
            setup::DEMO_LABEL
        ));
    } else {
        match setup::from_settings(&workbench.settings, &|name| std::env::var(name).ok()) {
            Ok(Some(provider)) => workbench.agent.set_provider(provider),
            Ok(None) => {}
            Err(error) => workbench.notice(&format!("The model is not usable: {error}")),
        }
    }
    workbench.agent.warm_counter(&workbench.settings);
    let Some(which) = resume else {
        crate::workbench::agent::refresh_instructions(workbench);
        crate::workbench::context_window::refresh_gauge(workbench);
        return Ok(());
    };
    let root = workbench.workspace_root.clone();
    let (conversation, warnings) = Conversation::open(
        &root,
        which.as_deref(),
        session::SessionOrigin::Tui,
        SharedContext::default(),
    )?;
    let model = conversation.model().map(str::to_owned);
    let profile = conversation.profile().map(str::to_owned);
    let tabs = conversation.resumed_tabs().cloned();
    crate::workbench::agent::resume(workbench, conversation, &warnings);
    if let Some(tabs) = tabs {
        crate::workbench::editors::restore_tabs(workbench, &tabs);
    }
    crate::workbench::models::resumed(workbench, model.as_deref(), profile.as_deref());
    crate::workbench::agent::refresh_instructions(workbench);
    crate::workbench::context_window::refresh_gauge(workbench);
    Ok(())
}

/// The line printed after quitting (as Codex and Claude Code do), so the
/// conversation can be found again. The workspace is named when it is not
/// the working directory, since `--resume` looks in the workspace given.
pub fn exit_line(id: &str, workspace: &Path, cwd: Option<&Path>) -> String {
    let here = cwd.and_then(|cwd| cwd.canonicalize().ok()).as_deref() == Some(workspace);
    let path = if here {
        String::new()
    } else {
        format!(" {}", shell_word(&workspace.to_string_lossy()))
    };
    format!("Session {id} saved. Resume it with: hello-tui --resume {id}{path}")
}

/// `text` quoted for a POSIX shell when it needs it.
fn shell_word(text: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:@%,".contains(c);
    if !text.is_empty() && text.chars().all(plain) {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', "'\\''"))
    }
}

/// `hello-tui sessions [-C DIR]`.
pub fn list_command(dir: &Path) -> anyhow::Result<ExitCode> {
    if !dir.is_dir() {
        let message = format!("hello-tui sessions: `{}` is not a directory", dir.display());
        eprintln!("{}", sanitize::for_display(&message));
        return Ok(ExitCode::from(2));
    }
    let root = std::fs::canonicalize(dir)?;
    match listing(&root) {
        // Ids, times and prompts come from session files, which a
        // repository can ship: printed through the sanitizer.
        Ok(text) => {
            print!("{}", sanitize::for_display(&text));
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            let message = format!("hello-tui sessions: {error}");
            eprintln!("{}", sanitize::for_display(&message));
            Ok(ExitCode::FAILURE)
        }
    }
}

/// The workspace's sessions as a table, newest first, with how to resume
/// one: what `hello-tui sessions` prints and `/sessions` shows.
pub fn listing(root: &Path) -> Result<String, session::SessionError> {
    use std::fmt::Write as _;
    let sessions = session::list(root)?;
    if sessions.is_empty() {
        return Ok(format!(
            "No sessions in {} yet.\n",
            session::sessions_dir(root).display()
        ));
    }
    let mut out = format!(
        "{:<24}  {:<20}  {:<6}  {:>8}  first prompt\n",
        "id", "time", "origin", "messages"
    );
    for s in sessions {
        let time: String = s
            .created_at
            .chars()
            .take(19)
            .collect::<String>()
            .replace('T', " ");
        let prompt = sanitize::for_display(s.first_prompt.lines().next().unwrap_or(""));
        let _ = writeln!(
            out,
            "{:<24}  {:<20}  {:<6}  {:>8}  {}",
            s.id,
            time,
            s.origin.label(),
            s.message_count,
            prompt
        );
    }
    out.push_str(
        "Resume one with `hello-tui --resume ID` (or the latest with `--continue`, which \
         prefers tui sessions; `exec --continue` prefers exec ones).\n",
    );
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::exit_line;
    use std::path::Path;

    #[test]
    fn the_exit_line_names_the_workspace_only_when_it_is_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        assert_eq!(
            exit_line("ID", &root, Some(&root)),
            "Session ID saved. Resume it with: hello-tui --resume ID"
        );
        assert_eq!(
            exit_line("ID", Path::new("/w/it's here"), Some(&root)),
            "Session ID saved. Resume it with: hello-tui --resume ID '/w/it'\\''s here'",
            "quoted for the shell"
        );
        assert_eq!(
            exit_line("ID", Path::new("/w/p"), None),
            "Session ID saved. Resume it with: hello-tui --resume ID /w/p"
        );
    }
}
