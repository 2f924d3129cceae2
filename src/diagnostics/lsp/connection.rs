//! One running language server process: spawn, `initialize` handshake,
//! document sync notifications and a polite `shutdown`/`exit` with a kill
//! as the last word.

use std::path::Path;
use std::time::Duration;

use lsp_types::{
    ClientCapabilities, DiagnosticClientCapabilities, GeneralClientCapabilities, InitializeParams,
    PositionEncodingKind, PublishDiagnosticsClientCapabilities, TextDocumentClientCapabilities,
    TextDocumentSyncClientCapabilities, WorkspaceClientCapabilities, WorkspaceFolder,
};
use ropey::Rope;
use serde_json::{Value, json};
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

use super::LspError;
use super::config::{LspTimings, ServerConfig};
use super::transport::{Incoming, LastWords, RpcHandle, spawn_tasks};
use crate::diagnostics::position::ColumnUnit;
use crate::diagnostics::uri::path_to_uri;
use crate::editor::{LinePosition, TextChange};
use crate::sandbox::Confinement;

pub struct Connection {
    pub rpc: RpcHandle,
    pub incoming: mpsc::UnboundedReceiver<Incoming>,
    /// The position encoding the server picked (UTF-16 unless it said otherwise).
    pub encoding: ColumnUnit,
    /// Whether the server wants to be asked (`textDocument/diagnostic`).
    pub pull_diagnostics: bool,
    /// Whether the server takes ranged `didChange` (sync kind 2).
    pub incremental: bool,
    child: Child,
}

impl Connection {
    /// Spawns the server in `root` under `confinement` and completes the
    /// `initialize` handshake (within `timings.initialize_timeout`).
    /// Messages over `timings.max_message_bytes` are dropped.
    pub async fn start(
        config: ServerConfig,
        root: std::path::PathBuf,
        timings: LspTimings,
        confinement: Confinement,
        last_words: LastWords,
    ) -> Result<Connection, LspError> {
        let spawn_error = |source| LspError::Spawn {
            command: config.command.clone(),
            source,
        };
        let mut command = Command::new(&config.command);
        command.args(&config.args).current_dir(&root);
        crate::background::lower_child(&mut command);
        let server = confinement
            .spawn_piped(command, &std::collections::BTreeMap::new())
            .map_err(spawn_error)?;
        let (rpc, incoming) = spawn_tasks(
            &config.name(),
            server.stdout,
            server.stdin,
            server.stderr,
            last_words,
            config.settings.clone(),
            timings.max_message_bytes,
        );
        let params = serde_json::to_value(initialize_params(&root, confinement.is_sandboxed()))
            .map_err(|e| LspError::Protocol(e.to_string()))?;
        let result: Value = super::transport::decode(
            &rpc.request("initialize", params, timings.initialize_timeout)
                .await?,
        )?;
        let capabilities = result.get("capabilities").cloned().unwrap_or(Value::Null);
        let encoding = capabilities
            .get("positionEncoding")
            .and_then(Value::as_str)
            .map_or(ColumnUnit::Utf16, ColumnUnit::from_lsp_name);
        let pull_diagnostics = capabilities
            .get("diagnosticProvider")
            .is_some_and(|p| !p.is_null() && p != &Value::Bool(false));
        let sync = capabilities.get("textDocumentSync");
        let incremental = sync.and_then(|s| {
            s.as_u64()
                .or_else(|| s.get("change").and_then(Value::as_u64))
        }) == Some(2);
        rpc.notify("initialized", json!({}))?;
        Ok(Connection {
            rpc,
            incoming,
            encoding,
            pull_diagnostics,
            incremental,
            child: server.child,
        })
    }

    pub(crate) fn did_open(&self, path: &Path, language_id: &str, version: i32, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {
                "uri": path_to_uri(path), "languageId": language_id, "version": version, "text": text
            }}),
        );
    }

    /// The edits as ranges when the server takes them and they are known
    /// (a keystroke is a few bytes), else the whole text.
    pub(crate) fn did_change(
        &self,
        path: &Path,
        version: i32,
        text: &Rope,
        changes: Option<&[TextChange]>,
    ) {
        let content = match changes.filter(|_| self.incremental) {
            Some(changes) => changes.iter().map(|c| self.ranged(c)).collect(),
            None => vec![json!({"text": text.to_string()})],
        };
        self.notify(
            "textDocument/didChange",
            json!({
                "textDocument": {"uri": path_to_uri(path), "version": version},
                "contentChanges": content
            }),
        );
    }

    fn ranged(&self, change: &TextChange) -> Value {
        let at = |p: &LinePosition| {
            let character = match self.encoding {
                ColumnUnit::Utf8 => p.utf8,
                ColumnUnit::Utf16 => p.utf16,
                ColumnUnit::Chars => p.chars,
            };
            json!({"line": p.line, "character": character})
        };
        json!({
            "range": {"start": at(&change.start), "end": at(&change.end)},
            "text": change.text
        })
    }

    pub(crate) fn did_save(&self, path: &Path) {
        self.notify(
            "textDocument/didSave",
            json!({"textDocument": {"uri": path_to_uri(path)}}),
        );
    }

    pub(crate) fn did_close(&self, path: &Path) {
        self.notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": path_to_uri(path)}}),
        );
    }

    fn notify(&self, method: &str, params: Value) {
        if let Err(error) = self.rpc.notify(method, params) {
            tracing::debug!(server = self.rpc.name(), %error, method, "lsp: notification not sent");
        }
    }

    /// `shutdown`, then `exit`, then a kill if the process is still there.
    pub async fn shutdown(mut self, grace: Duration) {
        let _ = self.rpc.request("shutdown", Value::Null, grace).await;
        let _ = self.rpc.notify("exit", Value::Null);
        if tokio::time::timeout(grace, self.child.wait())
            .await
            .is_err()
        {
            tracing::debug!(
                server = self.rpc.name(),
                "lsp: server ignored exit, killing"
            );
            let _ = self.child.kill().await;
        }
    }

    /// The exit status, if the process has already ended.
    pub(crate) fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }
}

/// `sandboxed`: the server cannot see or signal our process, so it gets no
/// process id. Servers built on `vscode-languageserver` (basedpyright,
/// pyright, typescript-language-server) probe the id every 3 s with
/// `kill(pid, 0)` and exit when it fails — from inside the sandbox it
/// always does. An unconfined server gets it, to exit if we die; a
/// confined one dies with us anyway (the supervisor kills its group, the
/// sandbox's parent-death signal).
#[allow(deprecated)] // root_uri is deprecated in favour of workspace_folders; old servers still read it.
fn initialize_params(root: &Path, sandboxed: bool) -> InitializeParams {
    let root_uri = path_to_uri(root).parse::<lsp_types::Uri>().ok();
    let name = root.file_name().map_or_else(
        || "workspace".to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    InitializeParams {
        process_id: (!sandboxed).then(std::process::id),
        root_uri: root_uri.clone(),
        workspace_folders: root_uri.map(|uri| vec![WorkspaceFolder { uri, name }]),
        client_info: Some(lsp_types::ClientInfo {
            name: "hello-tui".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        }),
        capabilities: ClientCapabilities {
            general: Some(GeneralClientCapabilities {
                position_encodings: Some(vec![
                    PositionEncodingKind::UTF8,
                    PositionEncodingKind::UTF16,
                ]),
                ..Default::default()
            }),
            workspace: Some(WorkspaceClientCapabilities {
                configuration: Some(true),
                workspace_folders: Some(true),
                ..Default::default()
            }),
            text_document: Some(TextDocumentClientCapabilities {
                synchronization: Some(TextDocumentSyncClientCapabilities {
                    did_save: Some(true),
                    ..Default::default()
                }),
                publish_diagnostics: Some(PublishDiagnosticsClientCapabilities {
                    version_support: Some(true),
                    ..Default::default()
                }),
                diagnostic: Some(DiagnosticClientCapabilities {
                    dynamic_registration: Some(false),
                    related_document_support: Some(false),
                }),
                ..Default::default()
            }),
            ..Default::default()
        },
        ..Default::default()
    }
}
