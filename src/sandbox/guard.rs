//! Protection for repositories that appear while sandboxed processes run.
//!
//! A spawn binds the protected entries its walk finds ([`super::protected`])
//! read-only in its own mount namespace; a `.git` made later (the user's
//! `git clone` into the workspace while the kernel runs, or a `git init`)
//! would stay writable to processes already running — the kernel lives the
//! whole session, language and MCP servers too — and a hook or
//! `core.fsmonitor` planted there runs at the user's next git command,
//! outside the sandbox.
//!
//! So each session watches its workspace (`notify`, on threads of its own:
//! the TUI, `exec`, `hello-tui sandbox` and tests alike) and keeps a pidfd
//! of every live spawn ([`super::registration`]). When a protected entry
//! appears, a short-lived fork of the workbench joins each live spawn's
//! mount namespace (and user namespace, when not root) through its pidfd —
//! `setns` is refused to a multi-threaded process, a fresh fork has one
//! thread — and binds the entry read-only there
//! ([`super::protected::ReadOnlyBinds::apply`]). A mount follows its
//! folder when a parent is renamed, and cannot be removed from inside, so
//! once made it holds.
//!
//! Races, and how each is met:
//! - a spawn whose walk ran before an entry appeared but which registers
//!   after the guard handled it: spawns send the guard's generation as of
//!   their walk; a stale one gets every protected entry bound on
//!   registration;
//! - `notify` watches a new folder only after reporting it, so entries
//!   made in it at once may never be reported: a new folder is walked when
//!   reported and again [`RECHECK_AFTER`] later;
//! - a lost event queue: the whole workspace is walked again;
//! - left open: between an entry's creation and its bind (milliseconds, a
//!   fork per running spawn) a running confined process can write it, and
//!   one that opened a file or folder inside it in that window keeps what
//!   it opened (the guard looks for such handles after each bind,
//!   [`super::held`], and names their processes). A confined process that
//!   made the repository itself could plant its config before anything is
//!   seen. So the session reports every entry that appeared
//!   ([`Guard::appeared`]), for the user to check.

use std::collections::BTreeSet;
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use notify::event::{EventKind, ModifyKind, RenameMode};
use notify::{RecursiveMode, Watcher};

use super::held::held_from_before;
use super::protected::{self, PROTECTED, ReadOnlyBinds};
use super::registration::{self, Announce};
use super::status::in_forked_child;

/// When a new folder is walked a second time (see the module docs).
pub(crate) const RECHECK_AFTER: Duration = Duration::from_millis(250);

/// Most events handled as one batch (a steady flood still lets spawns
/// and rechecks through).
const MAX_BATCH: usize = 4096;

/// Fewest time between two full walks after watch errors.
const RESCAN_EVERY: Duration = Duration::from_secs(2);

/// A protected entry that appeared during the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Appeared {
    pub path: PathBuf,
    /// Running sandboxed processes it could not be made read-only for.
    pub unprotected_in: usize,
    /// Sandboxed processes (`name (pid N)`) that had something inside it
    /// open from before it was made read-only for them: they can still
    /// write there through it until they end ([`super::held`]).
    pub held_by: Vec<String>,
}

/// What the guard's threads share with the session.
#[derive(Debug, Default)]
struct Shared {
    /// Bumped each time the guard finds entries to protect; spawns read it
    /// before their own walk.
    generation: AtomicU64,
    appeared: Mutex<Vec<Appeared>>,
    /// What keeps the guard from covering everything, for the user.
    trouble: Mutex<Vec<String>>,
}

enum Message {
    Event(notify::Result<notify::Event>),
    Spawned { pidfd: OwnedFd, generation: u64 },
    Stop,
}

/// One session's guard; stops its threads when dropped.
#[derive(Debug)]
pub(crate) struct Guard {
    shared: Arc<Shared>,
    sender: mpsc::Sender<Message>,
    /// The end spawns announce themselves on.
    spawns: Arc<OwnedFd>,
    /// The end the receiving thread reads; shut down on drop to end it.
    session_end: Arc<OwnedFd>,
}

impl Guard {
    /// Starts watching `workspace` (canonical) and listening for spawns.
    pub(crate) fn start(workspace: &Path) -> io::Result<Guard> {
        let (session_end, spawns) = registration::pair()?;
        let session_end = Arc::new(session_end);
        let shared = Arc::new(Shared::default());
        let (sender, receiver) = mpsc::channel();
        let worker = Worker {
            workspace: workspace.to_path_buf(),
            shared: shared.clone(),
            user_namespace: super::namespace::uses_user_namespace(),
            known: BTreeSet::new(),
            live: Vec::new(),
            rechecks: Vec::new(),
            last_rescan: None,
            watch_limit_hit: false,
        };
        let events = sender.clone();
        std::thread::Builder::new()
            .name("sandbox-guard".into())
            .spawn(move || worker.run(receiver, events))?;
        let listener = session_end.clone();
        let spawned = sender.clone();
        std::thread::Builder::new()
            .name("sandbox-spawns".into())
            .spawn(move || {
                while let Ok(Some((pidfd, generation))) = registration::receive(&listener) {
                    if spawned
                        .send(Message::Spawned { pidfd, generation })
                        .is_err()
                    {
                        break;
                    }
                }
            })?;
        Ok(Guard {
            shared,
            sender,
            spawns: Arc::new(spawns),
            session_end,
        })
    }

    /// What a spawn about to walk the workspace sends once it runs. Call it
    /// before the walk.
    pub(crate) fn announce(&self) -> Announce {
        Announce::new(
            self.spawns.clone(),
            self.shared.generation.load(Ordering::SeqCst),
        )
    }

    pub(crate) fn appeared(&self) -> Vec<Appeared> {
        lock(&self.shared.appeared).clone()
    }

    pub(crate) fn trouble(&self) -> Vec<String> {
        lock(&self.shared.trouble).clone()
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let _ = self.sender.send(Message::Stop);
        // SAFETY: shutdown of a live socket; wakes the receiving thread.
        unsafe { libc::shutdown(self.session_end.as_raw_fd(), libc::SHUT_RDWR) };
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The guard's thread: handles events and spawns one at a time, so a
/// spawn is either live when an entry is handled or compares generations.
struct Worker {
    workspace: PathBuf,
    shared: Arc<Shared>,
    user_namespace: bool,
    /// Entries read-only in every live spawn (or there before it started).
    known: BTreeSet<PathBuf>,
    /// pidfds of the live spawns (their reapers).
    live: Vec<OwnedFd>,
    /// New folders to walk again, and when.
    rechecks: Vec<(Instant, PathBuf)>,
    /// When the last full walk after a watch error was.
    last_rescan: Option<Instant>,
    /// Whether the watch limit was reported already.
    watch_limit_hit: bool,
}

impl Worker {
    fn run(mut self, receiver: mpsc::Receiver<Message>, events: mpsc::Sender<Message>) {
        let handler = move |event| {
            let _ = events.send(Message::Event(event));
        };
        let config = notify::Config::default().with_follow_symlinks(false);
        // Kept alive while the loop runs; dropped (and its thread ended) after.
        let _watcher = notify::RecommendedWatcher::new(handler, config)
            .and_then(|mut watcher| {
                watcher.watch(&self.workspace, RecursiveMode::Recursive)?;
                Ok(watcher)
            })
            .map_err(|error| {
                self.trouble(format!(
                    "a `.git` made in the workspace while a sandboxed process runs stays \
                     writable to it: the workspace cannot be watched ({error})"
                ))
            })
            .ok();
        match protected::all_protected(&self.workspace) {
            Ok(found) => self.known.extend(found),
            Err(error) => self.trouble(error.to_string()),
        }
        // Spawns that walked before the watch began compare unequal.
        self.shared.generation.fetch_add(1, Ordering::SeqCst);
        loop {
            let wait = self
                .rechecks
                .iter()
                .map(|(due, _)| due.saturating_duration_since(Instant::now()))
                .min()
                .unwrap_or(Duration::from_secs(3600));
            match receiver.recv_timeout(wait) {
                Ok(Message::Stop) | Err(RecvTimeoutError::Disconnected) => break,
                Ok(Message::Event(Ok(event))) => {
                    let mut events = vec![event];
                    // What else is queued: a burst (a clone, an unpacked
                    // archive) is handled as one.
                    let mut after = None;
                    while events.len() < MAX_BATCH
                        && let Ok(next) = receiver.try_recv()
                    {
                        match next {
                            Message::Event(Ok(event)) => events.push(event),
                            other => {
                                after = Some(other);
                                break;
                            }
                        }
                    }
                    self.on_events(&events);
                    match after {
                        Some(Message::Stop) => break,
                        Some(Message::Event(Err(error))) => self.lost(&error),
                        Some(Message::Spawned { pidfd, generation }) => {
                            self.on_spawn(pidfd, generation)
                        }
                        Some(Message::Event(Ok(_))) | None => {}
                    }
                }
                Ok(Message::Event(Err(error))) => self.lost(&error),
                Ok(Message::Spawned { pidfd, generation }) => self.on_spawn(pidfd, generation),
                Err(RecvTimeoutError::Timeout) => {}
            }
            self.due_rechecks();
        }
    }

    /// The watcher reported an error (events may be lost): walk it all.
    fn lost(&mut self, error: &notify::Error) {
        tracing::warn!("sandbox guard: watching the workspace: {error}");
        if matches!(error.kind, notify::ErrorKind::MaxFilesWatch) && !self.watch_limit_hit {
            self.watch_limit_hit = true;
            self.trouble(
                "the workspace has more folders than this user may watch \
                 (fs.inotify.max_user_watches): a `.git` made in one not watched while a \
                 sandboxed process runs is made read-only for it only at the next full walk"
                    .to_owned(),
            );
        }
        // One full walk per error burst (each new folder past the limit
        // reports one): now, or RESCAN_EVERY after the last one.
        match self.last_rescan {
            Some(at) if at.elapsed() < RESCAN_EVERY => {
                let next = at + RESCAN_EVERY;
                if !self
                    .rechecks
                    .iter()
                    .any(|(when, path)| *when == next && *path == self.workspace)
                {
                    self.rechecks.push((next, self.workspace.clone()));
                }
            }
            _ => {
                self.last_rescan = Some(Instant::now());
                self.rescan();
            }
        }
    }

    fn trouble(&self, text: String) {
        tracing::warn!("sandbox guard: {text}");
        lock(&self.shared.trouble).push(text);
    }

    fn on_spawn(&mut self, pidfd: OwnedFd, generation: u64) {
        if !is_alive(&pidfd) {
            return;
        }
        if generation != self.shared.generation.load(Ordering::SeqCst) {
            // Its walk may have missed what the guard protected since.
            match protected::all_protected(&self.workspace) {
                Ok(found) => match self.bind_in(&pidfd, &found) {
                    // It ended meanwhile.
                    Err(error) if error.raw_os_error() == Some(libc::ESRCH) => return,
                    Err(error) => self.trouble(format!(
                        "a sandboxed process started while a `.git` appeared could not \
                         get it read-only: {error}"
                    )),
                    Ok(()) => {}
                },
                Err(error) => self.trouble(error.to_string()),
            }
        }
        // Spawns that ended are let go here too, or a session running
        // many short commands would keep an fd for each.
        self.live.retain(is_alive);
        self.live.push(pidfd);
    }

    fn on_events(&mut self, events: &[notify::Event]) {
        if events.iter().any(notify::Event::need_rescan) {
            self.rescan();
            return;
        }
        // Each path looked at once, removals first (a path removed and
        // made again in one burst is new).
        let mut looked_at = Vec::new();
        for event in events {
            match event.kind {
                EventKind::Remove(_) | EventKind::Modify(ModifyKind::Name(RenameMode::From)) => {
                    self.forget(&event.paths);
                }
                EventKind::Modify(ModifyKind::Name(RenameMode::Both)) => {
                    self.forget(&event.paths[..1.min(event.paths.len())]);
                    looked_at.extend(event.paths.get(1).cloned());
                }
                EventKind::Create(_)
                | EventKind::Modify(ModifyKind::Name(_))
                | EventKind::Any
                | EventKind::Other => {
                    for path in &event.paths {
                        if path.symlink_metadata().is_err() {
                            self.forget(std::slice::from_ref(path));
                        }
                    }
                    looked_at.extend(event.paths.iter().cloned());
                }
                // A protected name can be made by a rename or a creation only.
                _ => {}
            }
        }
        looked_at.sort();
        looked_at.dedup();
        // A folder walked covers what lies in it (sorted: parents first).
        let mut walked: Vec<PathBuf> = Vec::new();
        let mut found = Vec::new();
        for path in looked_at {
            if walked.iter().any(|folder| path.starts_with(folder)) {
                continue;
            }
            if path.symlink_metadata().is_ok_and(|meta| meta.is_dir()) {
                walked.push(path.clone());
            }
            found.extend(self.look_at(&path, true));
        }
        self.protect(found);
    }

    /// What needs protecting because of `path`: the protected entry it is
    /// or lies in, else (a folder) what lies in it. A new folder is walked
    /// again later.
    fn look_at(&mut self, path: &Path, recheck: bool) -> Vec<PathBuf> {
        let Ok(relative) = path.strip_prefix(&self.workspace) else {
            return Vec::new();
        };
        if self.known.iter().any(|known| path.starts_with(known)) {
            return Vec::new();
        }
        // The first protected name on the way is the entry to bind.
        let mut entry = self.workspace.clone();
        for part in relative.components() {
            entry.push(part);
            if PROTECTED.iter().any(|name| part.as_os_str() == *name) {
                return protected::entry_protected(&entry, &self.workspace);
            }
        }
        if !path.symlink_metadata().is_ok_and(|meta| meta.is_dir()) {
            return Vec::new();
        }
        if recheck {
            self.rechecks
                .push((Instant::now() + RECHECK_AFTER, path.to_path_buf()));
        }
        protected::protected_below(&self.workspace, path).unwrap_or_else(|error| {
            self.trouble(error.to_string());
            Vec::new()
        })
    }

    fn due_rechecks(&mut self) {
        let now = Instant::now();
        let (due, later) = std::mem::take(&mut self.rechecks)
            .into_iter()
            .partition(|(when, _)| *when <= now);
        self.rechecks = later;
        let mut due: Vec<PathBuf> = due.into_iter().map(|(_, path)| path).collect();
        due.sort();
        due.dedup();
        // A folder walked covers what lies in it (sorted: parents first).
        let mut walked: Vec<PathBuf> = Vec::new();
        let mut found = Vec::new();
        for path in due {
            if !walked.iter().any(|folder| path.starts_with(folder)) {
                found.extend(self.look_at(&path, false));
                walked.push(path);
            }
        }
        self.protect(found);
    }

    /// Entries no longer there (removed, renamed away) are no longer
    /// known: one made again at the same path is new.
    fn forget(&mut self, paths: &[PathBuf]) {
        for path in paths {
            self.known.retain(|known| !known.starts_with(path));
        }
    }

    /// After a lost event queue: every protected entry, bound wherever it
    /// is not read-only yet.
    fn rescan(&mut self) {
        match protected::all_protected(&self.workspace) {
            Ok(found) => {
                self.known.clear();
                self.protect(found);
            }
            Err(error) => self.trouble(error.to_string()),
        }
    }

    /// Makes the new ones of `found` read-only in every live spawn and
    /// reports them.
    fn protect(&mut self, found: Vec<PathBuf>) {
        let new: Vec<PathBuf> = found
            .into_iter()
            .filter(|path| !self.known.contains(path))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        if new.is_empty() {
            return;
        }
        self.shared.generation.fetch_add(1, Ordering::SeqCst);
        self.live.retain(is_alive);
        // Held from before the first bind until the entries are recorded:
        // a cell that already meets the read-only bind and then asks what
        // appeared (the notice after each cell) waits for the answer
        // instead of reading the list from before.
        let shared = Arc::clone(&self.shared);
        let mut appeared = lock(&shared.appeared);
        let mut unprotected_in = 0;
        let mut held = Vec::new();
        for pidfd in &self.live {
            match self.bind_in(pidfd, &new) {
                Ok(()) => held.extend(held_from_before(pidfd, &new)),
                // It ended meanwhile: nothing left to protect there.
                Err(error) if error.raw_os_error() == Some(libc::ESRCH) => {}
                Err(error) => {
                    tracing::warn!("sandbox guard: binding {new:?} read-only: {error}");
                    unprotected_in += 1;
                }
            }
        }
        for path in new {
            let held_by: Vec<String> = held
                .iter()
                .filter(|held| held.entry == path)
                .map(|held| held.process.clone())
                .collect();
            // In the log whatever the front end (`exec` shows no notice).
            tracing::warn!(
                "sandbox guard: {} appeared in the workspace; made read-only for {} running \
                 sandboxed processes ({unprotected_in} failed){}",
                path.display(),
                self.live.len(),
                if held_by.is_empty() {
                    String::new()
                } else {
                    format!("; held open from before by {}", held_by.join(", "))
                }
            );
            if !appeared.iter().any(|seen| seen.path == path) {
                appeared.push(Appeared {
                    path: path.clone(),
                    unprotected_in,
                    held_by,
                });
            }
            self.known.insert(path);
        }
    }

    /// Binds `paths` read-only in the namespaces of the spawn `pidfd`
    /// holds, from a fork that joins them.
    fn bind_in(&self, pidfd: &OwnedFd, paths: &[PathBuf]) -> io::Result<()> {
        let binds = ReadOnlyBinds::new(&self.workspace, paths)?;
        let namespaces = if self.user_namespace {
            libc::CLONE_NEWUSER | libc::CLONE_NEWNS
        } else {
            libc::CLONE_NEWNS
        };
        let pidfd = pidfd.as_raw_fd();
        in_forked_child(|| {
            // SAFETY: setns takes an fd and flags; the fork has one thread.
            if unsafe { libc::setns(pidfd, namespaces) } != 0 {
                return Err(io::Error::last_os_error());
            }
            binds.apply()
        })
    }
}

/// Whether the process a pidfd holds still runs (a pidfd turns readable
/// when it exits).
fn is_alive(pidfd: &OwnedFd) -> bool {
    let mut poll = libc::pollfd {
        fd: pidfd.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: polls one live pollfd without waiting.
    let ready = unsafe { libc::poll(&mut poll, 1, 0) };
    ready == 0
}
