//! Keeps at most one run per (command, file) alive: a newer request kills
//! the older run. Owned by the service task; runs report back through a
//! channel, and the scheduler turns their output into events, clearing files
//! a command no longer complains about.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::config::CheckCommand;
use super::matchers::ProblemMatcher;
use super::resolve::to_diagnostics;
use super::runner::{Invocation, RunResult, run};
use crate::diagnostics::event::{CheckState, DiagnosticsEvent};
use crate::diagnostics::lsp::resolve::Within;
use crate::diagnostics::model::Diagnostic;
use crate::diagnostics::which::{Found, which_in};
use crate::sandbox::Confinement;

/// One command over one file (per-file commands) or over the project.
type RunKey = (usize, Option<PathBuf>);

pub(crate) struct RunDone {
    key: RunKey,
    run_id: u64,
    cwd: PathBuf,
    result: RunResult,
}

struct Running {
    run_id: u64,
    handle: JoinHandle<()>,
}

pub(crate) struct CheckScheduler {
    /// Every check command starts under this (see `runner::Invocation`).
    confinement: Confinement,
    checks: Vec<(CheckCommand, Result<ProblemMatcher, String>)>,
    root: PathBuf,
    /// Programs inside the workspace may run (see `crate::trust`).
    trusted: bool,
    events: mpsc::UnboundedSender<DiagnosticsEvent>,
    done_tx: mpsc::UnboundedSender<RunDone>,
    running: HashMap<RunKey, Running>,
    /// Files each run key reported last time, to clear the ones now clean.
    reported: HashMap<RunKey, HashSet<PathBuf>>,
    next_run: u64,
}

/// Why a run is requested: saves only run commands with `on_save`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trigger {
    Save,
    Manual,
}

/// The folders of `path` up to the workspace at `root` (as given: paths
/// come from the same root).
fn within<'a>(path: &'a Path, root: &'a Path) -> Within<'a> {
    Within {
        dir: path.parent().unwrap_or(path),
        roots: [root, root],
        trusted: false,
    }
}

impl CheckScheduler {
    pub fn new(
        checks: Vec<CheckCommand>,
        root: PathBuf,
        events: mpsc::UnboundedSender<DiagnosticsEvent>,
        confinement: Confinement,
        trusted: bool,
    ) -> (CheckScheduler, mpsc::UnboundedReceiver<RunDone>) {
        let (done_tx, done_rx) = mpsc::unbounded_channel();
        let checks = checks
            .into_iter()
            .map(|check| {
                let matcher = check.matcher.build().map_err(|e| e.to_string());
                (check, matcher)
            })
            .collect();
        let scheduler = CheckScheduler {
            checks,
            root,
            trusted,
            confinement,
            events,
            done_tx,
            running: HashMap::new(),
            reported: HashMap::new(),
            next_run: 0,
        };
        (scheduler, done_rx)
    }

    /// The workspace's trust changed: later runs look for their programs
    /// under the new one.
    pub(crate) fn set_trusted(&mut self, trusted: bool) {
        self.trusted = trusted;
    }

    /// Starts every check that applies to `language_id` for `path`.
    pub(crate) fn run_for(&mut self, path: &Path, language_id: &str, trigger: Trigger) {
        let applicable = self.checks.iter().any(|(c, _)| c.applies_to(language_id));
        if !applicable && trigger == Trigger::Manual {
            self.notice(format!("no check command configured for {language_id}"));
        }
        for index in 0..self.checks.len() {
            let (check, matcher) = &self.checks[index];
            if !check.applies_to(language_id) || (trigger == Trigger::Save && !check.on_save) {
                continue;
            }
            let name = check.name.clone();
            let matcher_ok = matcher.as_ref().map(|_| ()).map_err(Clone::clone);
            if let Err(reason) = matcher_ok {
                self.state(&name, CheckState::Failed { reason });
                continue;
            }
            let untrusted = (!self.trusted).then_some(self.root.as_path());
            if let Some(marker) = check
                .project_code
                .as_deref()
                .filter(|_| !self.trusted)
                .and_then(|marker| within(path, &self.root).project_code(marker))
            {
                self.notice(format!(
                    "check `{name}` not run: it runs the project's own code ({marker}) and {}",
                    crate::diagnostics::lsp::resolve::UNTRUSTED
                ));
                continue;
            }
            let program = match which_in(&check.command, untrusted) {
                Found {
                    program: Some(program),
                    ..
                } => program,
                // The workspace's own program, before it is trusted: said
                // every time, a save included (the user expects it to run).
                Found {
                    passed_over: Some(own),
                    ..
                } => {
                    self.notice(format!(
                        "check `{name}` not run: {} is the workspace's and {}",
                        own.display(),
                        crate::diagnostics::lsp::resolve::UNTRUSTED
                    ));
                    continue;
                }
                // Silent on save (a default whose tool is not installed),
                // explained when the user asked for it.
                Found { .. } => {
                    if trigger == Trigger::Manual {
                        self.notice(format!(
                            "check `{name}`: `{}` not found on PATH",
                            check.command
                        ));
                    }
                    continue;
                }
            };
            self.start(index, path, program);
        }
    }

    fn start(&mut self, index: usize, path: &Path, program: PathBuf) {
        let check = &self.checks[index].0;
        let key: RunKey = (index, check.per_file().then(|| path.to_path_buf()));
        let cwd = check.cwd_for(path, &self.root);
        let invocation = Invocation {
            // Resolved here: the child's `PATH` and working directory
            // cannot pick another program.
            program: program.to_string_lossy().into_owned(),
            args: check.args_for(path),
            cwd: cwd.clone(),
            timeout: check.timeout(),
            confinement: self.confinement.clone(),
        };
        let name = check.name.clone();
        if let Some(previous) = self.running.remove(&key)
            && !previous.handle.is_finished()
        {
            previous.handle.abort(); // dropping the run kills its process group
            self.state(&name, CheckState::Superseded);
        }
        self.next_run += 1;
        let run_id = self.next_run;
        let done_tx = self.done_tx.clone();
        let task_key = key.clone();
        let handle = tokio::spawn(async move {
            let result = run(invocation).await;
            let _ = done_tx.send(RunDone {
                key: task_key,
                run_id,
                cwd,
                result,
            });
        });
        self.running.insert(key, Running { run_id, handle });
        self.state(&name, CheckState::Running);
    }

    /// Applies a finished run (ignoring runs that were superseded meanwhile).
    pub fn finish(&mut self, done: RunDone) {
        if self.running.get(&done.key).map(|r| r.run_id) != Some(done.run_id) {
            return;
        }
        self.running.remove(&done.key);
        let Some((check, Ok(matcher))) = self.checks.get(done.key.0) else {
            return;
        };
        let name = check.name.clone();
        let state = match done.result {
            RunResult::TimedOut => CheckState::TimedOut {
                after: check.timeout(),
            },
            RunResult::Failed(reason) => {
                self.notice(format!("check `{name}` failed: {reason}"));
                CheckState::Failed { reason }
            }
            RunResult::Finished { exit_code, output } => {
                let diagnostics = to_diagnostics(matcher.parse(&output), &done.cwd, &name);
                let problems = diagnostics.len();
                self.publish(&done.key, &name, diagnostics);
                CheckState::Finished {
                    problems,
                    exit_code,
                }
            }
        };
        self.state(&name, state);
    }

    fn publish(&mut self, key: &RunKey, name: &str, diagnostics: Vec<Diagnostic>) {
        let mut by_file: HashMap<PathBuf, Vec<Diagnostic>> = HashMap::new();
        if let Some(file) = &key.1 {
            by_file.insert(file.clone(), Vec::new()); // the checked file is always refreshed
        }
        for diagnostic in diagnostics {
            by_file
                .entry(diagnostic.path.to_path_buf())
                .or_default()
                .push(diagnostic);
        }
        let now: HashSet<PathBuf> = by_file.keys().cloned().collect();
        for gone in self.reported.get(key).into_iter().flatten() {
            if !now.contains(gone) {
                by_file.entry(gone.clone()).or_default();
            }
        }
        self.reported.insert(key.clone(), now);
        for (path, diagnostics) in by_file {
            let _ = self.events.send(DiagnosticsEvent::Published {
                source: name.to_string(),
                path,
                diagnostics,
            });
        }
    }

    /// Kills every running check.
    pub fn shutdown(&mut self) {
        for (_, running) in self.running.drain() {
            running.handle.abort();
        }
    }

    fn state(&self, name: &str, state: CheckState) {
        let _ = self.events.send(DiagnosticsEvent::CheckState {
            name: name.to_string(),
            state,
        });
    }

    fn notice(&self, text: String) {
        let _ = self.events.send(DiagnosticsEvent::Notice(text));
    }
}
