//! Where the workbench's diagnostics come from: the store the language servers fill, the service that runs them, and what it has been told about open documents.

use crate::diagnostics::{DiagnosticsService, DiagnosticsStore};
use crate::workbench::Workbench;
use std::collections::HashMap;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;

/// Where the Diagnostics pane's rows come from: every diagnostic by file
/// and source (fed by the diagnostics service's events), the service, and
/// what it has sent the language servers.
#[derive(Default)]
pub struct DiagnosticSources {
    pub store: DiagnosticsStore,
    /// `None` in tests without language servers.
    pub client: Option<DiagnosticsService>,
    /// Buffers the language servers have open, with the generation of the
    /// text they were last sent (`Document::generation`): `didChange` goes
    /// only when it changed, and no text is copied or hashed to find out.
    pub sent: HashMap<PathBuf, u64>,
    /// The last service notice put in the conversation (not repeated).
    pub last_notice: Option<String>,
    /// What `/lsp` shows: each server's state, route and last error.
    pub lsp: crate::workbench::lsp_status::LspStatus,
}

/// The diagnostics service starts after the first files may have opened
/// (a file named on the command line opens before the event loop runs):
/// those are sent to it now, so they get their language server too.
pub fn attach(workbench: &mut Workbench, service: crate::diagnostics::DiagnosticsService) {
    workbench.diagnostic_sources.client = Some(service);
    workbench.diagnostic_sources.sent.clear();
    sync_open_documents(workbench);
}

/// Keeps the language servers' view of the open buffers in step with the
/// editor: `didOpen` for new tabs, `didChange` after edits (so diagnostics
/// follow what the user typed, not only the disk) with the edited ranges
/// when the document still knows them, `didClose` for closed tabs. Called
/// after every editor change.
pub(crate) fn sync_open_documents(workbench: &mut Workbench) {
    let Some(service) = workbench.diagnostic_sources.client.clone() else {
        return;
    };
    let mut open = std::mem::take(&mut workbench.diagnostic_sources.sent);
    let mut still_open = std::collections::HashMap::new();
    for doc in &workbench.editors.tabs {
        if doc.read_only_reason().is_some() {
            continue;
        }
        let path = doc.path().to_path_buf();
        // Files no language server knows are not sent at all.
        let Some(language_id) = crate::diagnostics::language_id_for_path(&path) else {
            continue;
        };
        // A rope clone shares the text: nothing is copied on the UI loop.
        let generation = doc.generation();
        let text = doc.rope().clone();
        match open.remove(&path) {
            None => service.open(path.clone(), language_id, text),
            Some(sent) if sent != generation => match doc.changes_since(sent) {
                Some(changes) => service.edit(path.clone(), text, changes),
                None => service.change(path.clone(), text),
            },
            Some(_) => {}
        }
        still_open.insert(path, generation);
    }
    for closed in open.into_keys() {
        service.close(closed);
    }
    workbench.diagnostic_sources.sent = still_open;
}

/// `/lsp-restart`: every server starts again, and every open buffer is
/// sent again, so a server installed since (one that was missing from
/// `PATH`) picks up the files already open.
pub fn restart_servers(workbench: &mut Workbench) {
    let Some(service) = &workbench.diagnostic_sources.client else {
        workbench.notice("Diagnostics are not running.");
        return;
    };
    service.restart_servers();
    workbench.diagnostic_sources.sent.clear();
    sync_open_documents(workbench);
}

/// `/lsp-large`: the file in the file view goes to its language servers
/// (and on-save checks) even past `diagnostics.large_file_bytes`, from now
/// on this session: it is sent again at once.
pub fn allow_large(workbench: &mut Workbench) {
    let Some(service) = workbench.diagnostic_sources.client.clone() else {
        workbench.notice("Diagnostics are not running.");
        return;
    };
    let Some(path) = workbench
        .editors
        .active()
        .map(|doc| doc.path().to_path_buf())
    else {
        workbench.notice("No file is open: /lsp-large sends the open file.");
        return;
    };
    service.allow_large(path.clone());
    workbench.diagnostic_sources.sent.remove(&path);
    sync_open_documents(workbench);
    let shown = workbench.display_path(&path);
    workbench.notice(&format!(
        "{shown} goes to its language servers whatever its size (until the workbench quits)."
    ));
}

/// A buffer reached the disk: servers get `didSave`, check commands run.
pub fn saved(workbench: &Workbench, path: &Path) {
    if let Some(service) = &workbench.diagnostic_sources.client {
        service.save(path.to_path_buf());
    }
}

/// One row of the diagnostics list (derived from the diagnostics store).
/// Its strings are shared with the store (and, per file, between rows):
/// a row allocates nothing of its own unless its message spans lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiagnosticRow {
    pub severity: crate::diagnostics::Severity,
    /// Workspace-relative path, as shown.
    pub path: Arc<str>,
    /// Where to jump.
    pub abs_path: Arc<Path>,
    /// 1-based, as shown to people.
    pub line: usize,
    pub column: usize,
    /// The message on one line: its parts (a server may send several
    /// lines, e.g. ruff's `help:`) joined by ` · `.
    pub message: Arc<str>,
    /// `source code`, e.g. `ruff F821`.
    pub source: Option<Arc<str>>,
    /// The whole message as the server sent it, and the places it refers
    /// to (`path:line:col message`), for the detail view.
    pub detail: Arc<str>,
    pub related: Vec<String>,
    /// The store's diagnostic this row shows: F8 finds its row by it.
    pub id: crate::diagnostics::DiagnosticId,
}
