//! `file://` URIs ↔ absolute paths, with percent-encoding, so files whose
//! names contain spaces or CJK round-trip through a language server.

use std::path::{Path, PathBuf};

/// Percent-encodes everything except RFC 3986 unreserved characters and `/`.
pub(crate) fn path_to_uri(path: &Path) -> String {
    let mut out = String::from("file://");
    let text = path.to_string_lossy();
    if !text.starts_with('/') {
        out.push('/');
    }
    for byte in text.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(byte as char)
            }
            other => out.push_str(&format!("%{other:02X}")),
        }
    }
    out
}

/// The path of a `file://` URI, or `None` for other schemes or bad encoding.
pub(crate) fn uri_to_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    if !rest.starts_with('/') {
        return None;
    }
    let mut bytes = Vec::with_capacity(rest.len());
    let raw = rest.as_bytes();
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == b'%' {
            let hex = std::str::from_utf8(raw.get(i + 1..i + 3)?).ok()?;
            bytes.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            bytes.push(raw[i]);
            i += 1;
        }
    }
    Some(PathBuf::from(String::from_utf8(bytes).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_spaces_and_cjk() {
        let path = Path::new("/tmp/my project/名前.py");
        let uri = path_to_uri(path);
        assert_eq!(uri, "file:///tmp/my%20project/%E5%90%8D%E5%89%8D.py");
        assert_eq!(uri_to_path(&uri).as_deref(), Some(path));
    }

    #[test]
    fn rejects_other_schemes_and_bad_escapes() {
        assert_eq!(uri_to_path("untitled:Untitled-1"), None);
        assert_eq!(uri_to_path("file:///a%zz"), None);
        assert_eq!(uri_to_path("file:///a%4"), None);
        assert_eq!(
            uri_to_path("file://localhost/x/y.rs"),
            Some(PathBuf::from("/x/y.rs"))
        );
    }
}
