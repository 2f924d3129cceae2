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
            .spawn(move || {
                crate::background::lower_this_thread();
                run(&inbox, &results)
            })?;
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
        let out = answer(&mut matcher, job.id, job.query, &job.index, job.limit);
        if results.send(out).is_err() {
            break;
        }
    }
}

/// One query's answer, on the worker or inline: the same matching either way.
fn answer(
    matcher: &mut FuzzyMatcher,
    id: u64,
    query: String,
    index: &FileIndex,
    limit: usize,
) -> PickerResults {
    let matches = matcher.matches_index(&query, index, limit);
    PickerResults {
        id,
        query,
        matches,
        matched: matcher.matched_count(),
        total: index.len(),
    }
}

/// The next id a [`FuzzyRequest`] sends (0 is "nothing sent").
static NEXT_QUERY_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// One list's side of the worker protocol (the Ctrl+P picker, the search
/// pane's files scope): the newest query sent and whether its answer has
/// come. Keys and Enter can arrive in one burst, before the worker answers;
/// Enter must act on the query as typed, so [`FuzzyRequest::settle`]
/// matches it inline then instead of leaving an older query's list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FuzzyRequest {
    id: u64,
    /// `None` until the first query is sent.
    sent: Option<String>,
    answered: bool,
}

impl FuzzyRequest {
    /// Sends `query` to the worker; without one (tests, or it is gone) it is
    /// matched here and the answer returned. An unchanged query is not sent
    /// again unless `again` (the index grew). Ids are unique in the
    /// process, so one list never takes another list's answer (the picker
    /// and the search pane share the worker).
    pub fn send(
        &mut self,
        query: &str,
        again: bool,
        worker: Option<&FuzzyWorker>,
        index: &FileIndex,
        limit: usize,
    ) -> Option<PickerResults> {
        if !again && self.sent.as_deref() == Some(query) {
            return None;
        }
        self.id = NEXT_QUERY_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.sent = Some(query.to_owned());
        self.answered = false;
        if worker.is_some_and(|w| w.search(self.id, query, index, limit)) {
            return None;
        }
        self.settle(index, limit)
    }

    /// The newest query's answer matched here, when the worker has not
    /// answered it yet; `None` when the list already shows it.
    pub fn settle(&mut self, index: &FileIndex, limit: usize) -> Option<PickerResults> {
        if self.answered {
            return None;
        }
        let query = self.sent.clone()?;
        self.answered = true;
        Some(answer(
            &mut FuzzyMatcher::new(),
            self.id,
            query,
            index,
            limit,
        ))
    }

    /// Whether `results` answer the newest query and are not shown yet
    /// (older answers, and one already matched inline, are dropped).
    pub fn accept(&mut self, results: &PickerResults) -> bool {
        let newest = results.id == self.id && !self.answered;
        self.answered |= newest;
        newest
    }
}
