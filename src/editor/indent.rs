//! How wide a tab is drawn and what the Tab key inserts, from the file's
//! `.editorconfig` (via `ec4rs`, which implements the whole spec: globs,
//! sections, `root = true`, the `indent_size`/`tab_width` fallbacks) or the
//! defaults: four columns, spaces.

use std::path::Path;

use ec4rs::property::{IndentSize, IndentStyle, TabWidth};

/// Columns per tab stop and per indent level when nothing says otherwise.
pub(crate) const DEFAULT_WIDTH: usize = 4;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Indentation {
    /// The Tab key inserts a tab character (`indent_style = tab`).
    pub hard_tabs: bool,
    /// Columns between tab stops when drawing.
    pub tab_width: usize,
    /// Columns the Tab key indents by with spaces.
    pub indent_size: usize,
}

impl Default for Indentation {
    fn default() -> Self {
        Self {
            hard_tabs: false,
            tab_width: DEFAULT_WIDTH,
            indent_size: DEFAULT_WIDTH,
        }
    }
}

impl Indentation {
    /// What the `.editorconfig` files above `path` say; an unreadable or
    /// malformed one is ignored (the defaults apply), as editors do.
    pub fn for_file(path: &Path) -> Self {
        let Ok(path) = std::path::absolute(path) else {
            return Self::default();
        };
        let Ok(mut props) = ec4rs::properties_of(&path) else {
            return Self::default();
        };
        props.use_fallbacks();
        let mut out = Self::default();
        let width = |n: usize| n.clamp(1, 16);
        if let Ok(TabWidth::Value(n)) = props.get::<TabWidth>() {
            out.tab_width = width(n);
        }
        match props.get::<IndentSize>() {
            Ok(IndentSize::Value(n)) => out.indent_size = width(n),
            Ok(IndentSize::UseTabWidth) => out.indent_size = out.tab_width,
            Err(_) => out.indent_size = out.tab_width,
        }
        if let Ok(style) = props.get::<IndentStyle>() {
            out.hard_tabs = style == IndentStyle::Tabs;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_section_wins_and_root_stops_the_search() {
        let dir = tempfile::tempdir().unwrap();
        // Above the root: never read.
        std::fs::write(dir.path().join(".editorconfig"), "[*]\nindent_size = 7\n").unwrap();
        let ws = dir.path().join("ws");
        std::fs::create_dir_all(ws.join("src")).unwrap();
        std::fs::write(
            ws.join(".editorconfig"),
            "root = true\n[*]\nindent_style = space\nindent_size = 2\n[*.go]\nindent_style = tab\ntab_width = 8\n",
        )
        .unwrap();
        std::fs::write(ws.join("src/.editorconfig"), "[*.py]\nindent_size = 4\n").unwrap();
        let py = Indentation::for_file(&ws.join("src/a.py"));
        assert_eq!((py.hard_tabs, py.indent_size, py.tab_width), (false, 4, 4));
        let go = Indentation::for_file(&ws.join("src/a.go"));
        assert_eq!((go.hard_tabs, go.tab_width), (true, 8));
        let md = Indentation::for_file(&ws.join("README.md"));
        assert_eq!((md.hard_tabs, md.indent_size, md.tab_width), (false, 2, 2));
        let none = tempfile::tempdir().unwrap();
        assert_eq!(
            Indentation::for_file(&none.path().join("x.rs")),
            Indentation::default()
        );
    }
}
