//! The workbench's side of the hooks (`crate::hooks`): set up at start
//! (the user's, and the workspace's once trusted), what fired told in the
//! conversation when it did anything but pass silently, `/hooks`, and
//! `SessionStart` at start and after `/new`.

use std::sync::Arc;

use crate::hooks::{Fired, Hooks};
use crate::sanitize::for_display;
use crate::workbench::Workbench;
use crate::workbench::event::{AppEvent, AppEventSender};

/// Builds the hooks for the workbench's workspace and settings, reports
/// into `app`, says which of the workspace's own wait for trust, and runs
/// `SessionStart` (`resume` when a session was resumed).
pub fn start(workbench: &mut Workbench, app: &AppEventSender) {
    let hooks = Hooks::load(
        &workbench.workspace_root,
        crate::kernel_setup::child_env(&workbench.settings),
        &workbench.settings.hooks,
        workbench.trust.trust,
        &workbench.trust.store,
    );
    let events = app.clone();
    hooks.set_reporter(Arc::new(move |fired: &Fired| {
        let _ = events.send(AppEvent::Hook(Box::new(fired.clone())));
    }));
    let (waiting, skipped) = hooks.waiting_for_trust();
    if hooks.changed_since_trusted() {
        workbench.notice(&format!(
            "This workspace's hooks ({}) changed since you trusted it: they wait until /trust \
             lists them and you say yes again (/hooks shows them).",
            origins(&waiting)
        ));
    } else if !waiting.is_empty() {
        workbench.notice(&format!(
            "This workspace ships {} hook(s) ({}); they run once you trust it (/trust), and \
             /hooks lists them.",
            waiting.len(),
            origins(&waiting)
        ));
    }
    for line in skipped {
        workbench.notice(&format!("Hooks: {}", for_display(&line)));
    }
    workbench.agent.hooks = hooks.clone();
    let resumed = workbench.agent.has_history();
    spawn_session_start(&hooks, if resumed { "resume" } else { "startup" });
}

/// `/new`: a fresh conversation is a `SessionStart` with source `clear`.
pub fn cleared(workbench: &Workbench) {
    spawn_session_start(&workbench.agent.hooks, "clear");
}

/// The user answered the trust question, which listed the workspace's
/// hooks: they run (and are remembered as approved), or stop running.
pub fn trust_changed(workbench: &mut Workbench, trusted: bool) {
    let hooks = workbench.agent.hooks.clone();
    hooks.set_trusted(trusted, workbench.trust.hooks_shown.clone());
    if trusted
        && let Err(error) = workbench
            .trust
            .store
            .approve_hooks(&workbench.workspace_root, hooks.workspace_identities())
    {
        workbench.notice(&format!(
            "The workspace's hooks run for this session only: {error}"
        ));
    }
}

fn spawn_session_start(hooks: &Hooks, source: &'static str) {
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        let hooks = hooks.clone();
        runtime.spawn(async move { hooks.session_started(source).await });
    }
}

/// A hook did more than pass silently: the conversation says what.
pub fn fired(workbench: &mut Workbench, fired: &Fired) {
    workbench.notice(&fired.summary());
}

/// `/hooks`: what is configured (and what waits for trust), then the last
/// hooks that ran.
pub fn listing(workbench: &Workbench) -> String {
    let hooks = &workbench.agent.hooks;
    let configured = hooks.configured();
    let (waiting, skipped) = hooks.waiting_for_trust();
    let mut text = String::from("Hooks");
    if configured.is_empty() && waiting.is_empty() {
        text.push_str(
            ": none. Add `[[hooks.PreToolUse]]` (matcher, command, timeout) to your config \
             file; see docs/hooks.md.",
        );
        return text;
    }
    text.push('\n');
    let line = |entry: &crate::hooks::HookEntry, detail: String| {
        format!(
            "  {} [{}] `{}` {detail}\n",
            entry.event,
            entry.matcher,
            for_display(&entry.command)
        )
    };
    for entry in &configured {
        let detail = format!("({} s, {})", entry.timeout.as_secs(), entry.origin);
        text.push_str(&line(entry, detail));
    }
    for entry in &waiting {
        text.push_str(&line(
            entry,
            format!("({}) — waits for /trust", entry.origin),
        ));
    }
    for line in &skipped {
        text.push_str(&format!("  not run: {}\n", for_display(line)));
    }
    let fired = hooks.fired();
    if fired.is_empty() {
        text.push_str("None has run yet.");
    } else {
        text.push_str("Last run:\n");
        for one in fired.iter().rev().take(10) {
            text.push_str(&format!("  {}\n", one.summary()));
        }
    }
    text.trim_end().to_owned()
}

fn origins(entries: &[crate::hooks::HookEntry]) -> String {
    let mut names: Vec<String> = entries.iter().map(|e| e.origin.to_string()).collect();
    names.dedup();
    for_display(&names.join(", ")).into_owned()
}
