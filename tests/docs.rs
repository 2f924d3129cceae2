//! The user docs stay true where a program can tell: `docs/keys.md` is the
//! keymap F1 shows.

use std::path::{Path, PathBuf};

const BEGIN: &str = "<!-- generated: keys -->";
const END: &str = "<!-- end generated -->";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `docs/keys.md` between its markers is exactly what the keymap generates.
/// `UPDATE_DOCS=1 cargo test --test docs` writes it.
#[test]
fn keys_md_is_generated_from_the_keymap() {
    let path = root().join("docs/keys.md");
    let text = read(&path);
    let (Some(start), Some(end)) = (text.find(BEGIN), text.find(END)) else {
        panic!("docs/keys.md lacks the markers {BEGIN} … {END}");
    };
    let start = start + BEGIN.len();
    let current = &text[start..end];
    let generated = format!("\n{}\n", hello_tui::keymap::markdown().trim());
    if current == generated {
        return;
    }
    if std::env::var_os("UPDATE_DOCS").is_some() {
        let updated = format!("{}{generated}{}", &text[..start], &text[end..]);
        std::fs::write(&path, updated).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        return;
    }
    panic!(
        "docs/keys.md is not the keymap (src/keymap.rs) any more; \
         regenerate it with `UPDATE_DOCS=1 cargo test --test docs` and commit it"
    );
}
