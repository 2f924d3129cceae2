//! LSP language identifiers from file paths, shared with the editor pane.

/// The LSP language id for `path`, from its file name or extension;
/// `plaintext` when unknown.
pub fn language_id_for_path(path: impl AsRef<std::path::Path>) -> &'static str {
    let path = path.as_ref();
    let name = path
        .file_name()
        .and_then(|name| name.to_str())
        .unwrap_or_default()
        .to_ascii_lowercase();
    match name.as_str() {
        "dockerfile" | "containerfile" => return "dockerfile",
        "makefile" | "gnumakefile" => return "makefile",
        "cmakelists.txt" => return "cmake",
        "cargo.lock" | "pipfile" | "poetry.lock" => return "toml",
        ".bashrc" | ".zshrc" | ".profile" | ".bash_profile" => return "shellscript",
        "go.mod" => return "go.mod",
        _ => {}
    }
    let extension = name
        .rsplit_once('.')
        .map(|(_, ext)| ext)
        .unwrap_or_default();
    match extension {
        "rs" => "rust",
        "py" | "pyi" | "pyw" => "python",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "json" | "jsonl" => "json",
        "jsonc" => "jsonc",
        "toml" => "toml",
        "md" | "markdown" => "markdown",
        "yaml" | "yml" => "yaml",
        "sh" | "bash" | "zsh" => "shellscript",
        "fish" => "fish",
        "ps1" => "powershell",
        "go" => "go",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" | "hxx" => "cpp",
        "cs" => "csharp",
        "java" => "java",
        "kt" | "kts" => "kotlin",
        "scala" => "scala",
        "swift" => "swift",
        "rb" => "ruby",
        "php" => "php",
        "lua" => "lua",
        "r" => "r",
        "dart" => "dart",
        "ex" | "exs" => "elixir",
        "erl" => "erlang",
        "hs" => "haskell",
        "ml" | "mli" => "ocaml",
        "zig" => "zig",
        "nix" => "nix",
        "html" | "htm" => "html",
        "css" => "css",
        "scss" => "scss",
        "less" => "less",
        "vue" => "vue",
        "svelte" => "svelte",
        "sql" => "sql",
        "xml" | "svg" => "xml",
        "ini" | "cfg" => "ini",
        "proto" => "proto",
        "tex" => "latex",
        "diff" | "patch" => "diff",
        _ => "plaintext",
    }
}

#[cfg(test)]
mod tests {
    use super::language_id_for_path;

    #[test]
    fn common_languages() {
        for (path, id) in [
            ("src/main.rs", "rust"),
            ("a.py", "python"),
            ("src/auth/token.ts", "typescript"),
            ("App.tsx", "typescriptreact"),
            ("x.mjs", "javascript"),
            ("package.json", "json"),
            ("Cargo.toml", "toml"),
            ("README.md", "markdown"),
            ("ci.yml", "yaml"),
            ("run.sh", "shellscript"),
            ("main.go", "go"),
            ("a.h", "c"),
            ("a.cpp", "cpp"),
            ("A.java", "java"),
            ("Dockerfile", "dockerfile"),
            ("notes", "plaintext"),
            ("", "plaintext"),
            ("数据/脚本.PY", "python"),
        ] {
            assert_eq!(language_id_for_path(path), id, "{path}");
        }
    }
}
