//! Themes: `themes/*.toml` files mapped to semantic styles.
//!
//! Panes never pick colours themselves; they ask the theme for a *role*
//! ("selection", "error", "dirty marker"), so a theme file can restyle the
//! whole workbench and `NO_COLOR` can strip colour in one place.

use std::path::{Path, PathBuf};

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;
use serde::de::{self, Deserializer};
use thiserror::Error;

/// The built-in themes, embedded so the binary works without its source tree.
const BUILTIN: &[(&str, &str)] = &[
    ("dark", include_str!("../themes/dark.toml")),
    ("light", include_str!("../themes/light.toml")),
];

/// The name of the theme used when nothing else is configured.
pub(crate) const DEFAULT_THEME: &str = "dark";

#[derive(Debug, Error)]
pub enum ThemeError {
    #[error("theme file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("theme file {file}:{line}:{column}: field `{field}`: {message}")]
    Invalid {
        file: String,
        line: usize,
        column: usize,
        field: String,
        message: String,
    },
    #[error("unknown theme `{0}` (built-in themes: dark, light; or give a path to a .toml file)")]
    Unknown(String),
}

/// Declares the role fields once; the macro generates the struct (each field
/// deserialised from a style spec) and the list used to strip colour.
macro_rules! theme_roles {
    ($($(#[$doc:meta])* $role:ident),* $(,)?) => {
        /// Semantic styles, one per role a pane can ask for.
        #[derive(Debug, Clone, PartialEq, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct Roles {
            $($(#[$doc])* #[serde(deserialize_with = "style_from_spec")] pub $role: Style,)*
        }

        impl Roles {
            fn all_mut(&mut self) -> Vec<(&'static str, &mut Style)> {
                vec![$((stringify!($role), &mut self.$role)),*]
            }
        }
    };
}

theme_roles! {
    /// Border of a pane that does not have focus.
    pane_border,
    /// Border of the focused pane.
    focused_border,
    title,
    focused_title,
    /// Ordinary body text.
    text,
    /// Secondary text: empty states, hints, metadata.
    muted,
    selection,
    cursor,
    cursor_line,
    line_number,
    dirty_marker,
    error,
    warning,
    info,
    hint,
    user_message,
    assistant_message,
    tool_message,
    status_bar,
    /// Key names inside the status bar hints.
    status_key,
    overlay_border,
    /// Matched characters in search and picker results.
    match_highlight,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Theme {
    pub name: String,
    /// Name of the syntect theme used for code highlighting.
    pub syntax_theme: String,
    pub roles: Roles,
}

impl Theme {
    /// Resolves `--theme`: a built-in name, or a path to a TOML file.
    pub fn load(name_or_path: &str) -> Result<Self, ThemeError> {
        if let Some((name, text)) = BUILTIN.iter().find(|(name, _)| *name == name_or_path) {
            return Self::parse(text, &format!("<built-in {name}>"));
        }
        let path = Path::new(name_or_path);
        let looks_like_path = name_or_path.ends_with(".toml") || name_or_path.contains('/');
        if !looks_like_path {
            return Err(ThemeError::Unknown(name_or_path.to_owned()));
        }
        let text = std::fs::read_to_string(path).map_err(|source| ThemeError::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// The default theme. It is embedded in the binary and covered by the
    /// unit tests, so failing to parse it is a build defect, not a user error.
    pub fn builtin_default() -> Self {
        #[allow(clippy::expect_used)]
        Self::load(DEFAULT_THEME).expect("the embedded default theme is valid (see theme tests)")
    }

    /// Parses theme TOML; `file` only names the source in error messages.
    pub fn parse(text: &str, file: &str) -> Result<Self, ThemeError> {
        parse_toml_with_path(text).map_err(|e| ThemeError::Invalid {
            file: file.to_owned(),
            line: e.line,
            column: e.column,
            field: e.field,
            message: e.message,
        })
    }

    /// Honours `NO_COLOR` (https://no-color.org): drops every colour but keeps
    /// modifiers, and gives the roles whose *meaning* is colour a modifier so
    /// selection, focus, dirty state and severity stay visible.
    pub fn without_colors(mut self) -> Self {
        for (role, style) in self.roles.all_mut() {
            let kept = style.add_modifier;
            let extra = match role {
                "selection" | "cursor" | "status_bar" | "status_key" => Modifier::REVERSED,
                "focused_border" | "focused_title" | "dirty_marker" | "error" => Modifier::BOLD,
                "cursor_line" | "match_highlight" => Modifier::UNDERLINED,
                "muted" | "line_number" | "pane_border" => Modifier::DIM,
                _ => Modifier::empty(),
            };
            *style = Style::default().add_modifier(kept | extra);
        }
        self
    }
}

/// A TOML error located by line, column and the dotted path of the field.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct TomlFieldError {
    pub line: usize,
    pub column: usize,
    pub field: String,
    pub message: String,
}

/// Deserialises TOML and reports *which field* failed and *where*, so a user
/// editing a config or theme file is pointed at the exact line.
pub(crate) fn parse_toml_with_path<T: serde::de::DeserializeOwned>(
    text: &str,
) -> Result<T, TomlFieldError> {
    let deserializer = match toml::de::Deserializer::parse(text) {
        Ok(d) => d,
        Err(e) => return Err(locate(text, &e, String::from("(syntax)"))),
    };
    serde_path_to_error::deserialize(deserializer).map_err(|e| {
        let field = e.path().to_string();
        locate(text, e.inner(), field)
    })
}

fn locate(text: &str, error: &toml::de::Error, field: String) -> TomlFieldError {
    let (line, column) = error
        .span()
        .map(|span| line_col(text, span.start))
        .unwrap_or((1, 1));
    TomlFieldError {
        line,
        column,
        field,
        message: error.message().trim().to_owned(),
    }
}

/// 1-based line and column of a byte offset.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rsplit('\n')
        .next()
        .map(|l| l.chars().count() + 1)
        .unwrap_or(1);
    (line, column)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StyleSpec {
    fg: Option<String>,
    bg: Option<String>,
    #[serde(default)]
    modifiers: Vec<String>,
}

fn style_from_spec<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Style, D::Error> {
    let spec = StyleSpec::deserialize(deserializer)?;
    let mut style = Style::default();
    if let Some(fg) = &spec.fg {
        style = style.fg(parse_color(fg).map_err(de::Error::custom)?);
    }
    if let Some(bg) = &spec.bg {
        style = style.bg(parse_color(bg).map_err(de::Error::custom)?);
    }
    for name in &spec.modifiers {
        style = style.add_modifier(parse_modifier(name).map_err(de::Error::custom)?);
    }
    Ok(style)
}

fn parse_color(text: &str) -> Result<Color, String> {
    text.parse::<Color>().map_err(|_| {
        format!("invalid colour `{text}` (use a name like \"red\", an index 0-255, or \"#rrggbb\")")
    })
}

fn parse_modifier(name: &str) -> Result<Modifier, String> {
    Ok(match name {
        "bold" => Modifier::BOLD,
        "dim" => Modifier::DIM,
        "italic" => Modifier::ITALIC,
        "underlined" => Modifier::UNDERLINED,
        "reversed" => Modifier::REVERSED,
        "crossed_out" => Modifier::CROSSED_OUT,
        other => {
            return Err(format!(
                "unknown modifier `{other}` (bold, dim, italic, underlined, reversed, crossed_out)"
            ));
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_themes_parse() {
        for (name, _) in BUILTIN {
            let theme = Theme::load(name).expect("built-in theme parses");
            assert_eq!(&theme.name, name);
        }
    }

    #[test]
    fn dark_theme_selection_has_background() {
        let theme = Theme::load("dark").unwrap();
        assert_eq!(theme.roles.selection.bg, Some(Color::Rgb(0x3e, 0x44, 0x51)));
        assert!(theme.roles.error.add_modifier.contains(Modifier::BOLD));
    }

    #[test]
    fn bad_colour_names_file_field_and_line() {
        let text = include_str!("../themes/dark.toml").replace("#e06c75", "blurple");
        let err = Theme::parse(&text, "mine.toml").unwrap_err().to_string();
        assert!(err.contains("mine.toml:"), "{err}");
        assert!(err.contains("roles.error"), "{err}");
        assert!(err.contains("blurple"), "{err}");
        let line = text.lines().position(|l| l.contains("blurple")).unwrap() + 1;
        assert!(err.contains(&format!("mine.toml:{line}:")), "{err}");
    }

    #[test]
    fn missing_role_is_named() {
        let text: String = include_str!("../themes/dark.toml")
            .lines()
            .filter(|l| !l.starts_with("selection"))
            .collect::<Vec<_>>()
            .join("\n");
        let err = Theme::parse(&text, "t.toml").unwrap_err().to_string();
        assert!(err.contains("selection"), "{err}");
    }

    #[test]
    fn unknown_modifier_and_unknown_role_are_errors() {
        let text = include_str!("../themes/dark.toml").replace("\"dim\"", "\"blink\"");
        let text = text.replace("[\"bold\", \"underlined\"]", "[\"sparkle\"]");
        let err = Theme::parse(&text, "t.toml").unwrap_err().to_string();
        assert!(err.contains("sparkle"), "{err}");
        let text = format!(
            "{}\nshiny = {{ fg = \"red\" }}\n",
            include_str!("../themes/dark.toml")
        );
        let err = Theme::parse(&text, "t.toml").unwrap_err().to_string();
        assert!(err.contains("shiny"), "{err}");
    }

    #[test]
    fn theme_from_path_and_unknown_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mine.toml");
        std::fs::write(&path, include_str!("../themes/light.toml")).unwrap();
        let theme = Theme::load(path.to_str().unwrap()).unwrap();
        assert_eq!(theme.name, "light");
        assert!(matches!(
            Theme::load("solarized"),
            Err(ThemeError::Unknown(_))
        ));
        let missing = dir.path().join("nope.toml");
        let err = Theme::load(missing.to_str().unwrap())
            .unwrap_err()
            .to_string();
        assert!(err.contains("nope.toml"), "{err}");
    }

    #[test]
    fn no_color_keeps_meaning_without_colour() {
        let theme = Theme::load("dark").unwrap().without_colors();
        let mut copy = theme.clone();
        for (_, style) in copy.roles.all_mut() {
            assert_eq!(style.fg, None);
            assert_eq!(style.bg, None);
        }
        assert!(
            theme
                .roles
                .selection
                .add_modifier
                .contains(Modifier::REVERSED)
        );
        assert!(
            theme
                .roles
                .focused_border
                .add_modifier
                .contains(Modifier::BOLD)
        );
    }
}
