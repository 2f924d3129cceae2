//! A write waiting for the user: its diff, and in `review` mode the
//! decision on each hunk so far (as `git add -p` walks them: accept, reject,
//! accept or reject the rest). The approval overlay shows it and answers
//! with what to write.

use crate::kernel::caps::{ApprovalDecision, Prior, WriteProposal};
use crate::text_merge::{Hunk, apply_accepted, changed_regions, region_diff};

/// Lines of context around a hunk under review.
const CONTEXT: usize = 3;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteReviewState {
    /// The path as the cell spelled it.
    pub shown: String,
    /// The file did not exist: the write creates it.
    pub creates: bool,
    before: Vec<u8>,
    after: Vec<u8>,
    regions: Vec<Hunk>,
    /// The whole change as a unified diff (what `ask` mode shows).
    whole: String,
    /// Each region as a hunk with context (what `review` mode shows).
    hunks: Vec<String>,
    /// `review` mode: decided hunk by hunk.
    pub per_hunk: bool,
    /// The decisions so far, one per hunk from the first.
    decided: Vec<bool>,
}

/// Where a hunk-by-hunk review stands after a decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    /// The next hunk is shown.
    Next,
    /// Every hunk is decided: the answer to send.
    Done(ApprovalDecision),
}

impl WriteReviewState {
    pub fn new(proposal: &WriteProposal, per_hunk: bool) -> Self {
        let (before, creates) = match &proposal.before {
            Prior::Bytes(bytes) => (bytes.clone(), false),
            Prior::Absent => (Vec::new(), true),
            // Too big to keep: reviewed as a whole rewrite.
            Prior::Unrecorded => (Vec::new(), false),
        };
        let after = proposal.after.clone();
        let regions = changed_regions(&before, &after);
        let hunks = (0..regions.len())
            .map(|index| region_diff(&before, &after, &regions, index, CONTEXT))
            .collect();
        let whole = crate::text_diff::unified(
            &String::from_utf8_lossy(&before),
            &String::from_utf8_lossy(&after),
            Some(&proposal.user_path),
            CONTEXT,
        );
        Self {
            shown: proposal.user_path.clone(),
            creates,
            before,
            after,
            // A write that changes nothing still gets one (empty) hunk to
            // answer, so the question can be closed.
            per_hunk: per_hunk && !regions.is_empty(),
            regions,
            whole,
            hunks,
            decided: Vec::new(),
        }
    }

    /// What the overlay shows now: the whole diff, or the current hunk.
    pub fn text(&self) -> &str {
        if self.per_hunk {
            self.hunks
                .get(self.current())
                .map_or(self.whole.as_str(), String::as_str)
        } else {
            &self.whole
        }
    }

    /// 0-based index of the hunk being decided.
    pub fn current(&self) -> usize {
        self.decided.len()
    }

    pub(crate) fn hunk_count(&self) -> usize {
        self.regions.len()
    }

    /// Decides the current hunk (`rest`: and every later one the same way).
    pub fn decide(&mut self, accept: bool, rest: bool) -> Progress {
        let until = if rest {
            self.regions.len()
        } else {
            self.decided.len() + 1
        };
        while self.decided.len() < until.min(self.regions.len()) {
            self.decided.push(accept);
        }
        if self.decided.len() < self.regions.len() {
            return Progress::Next;
        }
        let accepted = self.decided.iter().filter(|a| **a).count();
        let rejected = self.regions.len() - accepted;
        Progress::Done(if accepted == 0 {
            ApprovalDecision::Deny {
                reason: "the user rejected every hunk of this change".into(),
            }
        } else if rejected == 0 {
            ApprovalDecision::AllowOnce
        } else {
            ApprovalDecision::AllowPart {
                text: apply_accepted(&self.before, &self.after, &self.regions, &self.decided),
                rejected,
            }
        })
    }

    /// Goes back to the previous hunk, undoing its decision.
    pub fn back(&mut self) -> bool {
        self.decided.pop().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn proposal(before: &str, after: &str) -> WriteProposal {
        WriteProposal {
            path: "/w/a.py".into(),
            user_path: "a.py".into(),
            before: Prior::Bytes(before.as_bytes().to_vec()),
            after: after.as_bytes().to_vec(),
        }
    }

    const BEFORE: &str = "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n";
    const AFTER: &str = "one\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\ntwelve\n";

    #[test]
    fn accepting_some_hunks_writes_only_those() {
        let mut review = WriteReviewState::new(&proposal(BEFORE, AFTER), true);
        assert_eq!(review.hunk_count(), 2);
        assert!(
            review.text().starts_with("@@ -1,4 +1,4 @@\n-1\n+one\n"),
            "{}",
            review.text()
        );
        assert_eq!(review.decide(false, false), Progress::Next);
        assert!(review.text().contains("+twelve"), "{}", review.text());
        let Progress::Done(ApprovalDecision::AllowPart { text, rejected }) =
            review.decide(true, false)
        else {
            panic!("expected a partial write")
        };
        assert_eq!(rejected, 1);
        assert_eq!(
            String::from_utf8(text).unwrap(),
            "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\ntwelve\n"
        );
    }

    #[test]
    fn the_rest_and_going_back() {
        let mut review = WriteReviewState::new(&proposal(BEFORE, AFTER), true);
        assert_eq!(review.decide(false, false), Progress::Next);
        assert!(review.back());
        assert_eq!(review.current(), 0);
        assert_eq!(
            review.decide(true, true),
            Progress::Done(ApprovalDecision::AllowOnce)
        );
        let mut review = WriteReviewState::new(&proposal(BEFORE, AFTER), true);
        assert!(matches!(
            review.decide(false, true),
            Progress::Done(ApprovalDecision::Deny { .. })
        ));
    }

    #[test]
    fn ask_mode_shows_the_whole_diff_with_its_path() {
        let review = WriteReviewState::new(&proposal(BEFORE, AFTER), false);
        assert!(
            review.text().starts_with("--- a/a.py\n+++ b/a.py\n"),
            "{}",
            review.text()
        );
        assert!(review.text().contains("+one") && review.text().contains("+twelve"));
    }
}
