//! Runs fuzzy matching off the UI thread: the UI sends every keystroke's
//! query with a snapshot of the index, the worker skips all but the newest
//! pending query, and results come back as messages tagged with the query's
//! id so the UI can drop any that are already stale.
//!
//! Measured (see `benches/workspace.rs`) a query over 100 000 paths takes
//! several milliseconds, and tens on a loaded machine: too much to spend on
//! the UI loop per keystroke.

use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;

use tokio::sync::mpsc::UnboundedSender;

use super::fuzzy::{FuzzyMatcher, PathMatch};
use super::index::FileIndex;

/// One query's results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickerResults {
    /// The id given to [`FuzzyWorker::search`]; show only the newest.
    pub id: u64,
    pub query: String,
    /// Best first, at most the requested limit.
    pub matches: Vec<PathMatch>,
    /// How many paths matched in all.
    pub matched: usize,
    /// How many paths were searched.
    pub total: usize,
}

struct Job {
    id: u64,
    query: String,
    index: FileIndex,
    limit: usize,
}

/// A background fuzzy matcher. Dropping it stops the thread.
#[derive(Debug)]
pub struct FuzzyWorker {
    jobs: Option<Sender<Job>>,
    thread: Option<JoinHandle<()>>,
}

impl FuzzyWorker {
    pub fn spawn(results: UnboundedSender<PickerResults>) -> std::io::Result<Self> {
        let (jobs, inbox) = channel();
        let thread = std::thread::Builder::new()
            .name("workspace-picker".into())
            .spawn(move || run(&inbox, &results))?;
        Ok(Self {
            jobs: Some(jobs),
            thread: Some(thread),
        })
    }

    /// Queues a query; `index` is a cheap clone of the UI's index. Returns
    /// false if the worker is gone (the UI can fall back to matching inline).
    pub fn search(&self, id: u64, query: &str, index: &FileIndex, limit: usize) -> bool {
        let job = Job {
            id,
            query: query.to_string(),
            index: index.clone(),
            limit,
        };
        self.jobs
            .as_ref()
            .is_some_and(|jobs| jobs.send(job).is_ok())
    }
}

impl Drop for FuzzyWorker {
    fn drop(&mut self) {
        // Closing the job channel ends the worker's loop.
        self.jobs.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run(inbox: &Receiver<Job>, results: &UnboundedSender<PickerResults>) {
    let mut matcher = FuzzyMatcher::new();
    while let Ok(mut job) = inbox.recv() {
        // Only the latest query survives: skip everything already superseded.
        while let Ok(newer) = inbox.try_recv() {
            job = newer;
        }
        let matches = matcher.matches_index(&job.query, &job.index, job.limit);
        let out = PickerResults {
            id: job.id,
            query: job.query,
            matches,
            matched: matcher.matched_count(),
            total: job.index.len(),
        };
        if results.send(out).is_err() {
            break;
        }
    }
}
