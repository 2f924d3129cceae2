//! Conversations saved as append-only JSONL files, one event per line,
//! written and flushed as they happen, so a crash loses at most the line
//! being written.
//!
//! Sessions live in `<workspace>/.hello-tui/sessions/<id>.jsonl`: they belong
//! to the project the way `.git` does (resume "the last session here", move
//! or delete them with the project), not to a global cache. The
//! `.hello-tui/` directory gets a `.gitignore` of `*` so they are never
//! committed by accident. Event payloads never carry provider settings,
//! and every line passes a redaction of key-shaped strings before it is
//! written.

mod event;
mod id;
mod kernel_vars;
mod store;
mod var_store;

pub use event::{
    CellRecord, ChangeRecord, OpenTabs, SessionEvent, SessionOrigin, SessionRecord, TabRecord,
};
pub use id::{is_valid_id, new_id};
pub use kernel_vars::{Kept, VarsPlace, key_path};
pub use store::{
    LoadWarning, LoadedSession, SessionError, SessionSummary, SessionWriter, latest, list, load,
    parse_session, sessions_dir, workbench_dir,
};
pub use var_store::{VarStore, VarsReport};
