//! Session ids sort by creation time as plain strings:
//! `20261130-015500-3f9a` (UTC date, time, 4 random hex digits so two
//! sessions started in the same second do not collide).

use time::OffsetDateTime;

pub fn new_id(now: OffsetDateTime, random: u16) -> String {
    format!(
        "{:04}{:02}{:02}-{:02}{:02}{:02}-{:04x}",
        now.year(),
        u8::from(now.month()),
        now.day(),
        now.hour(),
        now.minute(),
        now.second(),
        random
    )
}

/// Ids name files, so only a safe alphabet is accepted (no `/`, no `..`).
pub fn is_valid_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_sort_by_time() {
        let earlier = OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap();
        let later = OffsetDateTime::from_unix_timestamp(1_800_000_061).unwrap();
        let a = new_id(earlier, 0xffff);
        let b = new_id(later, 0x0000);
        assert_eq!(a, "20270115-080000-ffff");
        assert!(a < b);
        assert!(is_valid_id(&a));
    }

    #[test]
    fn path_like_ids_are_rejected() {
        for id in ["", "../x", "a/b", "a.jsonl", &"x".repeat(65)] {
            assert!(!is_valid_id(id), "{id}");
        }
    }
}
