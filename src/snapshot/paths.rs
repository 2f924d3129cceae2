//! Turning the host's absolute paths into something safe and useful to send.
//!
//! Workspace-relative paths are shorter, reproducible inside the project and
//! do not expose the user's name or directory layout. With several roots the
//! same `src/index.ts` can exist twice, so the root's name is prefixed. A path
//! outside every root stays recognisable (`~/...` under the home directory,
//! otherwise `…/parent/name`) but its absolute form is never sent.

/// Where a displayed path lives relative to the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PathScope {
    Workspace,
    Home,
    Outside,
}

/// Converts absolute paths for display, given the workspace roots.
#[derive(Debug, Clone)]
pub(crate) struct PathDisplay {
    roots: Vec<(Vec<String>, String)>,
    home: Option<Vec<String>>,
    prefix_root_name: bool,
}

impl PathDisplay {
    pub fn new(roots: &[String], home: Option<&str>) -> Self {
        let roots: Vec<(Vec<String>, String)> = roots
            .iter()
            .map(|root| {
                let parts = components(root);
                let name = parts.last().cloned().unwrap_or_else(|| "root".to_string());
                (parts, name)
            })
            .filter(|(parts, _)| !parts.is_empty())
            .collect();
        let prefix_root_name = roots.len() > 1;
        let home = home.map(components).filter(|parts| !parts.is_empty());
        Self {
            roots,
            home,
            prefix_root_name,
        }
    }

    /// The display form of `path` and where it lives.
    pub fn display(&self, path: &str) -> (String, PathScope) {
        let parts = components(path);
        let best_root = self
            .roots
            .iter()
            .filter(|(root, _)| parts.starts_with(root))
            .max_by_key(|(root, _)| root.len());
        if let Some((root, name)) = best_root {
            let rest = &parts[root.len()..];
            let relative = if rest.is_empty() {
                ".".to_string()
            } else {
                rest.join("/")
            };
            let shown = if self.prefix_root_name {
                format!("{name}/{relative}")
            } else {
                relative
            };
            return (shown, PathScope::Workspace);
        }
        if let Some(home) = self.home.as_ref().filter(|home| parts.starts_with(home)) {
            let rest = parts[home.len()..].join("/");
            return (format!("~/{rest}"), PathScope::Home);
        }
        let tail = parts.len().saturating_sub(2);
        (format!("…/{}", parts[tail..].join("/")), PathScope::Outside)
    }

    /// Replaces absolute root and home prefixes inside free text (diagnostic
    /// messages quote paths) with their display forms.
    pub(crate) fn scrub(&self, text: &str) -> String {
        let mut prefixes: Vec<(String, String)> = self
            .roots
            .iter()
            .map(|(parts, name)| {
                let shown = if self.prefix_root_name {
                    name.as_str()
                } else {
                    "."
                };
                (format!("/{}", parts.join("/")), shown.to_string())
            })
            .collect();
        if let Some(home) = &self.home {
            prefixes.push((format!("/{}", home.join("/")), "~".to_string()));
        }
        // Longest first so a root inside the home directory wins over `~`.
        prefixes.sort_by_key(|(prefix, _)| std::cmp::Reverse(prefix.len()));
        let mut out = text.to_string();
        for (prefix, shown) in prefixes {
            if prefix.len() > 1 {
                out = replace_path_prefix(&out, &prefix, &shown);
            }
        }
        out
    }
}

/// Replaces `prefix` only where it is a whole path prefix: `/w` in `/w/a`
/// or `/w:` but not in `/workspace`.
fn replace_path_prefix(text: &str, prefix: &str, shown: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(index) = rest.find(prefix) {
        let after = &rest[index + prefix.len()..];
        let whole = after
            .chars()
            .next()
            .is_none_or(|c| !(c.is_alphanumeric() || matches!(c, '.' | '_' | '-')));
        out.push_str(&rest[..index]);
        out.push_str(if whole { shown } else { prefix });
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Lexically normalised components (`.` dropped, `..` applied), so
/// `/w/src/../../etc/passwd` is not mistaken for a file inside `/w`.
fn components(path: &str) -> Vec<String> {
    let mut parts: Vec<String> = Vec::new();
    for part in path.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            other => parts.push(other.to_string()),
        }
    }
    parts
}

/// The last component of a path, for notes and fallbacks.
pub fn file_name(path: &str) -> &str {
    path.rsplit(['/', '\\'])
        .find(|part| !part.is_empty())
        .unwrap_or(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn single() -> PathDisplay {
        PathDisplay::new(&["/home/alice/demo".to_string()], Some("/home/alice"))
    }

    #[test]
    fn single_root_paths_are_relative() {
        let (shown, scope) = single().display("/home/alice/demo/src/auth/token.ts");
        assert_eq!(shown, "src/auth/token.ts");
        assert_eq!(scope, PathScope::Workspace);
    }

    #[test]
    fn home_paths_hide_the_user_name() {
        let (shown, scope) = single().display("/home/alice/notes/todo.md");
        assert_eq!(shown, "~/notes/todo.md");
        assert_eq!(scope, PathScope::Home);
    }

    #[test]
    fn outside_paths_keep_only_the_tail() {
        let (shown, scope) = single().display("/opt/sdk/include/stdio.h");
        assert_eq!(shown, "…/include/stdio.h");
        assert_eq!(scope, PathScope::Outside);
    }

    #[test]
    fn dot_dot_cannot_fake_being_inside() {
        let (shown, _) = single().display("/home/alice/demo/../../bob/x.txt");
        assert_eq!(shown, "…/bob/x.txt");
    }

    #[test]
    fn prefix_match_is_by_component_not_by_string() {
        let (shown, _) = single().display("/home/alice/demo2/a.rs");
        assert_eq!(shown, "~/demo2/a.rs");
    }

    #[test]
    fn several_roots_prefix_the_root_name_and_nested_root_wins() {
        let roots = [
            "/w/web".to_string(),
            "/w/api".to_string(),
            "/w/api/vendor".to_string(),
        ];
        let paths = PathDisplay::new(&roots, None);
        assert_eq!(paths.display("/w/web/src/index.ts").0, "web/src/index.ts");
        assert_eq!(paths.display("/w/api/src/index.ts").0, "api/src/index.ts");
        assert_eq!(paths.display("/w/api/vendor/x.rs").0, "vendor/x.rs");
    }

    #[test]
    fn scrub_rewrites_absolute_prefixes_in_messages() {
        let text = "cannot open /home/alice/demo/src/a.ts (see /home/alice/.cache/x)";
        assert_eq!(
            single().scrub(text),
            "cannot open ./src/a.ts (see ~/.cache/x)"
        );
    }

    #[test]
    fn scrub_respects_component_boundaries() {
        let paths = PathDisplay::new(&["/w".to_string()], None);
        assert_eq!(
            paths.scrub("see /w/a.rs and /workspace/b.rs, /w"),
            "see ./a.rs and /workspace/b.rs, ."
        );
    }

    #[test]
    fn file_name_of_odd_paths() {
        assert_eq!(file_name("/a/b/c.txt"), "c.txt");
        assert_eq!(file_name("/a/b/"), "b");
        assert_eq!(file_name(""), "");
    }
}
