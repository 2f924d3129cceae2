//! Hashes. `fnv1a`: a stable 64-bit FNV-1a, the same across runs and Rust
//! releases (unlike `DefaultHasher`), so it can name recovery files.
//! `content`: a fingerprint of file content compared only within one run,
//! where speed matters (FNV-1a takes one multiply per byte: ~50 ms for a
//! 37 MB file; foldhash reads 16 bytes a step). It hashes `BLOCK`-sized
//! blocks and folds their hashes, so a big file read in pieces on several
//! threads is hashed by those threads, block by block, with the same result.

use std::hash::{BuildHasher, Hasher};

/// The unit of `content`: pieces of a file hashed apart start at multiples
/// of it.
pub const BLOCK: usize = 4 << 20;

const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const PRIME: u64 = 0x0000_0100_0000_01b3;

pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(OFFSET, |h, b| (h ^ u64::from(*b)).wrapping_mul(PRIME))
}

/// Fingerprint of file content, for "changed on disk?" within this run.
pub fn content(bytes: &[u8]) -> u64 {
    fold(blocks(bytes), bytes.len())
}

/// The hashes of the blocks of `bytes` (a piece starting at a multiple of
/// `BLOCK`).
pub fn blocks(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks(BLOCK)
        .map(|block| foldhash::fast::FixedState::with_seed(0).hash_one(block))
        .collect()
}

/// The content hash from every block's hash, in order, and the length.
pub fn fold(blocks: impl IntoIterator<Item = u64>, len: usize) -> u64 {
    let mut h = foldhash::fast::FixedState::with_seed(1).build_hasher();
    h.write_usize(len);
    for block in blocks {
        h.write_u64(block);
    }
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_vectors() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_ne!(fnv1a(b"ab"), fnv1a(b"ba"));
        assert_eq!(content(b"same"), content(b"same"));
        assert_ne!(content(b"ab"), content(b"ba"));
    }

    /// Hashed in pieces (as `disk::read` does on several threads), a text
    /// gets the hash it gets whole; a change in any block changes it.
    #[test]
    fn pieces_hash_as_the_whole() {
        let text: Vec<u8> = (0..BLOCK * 2 + 12345).map(|i| (i % 251) as u8).collect();
        let pieces: Vec<u64> = text.chunks(BLOCK).flat_map(blocks).collect();
        assert_eq!(fold(pieces, text.len()), content(&text));
        let mut changed = text.clone();
        changed[BLOCK + 7] ^= 1;
        assert_ne!(content(&changed), content(&text));
        assert_ne!(content(&text[..BLOCK]), content(&text));
    }
}
