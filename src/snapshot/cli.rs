//! `hello-tui snapshot`: render the snapshot of a scene file, or of a scene
//! built from disk (`-C DIR --open FILE:LINE:COL`).
//!
//! Bad input (malformed scene, missing file, unparsable position) is the
//! user's to fix, so it is a readable message and exit code 2, not a panic
//! or a backtrace.

use crate::sanitize::for_display;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use super::collect::{CollectOptions, collect};
use super::language::language_id_for_path;
use super::privacy::PrivacyRules;
use super::project::{DiskReader, root_project_files};
use super::render::render;
use super::source::{
    ActiveEditor, OpenTab, SceneDiagnostic, SceneError, ScenePosition, SceneRange, SceneWorkspace,
    Source,
};

/// Files larger than this are not loaded as the active buffer.
const MAX_ACTIVE_FILE_BYTES: u64 = 256 * 1024 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Markdown,
    Json,
}

/// Render the runtime-context snapshot the model would receive.
#[derive(Debug, Clone, clap::Args)]
pub struct SnapshotArgs {
    /// Scene file (JSON) describing workspace, editor, tabs and diagnostics.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["dir", "open", "select"])]
    pub scene: Option<PathBuf>,
    /// Build the scene from this workspace directory (default: current directory).
    #[arg(short = 'C', long = "dir", value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// File to treat as the active editor, with an optional 1-based position.
    #[arg(long, value_name = "FILE[:LINE[:COL]]")]
    pub open: Option<String>,
    /// Selection in the opened file, 1-based: `L1:C1-L2:C2` or whole lines `L1-L2`.
    #[arg(long, value_name = "L1:C1-L2:C2", requires = "open")]
    pub select: Option<String>,
    /// Character budget for the whole snapshot.
    #[arg(long, default_value_t = 12_000, value_name = "CHARS")]
    pub budget: usize,
    /// Lines shown above and below the cursor when nothing is selected.
    #[arg(long, default_value_t = 80, value_name = "LINES")]
    pub context_lines: usize,
    /// Output format: the Markdown sent to the model, or the normalised JSON.
    #[arg(long, value_enum, default_value_t = Format::Markdown)]
    pub format: Format,
    /// Also print the characters used per section to stderr.
    #[arg(long)]
    pub breakdown: bool,
    /// Seconds to wait for the opened file's language servers and checks
    /// (their diagnostics go in the snapshot); 0 starts none.
    #[arg(long, value_name = "SECS", default_value_t = DEFAULT_DIAGNOSTICS_WAIT, value_parser = parse_wait)]
    pub diagnostics_wait: f64,
}

/// How long `--open` waits for diagnostics unless told otherwise.
pub(crate) const DEFAULT_DIAGNOSTICS_WAIT: f64 = 3.0;

/// A wait in seconds: finite, not negative.
pub(crate) fn parse_wait(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs >= 0.0 => Ok(secs),
        _ => Err(format!(
            "expected a number of seconds (0 or more), not {text:?}"
        )),
    }
}

/// Starts the opened file's language servers and on-save checks (under the
/// sandbox the TUI gives them; none without it, unless the approval mode is
/// `full`) for up to `wait` seconds and puts what they
/// report in the scene, as the TUI's diagnostics pane would. `warn` hears
/// why there are none when something is in the way.
pub(crate) fn add_diagnostics(
    source: &mut Source,
    settings: &crate::config::Settings,
    wait: f64,
    warn: &mut dyn FnMut(String),
) {
    use crate::diagnostics::headless::{Opened, collect};
    let (Some(root), Some(editor)) = (source.workspace.roots.first(), &source.active_editor) else {
        return;
    };
    let Some(text) = editor.text.as_deref().filter(|_| wait > 0.0) else {
        return;
    };
    let root = PathBuf::from(root);
    // The file on disk is what a check reads; `text` may be a window of it.
    let size = std::fs::metadata(root.join(&editor.path))
        .map(|meta| meta.len())
        .unwrap_or(0)
        .max(text.len() as u64);
    let limit = settings.diagnostics.large_file_bytes;
    if size > limit {
        source.notes.get_or_insert_with(Vec::new).push(format!(
            "diagnostics: {}; no language server or check was asked",
            crate::diagnostics::large_document_words(&editor.path, size, limit),
        ));
        return;
    }
    let mode = settings
        .approval
        .unwrap_or(crate::sandbox::ApprovalMode::Ask);
    let status = crate::sandbox::SandboxStatus::probe();
    // Fails closed, unlike the TUI (which says so and goes on): nobody is
    // there to read a warning before project code runs unconfined.
    let confinement = match crate::kernel_setup::confinement(settings, mode, &status, &root) {
        Ok(confinement) => confinement,
        Err(error) => {
            return warn(format!(
                "no diagnostics: language servers and checks run project code, and the \
                 sandbox could not be prepared ({error}); `--approval full` runs them unconfined"
            ));
        }
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return warn(format!("no diagnostics: {error}")),
    };
    let file = Opened {
        root: &root,
        path: Path::new(&editor.path),
        text,
    };
    // Nobody is asked here: an unknown workspace is untrusted unless
    // `--trust` or the user's config says otherwise.
    let trusted = crate::trust::decide_here(&root, settings.vouched()).is_trusted();
    let found = runtime.block_on(collect(
        settings.diagnostics.clone(),
        file,
        confinement,
        std::time::Duration::from_secs_f64(wait),
        trusted,
    ));
    source.diagnostics = Some(
        found
            .diagnostics
            .iter()
            .map(SceneDiagnostic::from)
            .collect(),
    );
    source.diagnostics_not_listed = (found.not_listed > 0).then_some(found.not_listed);
}

#[derive(Debug, thiserror::Error)]
pub enum CliError {
    #[error("cannot read scene file {path}: {reason}")]
    ReadScene { path: String, reason: String },
    #[error("{0}")]
    Scene(#[from] SceneError),
    #[error("workspace directory {0} does not exist or is not a directory")]
    NotADirectory(String),
    #[error("file not found: {0}")]
    MissingFile(String),
    #[error("cannot read {path}: {reason}")]
    ReadFile { path: String, reason: String },
    #[error("invalid --select {0:?}: expected L1:C1-L2:C2 or L1-L2 with 1-based numbers")]
    BadSelection(String),
}

/// Runs the subcommand on the real stdout/stderr; `options` and the config
/// file name the language servers and checks `--open` starts.
pub fn run(
    args: &SnapshotArgs,
    options: &crate::config::GlobalOptions,
) -> anyhow::Result<ExitCode> {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    run_with(args, options, &mut stdout.lock(), &mut stderr.lock())
}

/// Runs the subcommand with explicit output streams (tests capture them).
/// User errors are written to `err` and give exit code 2; only failing to
/// write the output is an `Err`.
pub fn run_with(
    args: &SnapshotArgs,
    options: &crate::config::GlobalOptions,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> anyhow::Result<ExitCode> {
    let mut source = match scene(args) {
        Ok(source) => source,
        Err(error) => {
            writeln!(err, "error: {}", for_display(&error.to_string()))?;
            return Ok(ExitCode::from(2));
        }
    };
    if args.scene.is_none() && args.open.is_some() && args.diagnostics_wait > 0.0 {
        let settings =
            match crate::config::Settings::load(options, &|name| std::env::var(name).ok()) {
                Ok(settings) => settings,
                Err(error) => {
                    writeln!(err, "error: {}", for_display(&error.to_string()))?;
                    return Ok(ExitCode::from(2));
                }
            };
        let mut warnings = Vec::new();
        add_diagnostics(&mut source, &settings, args.diagnostics_wait, &mut |w| {
            warnings.push(w)
        });
        for warning in warnings {
            writeln!(err, "warning: {}", for_display(&warning))?;
        }
    }
    let options = CollectOptions {
        budget: args.budget,
        context_lines: args.context_lines,
        ..CollectOptions::default()
    };
    let snapshot = collect(&source, &options, &DiskReader);
    let rendered = render(&snapshot);
    match args.format {
        // The files' text, names and diagnostics come from the workspace:
        // printed through the sanitizer (the JSON losslessly).
        Format::Markdown => out.write_all(for_display(&rendered.markdown).as_bytes())?,
        Format::Json => {
            let json = crate::sanitize::json_text(serde_json::to_string_pretty(&snapshot)?);
            writeln!(out, "{json}")?;
        }
    }
    if args.breakdown {
        for cost in &rendered.sections {
            writeln!(err, "{:>16}  {}", format!("{:?}", cost.section), cost.chars)?;
        }
        writeln!(
            err,
            "{:>16}  {}/{}",
            "total", snapshot.budget.used, snapshot.budget.max
        )?;
    }
    Ok(ExitCode::SUCCESS)
}

fn scene(args: &SnapshotArgs) -> Result<Source, CliError> {
    if let Some(path) = &args.scene {
        let json = std::fs::read_to_string(path).map_err(|err| CliError::ReadScene {
            path: path.display().to_string(),
            reason: err.kind().to_string(),
        })?;
        return Ok(Source::from_json(&json)?);
    }
    scene_from_disk(
        args.dir.as_deref().unwrap_or(Path::new(".")),
        args.open.as_deref(),
        args.select.as_deref(),
    )
}

/// Builds a scene the way our editor would report it right after opening
/// `open` in `dir`: one clean buffer, one tab, the root's manifests and README.
pub fn scene_from_disk(
    dir: &Path,
    open: Option<&str>,
    select: Option<&str>,
) -> Result<Source, CliError> {
    let root = std::fs::canonicalize(dir)
        .ok()
        .filter(|root| root.is_dir())
        .ok_or_else(|| CliError::NotADirectory(dir.display().to_string()))?;
    let root_str = root.to_string_lossy().to_string();
    let name = root
        .file_name()
        .map(|name| name.to_string_lossy().to_string())
        .unwrap_or_else(|| "workspace".to_string());
    let project_files = root_project_files(&root);
    let mut source = Source {
        workspace: SceneWorkspace {
            name,
            roots: vec![root_str],
        },
        project_files: Some(project_files),
        ..Source::default()
    };
    let Some(open) = open else {
        return Ok(source);
    };
    let (path, position) = resolve_open(&root, open)?;
    let path_str = path.to_string_lossy().to_string();
    let selection = select.map(parse_selection).transpose()?;
    // Secrets are not even loaded: the collector would withhold them anyway.
    let text = if PrivacyRules::default().is_withheld(&path_str) {
        None
    } else {
        Some(read_active(&path)?)
    };
    let cursor = position
        .or(selection.map(|range| range.end))
        .unwrap_or_default();
    source.active_editor = Some(ActiveEditor {
        path: path_str.clone(),
        language_id: Some(language_id_for_path(&path).to_string()),
        line_count: text.as_deref().map(count_lines),
        text,
        text_start_line: None,
        is_dirty: Some(false),
        cursor: Some(cursor),
        selection,
    });
    source.open_tabs = Some(vec![OpenTab {
        path: path_str.clone(),
        is_dirty: Some(false),
    }]);
    source.visible_editors = Some(vec![path_str]);
    Ok(source)
}

/// Lines as an editor counts them: a final line without `\n` still counts.
fn count_lines(text: &str) -> usize {
    let newlines = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    newlines + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

fn read_active(path: &Path) -> Result<String, CliError> {
    let reason = |err: std::io::Error| CliError::ReadFile {
        path: path.display().to_string(),
        reason: err.kind().to_string(),
    };
    let size = std::fs::metadata(path).map_err(reason)?.len();
    if size > MAX_ACTIVE_FILE_BYTES {
        return Err(CliError::ReadFile {
            path: path.display().to_string(),
            reason: format!("larger than {MAX_ACTIVE_FILE_BYTES} bytes"),
        });
    }
    let bytes = std::fs::read(path).map_err(reason)?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// `FILE`, `FILE:LINE` or `FILE:LINE:COL` (1-based), relative to `root`
/// unless absolute. A file whose name really contains `:12` still wins.
fn resolve_open(root: &Path, spec: &str) -> Result<(PathBuf, Option<ScenePosition>), CliError> {
    let mut candidates: Vec<(&str, Option<ScenePosition>)> = vec![(spec, None)];
    let parts: Vec<&str> = spec.rsplitn(3, ':').collect();
    let number = |s: &str| s.parse::<usize>().ok();
    if let [col, line, file] = parts[..]
        && let (Some(line), Some(col)) = (number(line), number(col))
    {
        candidates.push((file, Some(position(line, col))));
    }
    if let Some((file, line)) = spec.rsplit_once(':')
        && let Some(line) = number(line)
    {
        candidates.push((file, Some(position(line, 1))));
    }
    for (file, position) in &candidates {
        let path = root.join(file);
        if path.is_file() {
            return Ok((path, *position));
        }
    }
    let shown = candidates.last().map_or(spec, |(file, _)| file);
    Err(CliError::MissingFile(shown.to_string()))
}

fn position(line: usize, column: usize) -> ScenePosition {
    ScenePosition {
        line: line.saturating_sub(1),
        character: column.saturating_sub(1),
    }
}

fn parse_selection(spec: &str) -> Result<SceneRange, CliError> {
    let bad = || CliError::BadSelection(spec.to_string());
    let (start, end) = spec.split_once('-').ok_or_else(bad)?;
    let point = |s: &str| -> Option<(usize, Option<usize>)> {
        match s.trim().split_once(':') {
            Some((line, col)) => Some((line.parse().ok()?, Some(col.parse().ok()?))),
            None => Some((s.trim().parse().ok()?, None)),
        }
    };
    let (start, end) = (point(start).ok_or_else(bad)?, point(end).ok_or_else(bad)?);
    match (start, end) {
        ((l1, Some(c1)), (l2, Some(c2))) => Ok(SceneRange {
            start: position(l1, c1),
            end: position(l2, c2),
        }),
        // Whole lines: up to the start of the line after the last one.
        ((l1, None), (l2, None)) => Ok(SceneRange {
            start: position(l1, 1),
            end: ScenePosition {
                line: l2,
                character: 0,
            },
        }),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file past `diagnostics.large_file_bytes` asks no server or check
    /// (the snapshot used to wait out its 3 s on a syntax check of a 37 MB
    /// file): no diagnostics, at once, and a note says why.
    #[test]
    fn a_large_document_skips_servers_and_checks_and_says_so() {
        let dir = tempfile::tempdir().expect("temp dir");
        let text = "x = 1\n".repeat(100);
        std::fs::write(dir.path().join("big.py"), &text).expect("write");
        let mut source = Source {
            workspace: crate::snapshot::source::SceneWorkspace {
                name: "ws".into(),
                roots: vec![dir.path().display().to_string()],
            },
            active_editor: Some(crate::snapshot::source::ActiveEditor {
                path: "big.py".into(),
                text: Some(text),
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut settings = crate::config::Settings::defaults();
        settings.diagnostics.large_file_bytes = 500;
        let mut warnings = Vec::new();
        let started = std::time::Instant::now();
        add_diagnostics(&mut source, &settings, 3.0, &mut |w| warnings.push(w));
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        assert_eq!(source.diagnostics, None, "nothing was asked");
        assert!(warnings.is_empty(), "{warnings:?}");
        let notes = source.notes.expect("a note");
        assert_eq!(notes.len(), 1);
        assert!(
            notes[0].contains("big.py is a large document (600 B, over the 500 B"),
            "{notes:?}"
        );
    }

    #[test]
    fn line_counts() {
        assert_eq!(count_lines(""), 0);
        assert_eq!(count_lines("a"), 1);
        assert_eq!(count_lines("a\n"), 1);
        assert_eq!(count_lines("a\r\nb"), 2);
    }

    #[test]
    fn selection_specs() {
        let range = parse_selection("35:1-68:2").unwrap();
        assert_eq!((range.start.line, range.start.character), (34, 0));
        assert_eq!((range.end.line, range.end.character), (67, 1));
        let range = parse_selection("3-5").unwrap();
        assert_eq!(
            (range.start.line, range.end.line, range.end.character),
            (2, 5, 0)
        );
        for bad in ["", "3", "a-b", "3:1-5", "1:2:3-4"] {
            assert!(parse_selection(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn open_specs_resolve_against_the_root() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rs"), "fn a() {}\n").unwrap();
        let (path, position) = resolve_open(dir.path(), "a.rs:12:5").unwrap();
        assert!(path.ends_with("a.rs"));
        assert_eq!(
            position,
            Some(ScenePosition {
                line: 11,
                character: 4
            })
        );
        let (_, position) = resolve_open(dir.path(), "a.rs:7").unwrap();
        assert_eq!(
            position,
            Some(ScenePosition {
                line: 6,
                character: 0
            })
        );
        assert_eq!(resolve_open(dir.path(), "a.rs").unwrap().1, None);
        let err = resolve_open(dir.path(), "missing.rs:3").unwrap_err();
        assert_eq!(err.to_string(), "file not found: missing.rs");
    }
}
