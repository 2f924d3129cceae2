//! The kernel's variables kept across restarts: the host half of the
//! driver's `persist` module, as the `_vars` capability (the driver keeps
//! its proxy to itself: it is no global of the cells).
//!
//! After each cell the kernel sends what changed (a pickle, or a cell's
//! function as source); the store holds it in memory, so a kernel that
//! crashed or timed out gets it back at once, and writes it to the
//! session's folder (`VarsPlace`) once the conversation has one, so
//! `--continue` brings it back too. The store only ever holds bytes: what
//! they mean is the kernel's business, in its sandbox. Disk writes run on
//! a thread of their own, in order, off the kernel's way.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use base64::Engine;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::kernel_vars::VarsPlace;
use crate::kernel::{
    ActionSpec, CallContext, Capability, CapabilityError, CapabilitySpec, KeepLimits, arg_str,
};

/// What the first cell after a restart brought back, for the user.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarsReport {
    pub restored: Vec<String>,
    /// Saved, but the kernel could not load it (name, why).
    pub failed: Vec<(String, String)>,
    /// Never saved (name, why): a module, an open file, over the limit.
    pub not_kept: Vec<(String, String)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Pickle,
    Source,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Pickle => "pickle",
            Kind::Source => "source",
        }
    }

    /// The file a variable of this kind is kept in.
    fn file(self, name: &str) -> String {
        match self {
            Kind::Pickle => format!("{name}.pickle"),
            Kind::Source => format!("{name}.py"),
        }
    }
}

#[derive(Default)]
struct Store {
    saved: BTreeMap<String, (Kind, Arc<Vec<u8>>)>,
    not_kept: BTreeMap<String, String>,
    /// Where each change is written (`None` until the conversation has a
    /// session file).
    place: Option<VarsPlace>,
    /// A resumed session's folder, read at the kernel's first question.
    to_load: Option<VarsPlace>,
}

enum DiskOp {
    Write(VarsPlace, String, Arc<Vec<u8>>),
    Remove(VarsPlace, Vec<String>),
    /// Everything before it is on disk: answered on the channel.
    Flush(std::sync::mpsc::Sender<()>),
}

/// The `_vars` capability. Cheap to clone; every kernel a launcher starts
/// shares one, so a relaunch (a new approval mode) keeps the variables.
#[derive(Clone)]
pub struct VarStore {
    store: Arc<Mutex<Store>>,
    limits: KeepLimits,
    disk: std::sync::mpsc::Sender<DiskOp>,
    reports: Option<mpsc::UnboundedSender<VarsReport>>,
}

impl VarStore {
    pub fn new(limits: KeepLimits) -> Self {
        let (disk, ops) = std::sync::mpsc::channel::<DiskOp>();
        // Ends when the last store is dropped (the channel closes).
        let spawned = std::thread::Builder::new()
            .name("kernel-vars".into())
            .spawn(move || {
                crate::background::lower_this_thread();
                for op in ops {
                    let result = match &op {
                        DiskOp::Write(place, file, bytes) => place.write(file, bytes),
                        DiskOp::Remove(place, files) => {
                            files.iter().try_for_each(|file| place.remove(file))
                        }
                        DiskOp::Flush(done) => {
                            let _ = done.send(());
                            Ok(())
                        }
                    };
                    if let Err(error) = result {
                        tracing::warn!(%error, "keeping a kernel variable on disk");
                    }
                }
            });
        if let Err(error) = spawned {
            tracing::warn!(%error, "no thread to keep kernel variables on disk");
        }
        Self {
            store: Arc::default(),
            limits,
            disk,
            reports: None,
        }
    }

    /// Reports of what a restarted kernel brought back go to `reports`.
    pub fn with_reports(mut self, reports: mpsc::UnboundedSender<VarsReport>) -> Self {
        self.reports = Some(reports);
        self
    }

    pub fn limits(&self) -> KeepLimits {
        self.limits
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Store> {
        self.store
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// From now on, changes are kept in `place` (the conversation's session
    /// file was made), and what the store holds already is written there.
    pub fn keep_in(&self, place: VarsPlace) {
        let mut store = self.lock();
        for (name, (kind, bytes)) in &store.saved {
            let _ = self.disk.send(DiskOp::Write(
                place.clone(),
                kind.file(name),
                Arc::clone(bytes),
            ));
        }
        store.place = Some(place);
    }

    /// Waits (at most `within`) until every change sent so far is on
    /// disk: before the process exits, so the last cell's variables are
    /// kept. False when the wait ran out.
    pub fn flush(&self, within: std::time::Duration) -> bool {
        let (done, flushed) = std::sync::mpsc::channel();
        self.disk.send(DiskOp::Flush(done)).is_ok() && flushed.recv_timeout(within).is_ok()
    }

    /// A resumed session: what `place` holds comes back at the kernel's
    /// first cell, and changes are kept there.
    pub fn resume_from(&self, place: VarsPlace) {
        let mut store = self.lock();
        store.to_load = Some(place.clone());
        store.place = Some(place);
    }

    /// `/new kernel`: nothing comes back, and nothing more is written
    /// where the old conversation keeps its variables.
    pub fn reset(&self) {
        *self.lock() = Store::default();
    }

    /// The bytes kept for `name` (what the kernel sent: a pickle or a
    /// source), if any.
    pub fn kept(&self, name: &str) -> Option<Vec<u8>> {
        self.lock()
            .saved
            .get(name)
            .map(|(_, bytes)| bytes.as_ref().clone())
    }

    fn save(&self, name: &str, kind: Kind, data: &str) -> Result<Value, CapabilityError> {
        check_name(name)?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data)
            .map_err(|e| CapabilityError::InvalidArgument(format!("data is not base64: {e}")))?;
        let size = bytes.len() as u64;
        if size > self.limits.per_variable_bytes {
            return Err(CapabilityError::InvalidArgument(format!(
                "{name} is {size} bytes, over the {} a variable may keep",
                self.limits.per_variable_bytes
            )));
        }
        let mut store = self.lock();
        let others: u64 = store
            .saved
            .iter()
            .filter(|(other, _)| other.as_str() != name)
            .map(|(_, (_, bytes))| bytes.len() as u64)
            .sum();
        if others + size > self.limits.total_bytes {
            return Err(CapabilityError::InvalidArgument(format!(
                "the session's {} bytes for variables are full",
                self.limits.total_bytes
            )));
        }
        let bytes = Arc::new(bytes);
        let old = store
            .saved
            .insert(name.to_owned(), (kind, Arc::clone(&bytes)));
        store.not_kept.remove(name);
        if let Some(place) = store.place.clone() {
            if let Some((old_kind, _)) = old.filter(|(old_kind, _)| *old_kind != kind) {
                let _ = self
                    .disk
                    .send(DiskOp::Remove(place.clone(), vec![old_kind.file(name)]));
            }
            let _ = self.disk.send(DiskOp::Write(place, kind.file(name), bytes));
        }
        Ok(Value::Null)
    }

    fn remove(&self, name: &str) {
        let mut store = self.lock();
        if let Some((kind, _)) = store.saved.remove(name)
            && let Some(place) = store.place.clone()
        {
            let _ = self.disk.send(DiskOp::Remove(place, vec![kind.file(name)]));
        }
    }

    /// What the store holds: the saved variables (name, kind, size) and
    /// the ones not kept (name, why). A resumed session's folder is read
    /// first.
    async fn names(&self) -> Result<Value, CapabilityError> {
        let to_load = self.lock().to_load.take();
        if let Some(place) = to_load {
            let kept = tokio::task::spawn_blocking(move || place.read_all())
                .await
                .map_err(|e| CapabilityError::Failed(e.to_string()))?
                .map_err(|e| CapabilityError::from_io(&e, "the session's variables"))?;
            let mut store = self.lock();
            for file in kept.refused {
                let name = file
                    .rsplit_once('.')
                    .map_or(file.as_str(), |(name, _)| name);
                store.not_kept.insert(
                    name.to_owned(),
                    "not loaded: this workbench did not write it for this session".to_owned(),
                );
            }
            for (file, bytes) in kept.files {
                let (name, kind) = match file.rsplit_once('.') {
                    Some((name, "pickle")) => (name, Kind::Pickle),
                    Some((name, "py")) => (name, Kind::Source),
                    _ => continue,
                };
                if check_name(name).is_ok() {
                    store
                        .saved
                        .entry(name.to_owned())
                        .or_insert((kind, Arc::new(bytes)));
                }
            }
        }
        let store = self.lock();
        let saved: Vec<Value> = store
            .saved
            .iter()
            .map(|(name, (kind, bytes))| json!({"name": name, "kind": kind.name(), "bytes": bytes.len()}))
            .collect();
        let not_kept: Vec<Value> = store
            .not_kept
            .iter()
            .map(|(name, reason)| json!({"name": name, "reason": reason}))
            .collect();
        Ok(json!({"saved": saved, "not_kept": not_kept}))
    }

    fn load(&self, name: &str) -> Result<Value, CapabilityError> {
        let store = self.lock();
        let (kind, bytes) = store
            .saved
            .get(name)
            .ok_or_else(|| CapabilityError::NotFound(format!("no variable {name} is kept")))?;
        Ok(json!({
            "kind": kind.name(),
            "data": base64::engine::general_purpose::STANDARD.encode(bytes.as_slice()),
        }))
    }

    fn report(&self, args: &Value) {
        let names = |key: &str| -> Vec<Value> {
            args.get(key)
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        };
        let restored = names("restored")
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
        let failed = names("failed")
            .iter()
            .filter_map(|v| {
                let name = v.get("name")?.as_str()?;
                let reason = v.get("reason")?.as_str()?;
                Some((name.to_owned(), short(reason)))
            })
            .collect();
        let not_kept = std::mem::take(&mut self.lock().not_kept)
            .into_iter()
            .collect();
        if let Some(reports) = &self.reports {
            let _ = reports.send(VarsReport {
                restored,
                failed,
                not_kept,
            });
        }
    }
}

/// A Python identifier of a sane length: the name is a file name too.
fn check_name(name: &str) -> Result<(), CapabilityError> {
    let mut chars = name.chars();
    let ok = name.len() <= 200
        && chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(CapabilityError::InvalidArgument(format!(
            "not a variable name: {name:?}"
        )))
    }
}

/// A reason as the user reads it: one line, 300 characters at most.
fn short(reason: &str) -> String {
    let line = reason.lines().next().unwrap_or_default();
    line.chars().take(300).collect()
}

impl Capability for VarStore {
    fn spec(&self) -> CapabilitySpec {
        CapabilitySpec {
            name: "_vars".to_owned(),
            description: "The driver's own: variables kept across kernel restarts.".to_owned(),
            actions: vec![
                ActionSpec::new("save", "Keep a variable (base64 data).")
                    .param("name")
                    .param("kind")
                    .param("data"),
                ActionSpec::new("remove", "Forget a variable.").param("name"),
                ActionSpec::new("skip", "A variable that is not kept, and why.")
                    .param("name")
                    .param("reason"),
                ActionSpec::new("forget", "A variable not kept is gone.").param("name"),
                ActionSpec::new("names", "What is kept."),
                ActionSpec::new("load", "One kept variable.").param("name"),
                ActionSpec::new("report", "What a restart brought back.")
                    .param("restored")
                    .param("failed"),
            ],
        }
    }

    fn call(
        &self,
        action: &str,
        args: Value,
        _ctx: CallContext,
    ) -> BoxFuture<'static, Result<Value, CapabilityError>> {
        let this = self.clone();
        let action = action.to_owned();
        Box::pin(async move {
            match action.as_str() {
                "save" => {
                    let kind = match arg_str(&args, "kind")? {
                        "pickle" => Kind::Pickle,
                        "source" => Kind::Source,
                        other => {
                            return Err(CapabilityError::InvalidArgument(format!(
                                "kind must be pickle or source, not {other:?}"
                            )));
                        }
                    };
                    this.save(arg_str(&args, "name")?, kind, arg_str(&args, "data")?)
                }
                "remove" => {
                    this.remove(arg_str(&args, "name")?);
                    Ok(Value::Null)
                }
                "skip" => {
                    let name = arg_str(&args, "name")?;
                    check_name(name)?;
                    this.remove(name);
                    let reason = short(arg_str(&args, "reason")?);
                    this.lock().not_kept.insert(name.to_owned(), reason);
                    Ok(Value::Null)
                }
                "forget" => {
                    this.lock().not_kept.remove(arg_str(&args, "name")?);
                    Ok(Value::Null)
                }
                "names" => this.names().await,
                "load" => this.load(arg_str(&args, "name")?),
                "report" => {
                    this.report(&args);
                    Ok(Value::Null)
                }
                other => Err(CapabilityError::no_action("_vars", other)),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel is model-written code: what it asks the store to keep
    /// can never name a path, nor pass the bounds, nor land anywhere but
    /// the session's own folder.
    #[test]
    fn what_a_cell_asks_to_keep_cannot_steer_or_overflow_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let store = VarStore::new(KeepLimits {
            per_variable_bytes: 8,
            total_bytes: 12,
        });
        let place = VarsPlace {
            workspace: dir.path().to_path_buf(),
            session: "20261206-120000-00ab".into(),
        };
        store.keep_in(place.clone());
        let data = base64::engine::general_purpose::STANDARD.encode(b"12345678");
        for name in [
            "../x",
            "a/b",
            "x.jsonl",
            "",
            ".hidden",
            "1x",
            &"n".repeat(201),
        ] {
            assert!(store.save(name, Kind::Pickle, &data).is_err(), "{name:?}");
        }
        let nine = base64::engine::general_purpose::STANDARD.encode(b"123456789");
        assert!(
            store.save("big", Kind::Pickle, &nine).is_err(),
            "over a variable's bound"
        );
        assert!(store.save("a", Kind::Pickle, &data).is_ok());
        assert!(
            store.save("b", Kind::Pickle, &data).is_err(),
            "over the session's bound"
        );
        assert!(
            store.save("a", Kind::Source, &data).is_ok(),
            "replacing is no growth"
        );
        assert!(store.flush(std::time::Duration::from_secs(5)));
        let kept = place.read_all().unwrap();
        let names: Vec<&str> = kept.files.iter().map(|(name, _)| name.as_str()).collect();
        assert_eq!(names, ["a.py"], "the pickle it replaced is gone");
        let everything = walk(dir.path());
        assert!(
            everything
                .iter()
                .all(|p| p.contains(".hello-tui/sessions/20261206-120000-00ab.vars")),
            "{everything:?}"
        );
    }

    fn walk(dir: &std::path::Path) -> Vec<String> {
        let mut found = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                found.extend(walk(&path));
            } else {
                found.push(path.display().to_string());
            }
        }
        found
    }
}
