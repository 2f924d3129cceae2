//! The file view as a component: the open documents as tabs, what the keys
//! do to them (editing, saving, tabs, the picker and prompts, conflicts),
//! the mouse in the text and on the tab bar, and how it is drawn — a tab
//! bar over the active document, painted by the editor core's widget with
//! the theme's colours; until a file is open it says how to open one.
//!
//! What the rest of the workbench must hear about goes out as effects:
//! `FilesChanged` after every change (the kernel's `fs.write` learns the
//! dirty paths, the language servers the unsaved text), `Saved`,
//! `Clipboard`, `Notice`, and the overlays it opens. Background events (the
//! watcher, recovery, answers to questions) are folded in by
//! `app::editors`.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

use crate::component::{Component, Ctx, Effect, Input, Opening, Outcome, PromptKind, View};
use crate::editor::{Document, EditCommand, EditorError, FileViewStyles, render_file_view};
use crate::keymap::{Action, PaneId, Scope};
use crate::screen;
use crate::theme::Theme;
use crate::ui::pane;
use crate::workbench::Question;
use crate::workbench::Workbench;
use crate::workbench::editors::Editors;

impl Editors {
    fn changed(&mut self, ctx: &mut Ctx<'_>) {
        self.touch();
        ctx.push(Effect::FilesChanged);
    }

    /// A problem the user must read: the status bar and the conversation.
    fn report(&mut self, text: String, ctx: &mut Ctx<'_>) {
        self.status = Some(text.clone());
        ctx.push(Effect::Notice(text));
    }

    /// Runs one edit command on the active document.
    pub fn edit(&mut self, command: EditCommand, ctx: &mut Ctx<'_>) -> Outcome {
        let Some(doc) = self.active_mut() else {
            return Outcome::Unchanged;
        };
        let path = doc.path().to_path_buf();
        match doc.apply(command) {
            Ok(outcome) => {
                if outcome.text_changed {
                    // "Saved …" and the like describe a text that is gone
                    // now, and the agent's marks lines that moved.
                    self.status = None;
                    self.changed_lines.remove(&path);
                }
                self.changed(ctx);
                if let Some(text) = outcome.copied {
                    self.clipboard = text.clone();
                    ctx.push(Effect::Clipboard(text));
                }
            }
            Err(error) => self.status = Some(error.to_string()),
        }
        Outcome::Changed
    }

    /// Saves one tab (`Some(index)`) or every dirty tab. Errors are shown
    /// and the buffer stays dirty; a change on disk opens the conflict
    /// choices.
    pub fn save(&mut self, tab: Option<usize>, ctx: &mut Ctx<'_>) -> Outcome {
        let targets: Vec<usize> = match tab {
            Some(i) if i < self.tabs.len() => vec![i],
            Some(_) => return Outcome::Unchanged,
            None => (0..self.tabs.len())
                .filter(|&i| self.tabs[i].is_dirty())
                .collect(),
        };
        let mut saved = 0;
        let mut conflict = false;
        let workspace = ctx.around.workbench.workspace_root().clone();
        for i in targets {
            let result = self.tabs[i].save_in(&workspace);
            let name = ctx.around.workbench.display_path(self.tabs[i].path());
            match result {
                Ok(()) => {
                    saved += 1;
                    ctx.push(Effect::Saved(self.tabs[i].path().to_path_buf()));
                }
                Err(EditorError::Conflict { .. }) => {
                    self.active = i;
                    conflict = true;
                    ctx.push(Effect::Open(Opening::Conflict));
                    self.status = Some(format!(
                        "{name} changed on disk: keep mine, load theirs, or see the diff."
                    ));
                }
                Err(error) => self.report(format!("Could not save {name}: {error}"), ctx),
            }
        }
        if saved > 0 && !conflict {
            let what = match tab {
                Some(i) => ctx.around.workbench.display_path(self.tabs[i].path()),
                None => format!("{saved} file{}", if saved == 1 { "" } else { "s" }),
            };
            self.status = Some(format!("Saved {what}"));
        }
        self.changed(ctx);
        Outcome::Changed
    }

    /// Closes a tab; its recovery file goes with it.
    pub(crate) fn remove_tab(&mut self, tab: usize, ctx: &mut Ctx<'_>) {
        if tab >= self.tabs.len() {
            return;
        }
        let mut doc = self.tabs.remove(tab);
        doc.discard_recovery();
        let len = self.tabs.len();
        if self.active >= len {
            self.active = len.saturating_sub(1);
        }
        self.changed(ctx);
    }

    fn close_tab(&mut self, ctx: &mut Ctx<'_>) -> Outcome {
        let tab = self.active;
        let Some(doc) = self.tabs.get(tab) else {
            return Outcome::Unchanged;
        };
        if doc.is_dirty() {
            ctx.push(Effect::Open(Opening::Question(Question::CloseDirtyTab {
                tab,
            })));
        } else {
            self.remove_tab(tab, ctx);
        }
        Outcome::Changed
    }

    fn switch_tab(&mut self, forward: bool, ctx: &mut Ctx<'_>) -> Outcome {
        let n = self.tabs.len();
        if n < 2 {
            return Outcome::Unchanged;
        }
        let i = self.active;
        self.active = if forward {
            (i + 1) % n
        } else {
            (i + n - 1) % n
        };
        self.changed(ctx);
        Outcome::Changed
    }

    /// Ctrl+G / Ctrl+F: a prompt for the active file.
    fn open_prompt(&mut self, kind: PromptKind, ctx: &mut Ctx<'_>) -> Outcome {
        match self.active() {
            Some(_) => ctx.push(Effect::Open(Opening::Prompt(kind))),
            None => self.status = Some("Open a file first (Ctrl+P).".into()),
        }
        Outcome::Changed
    }

    fn open_conflict(&mut self, ctx: &mut Ctx<'_>) -> Outcome {
        match self.active().map(Document::disk_state) {
            Some(crate::editor::DiskState::ChangedOnDisk { .. }) => {
                ctx.push(Effect::Open(Opening::Conflict));
            }
            _ => self.status = Some("No change on disk to resolve.".into()),
        }
        Outcome::Changed
    }

    /// The file actions of the keymap (editing, tabs, saving, conflicts,
    /// the picker and the prompts); `None` when `action` is not one.
    fn act(&mut self, action: Action, ctx: &mut Ctx<'_>) -> Option<Outcome> {
        let command = match action {
            // Tab is text only when there is text; an empty file view
            // passes it on as "next pane".
            Action::Indent if self.active().is_none() => return None,
            Action::OpenPicker => {
                ctx.push(Effect::Open(Opening::Picker));
                return Some(Outcome::Changed);
            }
            Action::GoToLine => return Some(self.open_prompt(PromptKind::GoToLine, ctx)),
            Action::FindInFile => return Some(self.open_prompt(PromptKind::Find, ctx)),
            Action::Save => return Some(self.save(Some(self.active), ctx)),
            Action::SaveAll => return Some(self.save(None, ctx)),
            Action::CloseTab => return Some(self.close_tab(ctx)),
            Action::NextTab | Action::PrevTab => {
                return Some(self.switch_tab(action == Action::NextTab, ctx));
            }
            Action::ResolveConflict => return Some(self.open_conflict(ctx)),
            Action::KeepMine => {
                if let Some(doc) = self.active_mut() {
                    doc.keep_mine();
                }
                self.status = Some("Keeping your text: the next save overwrites the file.".into());
                self.changed(ctx);
                return Some(Outcome::Changed);
            }
            Action::LoadTheirs => {
                ctx.push(Effect::Open(Opening::Question(Question::LoadTheirs {
                    tab: self.active,
                })));
                return Some(Outcome::Changed);
            }
            Action::Move(m) => EditCommand::Move(m),
            Action::Select(m) => EditCommand::Select(m),
            Action::Newline => EditCommand::InsertNewline,
            Action::Indent => EditCommand::InsertTab,
            Action::DeleteBack => EditCommand::DeleteBack,
            Action::DeleteForward => EditCommand::DeleteForward,
            Action::DeleteWordBack => EditCommand::DeleteWordBack,
            Action::DeleteWordForward => EditCommand::DeleteWordForward,
            Action::SelectAll => EditCommand::SelectAll,
            Action::Copy => EditCommand::Copy,
            Action::Cut => EditCommand::Cut,
            Action::Paste => EditCommand::Paste(self.clipboard.clone()),
            Action::Undo => EditCommand::Undo,
            Action::Redo => EditCommand::Redo,
            _ => return None,
        };
        Some(self.edit(command, ctx))
    }

    /// Keys without a binding: text for the file view.
    fn type_key(&mut self, key: KeyEvent, ctx: &mut Ctx<'_>) -> Outcome {
        let plain = !key
            .modifiers
            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
        match key.code {
            KeyCode::Char(c) if plain => self.edit(EditCommand::InsertChar(c), ctx),
            _ => Outcome::Unchanged,
        }
    }

    /// The pointer in the file view: a click on the tab bar switches tabs;
    /// in the text a click places the cursor (Shift extends), a drag
    /// selects, the wheel scrolls.
    fn mouse(&mut self, mouse: MouseEvent, ctx: &mut Ctx<'_>) -> Outcome {
        let layout = ctx.around.layout;
        let Some(pane) = layout.file_view else {
            return Outcome::Ignored;
        };
        let area = screen::file_view::text_area(pane);
        let on_tab_bar = area.y > pane.y + 1 && mouse.row + 1 == area.y;
        if on_tab_bar && mouse.kind == MouseEventKind::Down(MouseButton::Left) {
            let column = mouse.column.saturating_sub(area.x);
            if let Some(tab) = screen::file_view::tab_at(&self.tabs, column) {
                self.active = tab;
                ctx.push(Effect::Focus(PaneId::FileView));
                self.changed(ctx);
                return Outcome::Changed;
            }
        }
        let Some(doc) = self.active_mut() else {
            return Outcome::Ignored;
        };
        match mouse.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                let extend = mouse.modifiers.contains(KeyModifiers::SHIFT);
                doc.click(area, mouse.column, mouse.row, extend);
            }
            MouseEventKind::Drag(MouseButton::Left) => doc.drag_to(area, mouse.column, mouse.row),
            MouseEventKind::ScrollUp => doc.scroll_by(-3),
            MouseEventKind::ScrollDown => doc.scroll_by(3),
            _ => return Outcome::Ignored,
        }
        ctx.push(Effect::Focus(PaneId::FileView));
        self.changed(ctx);
        Outcome::Changed
    }
}

impl Component for Editors {
    fn label(&self) -> &'static str {
        PaneId::FileView.label()
    }

    fn scope(&self) -> Scope {
        Scope::FileView
    }

    fn handle(&mut self, input: Input<'_>, ctx: &mut Ctx<'_>) -> Outcome {
        match input {
            Input::Action(action) => self.act(action, ctx).unwrap_or(Outcome::Ignored),
            Input::Key(key) => self.type_key(key, ctx),
            // Bracketed paste: one undoable insert, line breaks already `\n`.
            Input::Paste(text) => self.edit(EditCommand::Paste(text.to_owned()), ctx),
            Input::Mouse(mouse) => self.mouse(mouse, ctx),
            _ => Outcome::Ignored,
        }
    }

    fn render(&self, view: &View<'_>, area: Rect, frame: &mut Frame) {
        let around = view.around;
        let focused = around.has_keyboard(PaneId::FileView);
        render(
            around.workbench,
            view.theme,
            focused,
            area,
            frame.buffer_mut(),
        );
    }
}

/// The theme's roles as the widget's styles; syntect keeps its colours.
pub fn styles(theme: &Theme, focused: bool) -> FileViewStyles {
    let r = &theme.roles;
    let base = FileViewStyles::dark();
    FileViewStyles {
        text: r.text,
        gutter: r.line_number,
        gutter_cursor_line: r.text,
        cursor_line: r.cursor_line,
        cursor: if focused { r.cursor } else { Style::default() },
        selection: r.selection,
        search_match: r.match_highlight,
        notice: if r.warning == Style::default() {
            base.notice
        } else {
            r.warning.reversed()
        },
        conflict: if r.error == Style::default() {
            base.conflict
        } else {
            r.error.reversed()
        },
    }
}

fn render(workbench: &Workbench, theme: &Theme, focused: bool, area: Rect, buf: &mut Buffer) {
    let Some(doc) = workbench.editors().active() else {
        let block = pane::block(Line::from("No file"), Some('2'), focused, theme);
        let inner = block.inner(area);
        block.render(area, buf);
        pane::empty_state("No file open. Ctrl+P opens one.", theme, inner, buf);
        return;
    };
    let mut title = vec![Span::raw(workbench.display_path(doc.path()))];
    if doc.is_dirty() {
        title.push(Span::styled(" ●", theme.roles.dirty_marker));
    }
    if doc.read_only_reason().is_some() {
        title.push(Span::styled(" (read-only)", theme.roles.muted));
    }
    let block = pane::block(Line::from(title), Some('2'), focused, theme);
    let inner = block.inner(area);
    block.render(area, buf);
    if inner.is_empty() {
        return;
    }
    let text = screen::file_view::text_area(area);
    if text.y > inner.y {
        tab_bar(
            workbench,
            theme,
            Rect::new(inner.x, inner.y, inner.width, 1),
            buf,
        );
    }
    render_file_view(doc, &styles(theme, focused), text, buf);
    diagnostic_marks(workbench, doc, theme, text, buf);
    change_marks(workbench, doc, theme, text, buf);
    if workbench.settings().no_color {
        strip_colours(text, buf);
    }
}

/// NO_COLOR: syntect's colours go, modifiers (reverse for the cursor and
/// selection, underline for the cursor line) stay.
fn strip_colours(area: Rect, buf: &mut Buffer) {
    for y in area.top()..area.bottom() {
        for x in area.left()..area.right() {
            if let Some(cell) = buf.cell_mut((x, y)) {
                cell.set_fg(Color::Reset).set_bg(Color::Reset);
            }
        }
    }
}

/// One line of tabs: name, dirty marker, disk state; the active tab stands
/// out. When they do not all fit, the row starts at a later tab so the
/// active one is always whole on it, and `‹` / `›` say tabs are hidden
/// before and after (a tester's eighth tab was active and not shown).
fn tab_bar(workbench: &Workbench, theme: &Theme, area: Rect, buf: &mut Buffer) {
    let active = workbench.editors().active;
    let tabs: Vec<Vec<Span>> = screen::file_view::tabs(&workbench.editors().tabs)
        .into_iter()
        .enumerate()
        .map(|(i, tab)| {
            let style = if i == active {
                theme.roles.focused_title.reversed()
            } else {
                theme.roles.muted
            };
            let mut spans = vec![Span::styled(format!(" {}", tab.title), style)];
            if tab.dirty {
                spans.push(Span::styled(" ●", theme.roles.dirty_marker.patch(style)));
            }
            if let Some(note) = tab.note {
                spans.push(Span::styled(note, theme.roles.error.patch(style)));
            }
            spans.push(Span::styled(" ", style));
            spans.push(Span::styled("│", theme.roles.pane_border));
            spans
        })
        .collect();
    if tabs.is_empty() {
        return;
    }
    let active = active.min(tabs.len() - 1);
    let widths: Vec<usize> = tabs
        .iter()
        .map(|spans| spans.iter().map(Span::width).sum())
        .collect();
    let room = usize::from(area.width);
    // From the first tab on, unless the active one would not fit whole
    // (a column kept for each mark).
    let mut first = 0;
    while first < active
        && usize::from(first > 0) + widths[first..=active].iter().sum::<usize>() + 1 > room
    {
        first += 1;
    }
    let mut spans = Vec::new();
    if first > 0 {
        spans.push(Span::styled("‹", theme.roles.muted));
    }
    let shown = usize::from(first > 0) + widths[first..].iter().sum::<usize>();
    spans.extend(tabs.into_iter().skip(first).flatten());
    Line::from(spans).render(area, buf);
    if shown > room && area.width > 0 {
        buf[(area.right() - 1, area.y)]
            .set_symbol("›")
            .set_style(theme.roles.muted);
    }
}

/// Lines with diagnostics get the most severe one's icon in the gutter, and
/// the ranges on screen are underlined in its colour — the same clues the
/// Diagnostics pane lists, where the user is looking.
/// Lines the last cell or agent answer changed get a bar in the gutter's
/// last column, in the colour the conversation's diffs show added lines in.
fn change_marks(
    workbench: &Workbench,
    doc: &Document,
    theme: &Theme,
    area: Rect,
    buf: &mut Buffer,
) {
    let Some(changed) = workbench.editors().changed_lines.get(doc.path()) else {
        return;
    };
    let layout = crate::editor::layout(doc, area);
    let (text, gutter) = (layout.text, layout.gutter);
    if gutter.width == 0 {
        return;
    }
    let top = doc.viewport().top;
    for &line in changed {
        let Some(row) = line.checked_sub(top) else {
            continue;
        };
        if row >= usize::from(text.height) {
            continue;
        }
        buf[(gutter.right() - 1, text.y + row as u16)]
            .set_symbol("▎")
            .set_style(theme.roles.info);
    }
}

fn diagnostic_marks(
    workbench: &Workbench,
    doc: &Document,
    theme: &Theme,
    area: Rect,
    buf: &mut Buffer,
) {
    let diagnostics = workbench.diagnostic_sources().store.for_file(doc.path());
    if diagnostics.is_empty() || doc.is_binary() {
        return;
    }
    let layout = crate::editor::layout(doc, area);
    let viewport = doc.viewport();
    let (text, gutter) = (layout.text, layout.gutter);
    let tab = doc.tab_width();
    // Most severe last, so it wins the gutter cell.
    let mut ordered = diagnostics;
    ordered.sort_by_key(|d| std::cmp::Reverse(d.severity));
    for d in ordered {
        let style = crate::ui::severity::severity_style(d.severity, theme);
        let first = d.range.start.line;
        let last = d.range.end.line.max(first);
        for line in first..=last {
            let Some(row) = line.checked_sub(viewport.top) else {
                continue;
            };
            if row >= usize::from(text.height) {
                break;
            }
            let y = text.y + row as u16;
            if line == first && gutter.width > 0 {
                buf[(gutter.x, y)]
                    .set_symbol(crate::ui::severity::severity_icon(d.severity))
                    .set_style(style);
            }
            let Some(content) = doc.line(line) else {
                continue;
            };
            let len = content.chars().count();
            let start = if line == first {
                d.range.start.character.min(len)
            } else {
                0
            };
            let mut end = if line == last {
                d.range.end.character.min(len)
            } else {
                len
            };
            if end <= start {
                // An empty range still marks one cell.
                end = (start + 1).min(len.max(start + 1));
            }
            let from = crate::editor::display_col(content.as_ref(), start, tab);
            let to = crate::editor::display_col(content.as_ref(), end, tab).max(from + 1);
            for col in from..to {
                let Some(x) = col.checked_sub(viewport.left) else {
                    continue;
                };
                if x >= usize::from(text.width) {
                    break;
                }
                let underline = Style::default()
                    .add_modifier(Modifier::UNDERLINED)
                    .underline_color(style.fg.unwrap_or_default());
                let cell = &mut buf[(text.x + x as u16, y)];
                cell.set_style(cell.style().patch(underline));
            }
        }
    }
}
