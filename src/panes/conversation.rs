//! The conversation pane as a component: the history above (laid out
//! before the frame into `ui::history::HistoryLayout`, cached per entry),
//! the pinned results, and the composer below. Keys that are no binding are
//! text for the composer; Enter hands its text to the app
//! (`Effect::Submit`), which decides whether it is a prompt, a `%py` cell or
//! a `/command`.

use ratatui::Frame;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};
use tui_textarea::TextArea;

use crate::component::{Component, Ctx, Effect, Input, Outcome, View};
use crate::editor::Motion;
use crate::keymap::{Action, PaneId, Scope};
use crate::sanitize;
use crate::screen;
use crate::theme::Theme;
use crate::ui::history::{HistoryLayout, HistoryPlace, HistoryPoint};
use crate::ui::pane;
use crate::workbench::Workbench;
use crate::workbench::slash::SlashCommand;

/// The conversation pane: the history, how far it is scrolled, and the
/// composer below it.
#[derive(Debug)]
pub struct ConversationState {
    /// Where the history is scrolled to, and the requests to move it.
    pub place: HistoryPlace,
    /// The message a search jump landed on, highlighted until the next key.
    pub flash: Option<usize>,
    /// Text selected by dragging in the history; copied on release, and
    /// highlighted until the next key or click.
    pub selection: Option<TextSelection>,
    /// What the last frame showed of the history, for the mouse.
    pub shown: ShownRows,
    /// Selecting text with the keys (Alt+V): the cursor in the history.
    pub text_cursor: Option<TextCursor>,
    /// What the user is writing; Enter sends it.
    pub composer: TextArea<'static>,
    /// The slash commands matching what is typed, while a command name is
    /// being typed (`/` first, nothing else yet).
    pub palette: Option<Palette>,
    /// The text Esc closed the palette for: it stays closed until the
    /// text changes.
    palette_closed_for: Option<String>,
    /// Big pastes, shown as chips in the composer.
    pasted: super::pasted::Pasted,
    /// The workspace's files while an `@path` is typed.
    pub mentions: super::mention_list::Mentions,
    /// What was sent before, for ↑/↓ (the app records each submission).
    pub history: crate::workbench::prompt_history::PromptHistory,
}

/// A drag in the history: where it started and where the pointer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextSelection {
    pub anchor: HistoryPoint,
    pub head: HistoryPoint,
    /// The button is still down.
    pub dragging: bool,
}

impl TextSelection {
    /// The selected columns of the row `(entry, row)`, if it is selected
    /// (`usize::MAX`: to the end of the row).
    pub fn columns_of(&self, entry: usize, row: usize) -> Option<(usize, usize)> {
        let (from, to) = if self.anchor <= self.head {
            (self.anchor, self.head)
        } else {
            (self.head, self.anchor)
        };
        let at = (entry, row);
        if at < (from.entry, from.row) || at > (to.entry, to.row) {
            return None;
        }
        let start = if at == (from.entry, from.row) {
            from.col
        } else {
            0
        };
        let end = if at == (to.entry, to.row) {
            to.col
        } else {
            usize::MAX
        };
        Some((start, end))
    }
}

/// Selecting with the keys: where the cursor is, and where the selection
/// started (`v`, or the first Shift+move).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextCursor {
    pub at: HistoryPoint,
    pub anchor: Option<HistoryPoint>,
}

/// The history's text area in the last frame and, per screen row, the
/// entry and block row drawn there (`app::frame::prepare` sets it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ShownRows {
    pub area: Rect,
    pub rows: Vec<(usize, usize)>,
}

impl ShownRows {
    /// The history place under the pointer, pulled into the text area
    /// (a drag may leave it); None when no row is shown.
    pub fn point_at(&self, column: u16, row: u16) -> Option<HistoryPoint> {
        let area = self.area;
        if area.is_empty() {
            return None;
        }
        let y = row.clamp(area.top(), area.bottom() - 1) - area.y;
        let (entry, block_row) = *self.rows.get(usize::from(y)).or_else(|| self.rows.last())?;
        let col = usize::from(
            column
                .saturating_sub(area.x)
                .min(area.width.saturating_sub(1)),
        );
        Some(HistoryPoint {
            entry,
            row: block_row,
            col,
        })
    }
}

/// The slash-command palette over the composer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Palette {
    pub items: Vec<SlashCommand>,
    pub selected: usize,
}

/// Rows the palette shows at most.
pub(crate) const PALETTE_ROWS: usize = 8;

impl Default for ConversationState {
    fn default() -> Self {
        let mut composer = TextArea::default();
        composer.set_placeholder_text("Ask the agent…");
        // Long lines wrap at word boundaries, as Codex and Claude Code do:
        // the start of a sentence never scrolls out of sight.
        composer.set_wrap_mode(tui_textarea::WrapMode::WordOrGlyph);
        Self {
            place: HistoryPlace::default(),
            flash: None,
            selection: None,
            shown: ShownRows::default(),
            text_cursor: None,
            composer,
            palette: None,
            palette_closed_for: None,
            pasted: Default::default(),
            mentions: Default::default(),
            history: Default::default(),
        }
    }
}

impl ConversationState {
    /// An empty pane whose ↑/↓ recall `history`.
    pub(crate) fn with_history(history: crate::workbench::prompt_history::PromptHistory) -> Self {
        Self {
            history,
            ..Self::default()
        }
    }

    /// The command name being typed: the composer holds one line, `/`
    /// and a name so far (no arguments yet; `//` escapes a prompt).
    fn typed_command(&self) -> Option<&str> {
        let [line] = self.composer.lines() else {
            return None;
        };
        let name = line.strip_prefix('/')?;
        (!name.starts_with('/') && !name.contains(char::is_whitespace)).then_some(name)
    }

    /// Rows the composer's text takes in a pane `width` columns wide.
    fn composer_rows(&self, width: u16) -> u16 {
        screen::conversation::composer_rows(self.composer.lines(), width)
    }

    /// The history's rows inside its border when the pane occupies `area`
    /// with `pins` pinned results listed.
    pub fn history_area(&self, pins: usize, area: Rect) -> Rect {
        screen::conversation::history_area(self.composer_rows(area.width), pins, area)
    }

    /// Brings the slash palette and the `@` list up to date with the
    /// composer's text.
    fn refresh_lists(&mut self, around: crate::component::Around<'_>) {
        self.refresh_palette(around.workbench);
        self.mentions.refresh(&self.composer, around);
    }

    /// Brings the palette up to date with the composer's text.
    fn refresh_palette(&mut self, workbench: &Workbench) {
        let text = self.composer.lines().join("\n");
        let typed = match self.typed_command() {
            // A recalled `/command` is not being typed: ↑/↓ keep walking
            // the history instead of the list.
            Some(_) if self.history.recalling() => {
                self.palette = None;
                return;
            }
            Some(name) if self.palette_closed_for.as_deref() != Some(text.as_str()) => name,
            _ => {
                self.palette = None;
                return;
            }
        };
        let commands = crate::workbench::slash::all(
            workbench.workspace_root(),
            workbench.trust().trust.is_trusted(),
            workbench.user_commands(),
        );
        let items: Vec<SlashCommand> = crate::workbench::slash::matching(&commands, typed)
            .into_iter()
            .cloned()
            .collect();
        self.palette_closed_for = None;
        self.palette = match (items.is_empty(), self.palette.take()) {
            (true, _) => None,
            (false, Some(old)) if old.items == items => Some(old),
            (false, _) => Some(Palette { items, selected: 0 }),
        };
    }

    /// Replaces the composer's text, the cursor at its end.
    /// The message as it would be sent: the composer's text with each
    /// paste chip replaced by its text.
    pub fn text(&self) -> String {
        self.pasted.expand(&self.composer.lines().join("\n"))
    }

    /// A message that was not sent comes back to the composer, a big one
    /// as a chip again.
    pub(crate) fn give_back(&mut self, text: &str) {
        match self.pasted.chip(text) {
            Some(chip) => self.set_composer_text(&chip),
            None => self.set_composer_text(text),
        }
    }

    /// Replaces what the composer holds (the cursor at its end).
    fn set_composer_text(&mut self, text: &str) {
        self.composer.select_all();
        self.composer.cut();
        self.composer.insert_str(text);
    }

    /// The palette's keys; `None` when `action` is not one of them.
    fn palette_action(&mut self, action: Action, ctx: &mut Ctx<'_>) -> Option<Outcome> {
        let palette = self.palette.as_mut()?;
        let count = palette.items.len();
        let chosen = palette.items.get(palette.selected).cloned();
        match action {
            Action::PaletteNext => palette.selected = (palette.selected + 1) % count,
            Action::PalettePrevious => palette.selected = (palette.selected + count - 1) % count,
            Action::PaletteClose => {
                self.palette_closed_for = Some(self.composer.lines().join("\n"));
                self.palette = None;
            }
            Action::PaletteComplete => {
                let command = chosen?;
                let completed = if command.args.is_empty() {
                    command.usage()
                } else {
                    format!("/{} ", command.name)
                };
                self.set_composer_text(&completed);
                self.refresh_lists(ctx.around);
            }
            Action::PaletteAccept => {
                let command = chosen?;
                self.palette = None;
                self.set_composer_text(&format!("/{}", command.name));
                return Some(self.send(ctx));
            }
            _ => return None,
        }
        Some(Outcome::Changed)
    }

    /// ↑ on the composer's first line recalls the previous submission, ↓
    /// on its last line the next (then what was being typed); elsewhere
    /// they move the cursor. `None`: not a recall key here.
    fn recall(&mut self, key: crossterm::event::KeyEvent) -> Option<Outcome> {
        use crossterm::event::{KeyCode, KeyModifiers};
        if key.modifiers != KeyModifiers::NONE {
            return None;
        }
        let row = self.composer.cursor().0;
        let last = self.composer.lines().len().saturating_sub(1);
        let text = match key.code {
            KeyCode::Up if row == 0 => {
                let current = self.composer.lines().join("\n");
                self.history.earlier(&current).map(str::to_owned)
            }
            KeyCode::Down if row == last => self.history.later().map(str::to_owned),
            _ => return None,
        };
        Some(match text {
            Some(text) => {
                self.set_composer_text(&text);
                Outcome::Changed
            }
            None => Outcome::Unchanged,
        })
    }

    /// The keys of selecting text in the history (Alt+V starts it); None
    /// when `action` is not one of them. Copying is the app's (it needs
    /// the clipboard).
    fn select_action(&mut self, action: Action, ctx: &mut Ctx<'_>) -> Option<Outcome> {
        let transcript = ctx.around.workbench.transcript();
        let width = usize::from(self.shown.area.width);
        let expanded = self.place.cells_expanded;
        match (action, self.text_cursor.as_mut()) {
            (Action::StartTextSelection, _) => {
                // At the selected message's header, else the bottom row.
                let at = match self.flash {
                    Some(entry) => Some((entry, usize::from(entry > 0))),
                    None => self.shown.rows.last().copied(),
                };
                let (entry, row) = at?;
                self.text_cursor = Some(TextCursor {
                    at: HistoryPoint { entry, row, col: 0 },
                    anchor: None,
                });
            }
            (Action::LeaveTextSelection, Some(_)) => self.text_cursor = None,
            (Action::ToggleSelectionAnchor, Some(cursor)) => {
                cursor.anchor = match cursor.anchor {
                    Some(_) => None,
                    None => Some(cursor.at),
                };
            }
            (Action::HistoryCursor(motion) | Action::HistoryExtend(motion), Some(cursor)) => {
                if matches!(action, Action::HistoryExtend(_)) {
                    cursor.anchor.get_or_insert(cursor.at);
                }
                let page = self.shown.rows.len().max(1) as isize;
                let last_col = width.saturating_sub(1);
                let rows = match motion {
                    Motion::Up => -1,
                    Motion::Down => 1,
                    Motion::PageUp => -page,
                    Motion::PageDown => page,
                    _ => 0,
                };
                let mut at =
                    crate::ui::history::moved(transcript, width, expanded, cursor.at, rows);
                at.col = match motion {
                    Motion::Left => at.col.saturating_sub(1),
                    Motion::Right => (at.col + 1).min(last_col),
                    Motion::LineStart => 0,
                    Motion::LineEnd => last_col,
                    _ => at.col,
                };
                // Off the shown rows: the view follows by as many rows.
                if !self.shown.rows.contains(&(at.entry, at.row)) {
                    self.place.scroll_by(rows);
                }
                cursor.at = at;
            }
            _ => return None,
        }
        self.selection = self.text_cursor.and_then(|cursor| {
            cursor.anchor.map(|anchor| TextSelection {
                anchor,
                head: cursor.at,
                dragging: false,
            })
        });
        Some(Outcome::Changed)
    }

    /// Enter: the composer's text goes to the app.
    fn send(&mut self, ctx: &mut Ctx<'_>) -> Outcome {
        let Some(text) = take_text(&mut self.composer) else {
            return Outcome::Unchanged;
        };
        let text = self.pasted.expand(&text);
        // A new message starts: its undo history goes (undo would bring
        // back this one's chips, whose texts are dropped now), and so does
        // every paste but those Ctrl+Y can still put back.
        self.composer
            .set_max_histories(self.composer.max_histories());
        self.pasted.keep_only_in(&self.composer.yank_text());
        self.palette = None;
        self.mentions = Default::default();
        self.place.follow();
        ctx.push(Effect::Submit(text));
        Outcome::Changed
    }
}

impl Component for ConversationState {
    fn label(&self) -> &'static str {
        PaneId::Conversation.label()
    }

    fn scope(&self) -> Scope {
        Scope::Conversation
    }

    fn scopes(&self) -> Vec<Scope> {
        if self.text_cursor.is_some() {
            vec![Scope::HistorySelect]
        } else if self.palette.is_some() {
            vec![Scope::SlashPalette, Scope::Conversation]
        } else if self.mentions.list.is_some() {
            vec![Scope::MentionList, Scope::Conversation]
        } else {
            vec![Scope::Conversation]
        }
    }

    fn handle(&mut self, input: Input<'_>, ctx: &mut Ctx<'_>) -> Outcome {
        match input {
            Input::Action(action) if let Some(outcome) = self.palette_action(action, ctx) => {
                outcome
            }
            Input::Action(action)
                if let Some(edited) =
                    self.mentions.action(action, &mut self.composer, ctx.around) =>
            {
                if edited {
                    self.history.stop_recalling();
                }
                Outcome::Changed
            }
            Input::FileMatches(results) => Outcome::from_changed(self.mentions.take(results)),
            Input::Action(action) if let Some(outcome) = self.select_action(action, ctx) => outcome,
            // Typing selects nothing while the cursor is in the history.
            Input::Key(_) | Input::Paste(_) if self.text_cursor.is_some() => Outcome::Unchanged,
            Input::Action(Action::SendMessage) => self.send(ctx),
            Input::Action(Action::ExpandPastes)
                if self.pasted.any_in(&self.composer.lines().join("\n")) =>
            {
                // The pastes are kept: undo brings the chips back.
                let text = self.text();
                self.set_composer_text(&text);
                Outcome::Changed
            }
            Input::Action(Action::InsertNewline) => {
                self.composer.insert_newline();
                self.refresh_lists(ctx.around);
                Outcome::Changed
            }
            // Only the keys F1 lists for the composer edit it.
            Input::Key(key) if !crate::keymap::composer_takes(&key) => Outcome::Unchanged,
            Input::Key(key) if self.mentions.join_range(&mut self.composer, &key) => {
                self.history.stop_recalling();
                self.refresh_lists(ctx.around);
                Outcome::Changed
            }
            Input::Key(key) if let Some(outcome) = self.recall(key) => {
                self.refresh_lists(ctx.around);
                outcome
            }
            Input::Key(key) if let Some(changed) = undo_or_redo(&mut self.composer, &key) => {
                if changed {
                    self.history.stop_recalling();
                }
                self.refresh_lists(ctx.around);
                Outcome::from_changed(changed)
            }
            Input::Key(key) => {
                // `input` says only whether the text changed: a key that
                // moves the cursor or the selection must be drawn too.
                let before = (self.composer.cursor(), self.composer.selection_range());
                let changed = self.pasted.input(&mut self.composer, key.into());
                if changed {
                    self.history.stop_recalling();
                }
                self.refresh_lists(ctx.around);
                let moved = (self.composer.cursor(), self.composer.selection_range()) != before;
                Outcome::from_changed(changed || moved)
            }
            Input::Paste(text) => {
                self.mentions.forget_inserted();
                let changed = match self.pasted.chip(text) {
                    Some(chip) => self.composer.insert_str(chip),
                    None => self.composer.insert_str(text),
                };
                self.refresh_lists(ctx.around);
                Outcome::from_changed(changed)
            }
            // Rows become a place in the transcript in `app::frame::prepare`, which
            // knows the entries' heights and clamps at both ends.
            Input::Scroll(delta) if delta <= isize::MIN / 2 => {
                self.place.scroll_to_top();
                Outcome::Changed
            }
            Input::Scroll(delta) if delta >= isize::MAX / 2 => {
                self.place.follow();
                Outcome::Changed
            }
            Input::Scroll(delta) => {
                self.place.scroll_by(delta);
                Outcome::Changed
            }
            _ => Outcome::Ignored,
        }
    }

    fn render(&self, view: &View<'_>, area: Rect, frame: &mut Frame) {
        let focused = view.around.has_keyboard(PaneId::Conversation);
        let workbench = view.around.workbench;
        render(
            self,
            workbench,
            &view.model.history,
            view.theme,
            focused,
            area,
            frame,
        );
    }
}

fn render_pins(workbench: &Workbench, theme: &Theme, area: Rect, frame: &mut Frame) {
    let mut lines: Vec<Line> = workbench
        .pins()
        .iter()
        .rev()
        .take(screen::conversation::MAX_PIN_ROWS)
        .map(|pin| {
            Line::from(vec![
                Span::styled(" pinned ", theme.roles.status_key),
                Span::styled(
                    format!(" {} ", sanitize::for_display(&pin.label)),
                    theme.roles.text,
                ),
                Span::styled(
                    format!(
                        "({} chars) · Alt+Backspace removes",
                        pin.text.chars().count()
                    ),
                    theme.roles.muted,
                ),
            ])
        })
        .collect();
    if workbench.pins().len() > screen::conversation::MAX_PIN_ROWS {
        lines.push(Line::styled(
            format!(
                "  … and {} more pinned",
                workbench.pins().len() - screen::conversation::MAX_PIN_ROWS
            ),
            theme.roles.muted,
        ));
    }
    Paragraph::new(lines).render(area, frame.buffer_mut());
}

fn render(
    pane: &ConversationState,
    workbench: &Workbench,
    history: &HistoryLayout,
    theme: &Theme,
    focused: bool,
    area: Rect,
    frame: &mut Frame,
) {
    let [history_area, pins_area, composer_area] =
        screen::conversation::split(pane.composer_rows(area.width), workbench.pins().len(), area);
    render_pins(workbench, theme, pins_area, frame);

    let mut title = vec![Span::raw("Conversation")];
    if let Some(count) = message_count(workbench.transcript().len()) {
        title.push(Span::styled(format!(" {count}"), theme.roles.muted));
    }
    let title = Line::from(title);
    let block = pane::block(title, Some('1'), focused, theme);
    let inner = block.inner(history_area);
    block.render(history_area, frame.buffer_mut());
    render_history(pane, workbench, history, theme, inner, frame);

    let composer_block = pane::block(Line::from("Message"), None, focused, theme);
    let mut composer = pane.composer.clone();
    composer.set_block(composer_block);
    composer.set_style(theme.roles.text);
    composer.set_cursor_line_style(Style::default());
    composer.set_placeholder_style(theme.roles.muted);
    // Only the focused composer shows a cursor; otherwise typing looks possible.
    composer.set_cursor_style(if focused {
        theme.roles.cursor
    } else {
        theme.roles.text
    });
    frame.render_widget(&composer, composer_area);
    if let Some(list) = &pane.mentions.list {
        list.render(theme, inner, frame);
    }
    if let Some(palette) = &pane.palette {
        render_palette(palette, theme, inner, frame);
    }
}

/// The palette over the bottom of the history (inside its frame), just
/// above the composer:
/// each command's usage and description, the selected one highlighted.
fn render_palette(palette: &Palette, theme: &Theme, history_area: Rect, frame: &mut Frame) {
    // (`history_area` is the history's inner area.)
    let rows = palette.items.len().min(PALETTE_ROWS);
    let area = screen::conversation::list_over_history(history_area, rows);
    // The selected command stays in view when the list is longer.
    let first = palette.selected.saturating_sub(rows.saturating_sub(1));
    let lines: Vec<Line> = palette
        .items
        .iter()
        .enumerate()
        .skip(first)
        .take(rows)
        .map(|(i, command)| {
            let (name, rest) = if i == palette.selected {
                (theme.roles.selection, theme.roles.selection)
            } else {
                (theme.roles.title, theme.roles.muted)
            };
            let mut spans = vec![Span::styled(format!(" /{}", command.name), name)];
            if !command.args.is_empty() {
                spans.push(Span::styled(format!(" {}", command.args), rest));
            }
            spans.push(Span::styled(format!("  {}", command.description), rest));
            Line::from(spans)
        })
        .collect();
    let title = format!(
        "Commands · {} · Tab completes, Enter runs",
        palette.items.len()
    );
    let block =
        pane::block(Line::from(title), None, true, theme).border_style(theme.roles.overlay_border);
    ratatui::widgets::Clear.render(area, frame.buffer_mut());
    Paragraph::new(lines)
        .block(block)
        .render(area, frame.buffer_mut());
}

fn message_count(count: usize) -> Option<String> {
    match count {
        0 => None,
        1 => Some("(1 message)".into()),
        n => Some(format!("({n} messages)")),
    }
}

/// Paints the rows `app::frame::prepare` laid out; no layout happens here.
fn render_history(
    conversation: &ConversationState,
    workbench: &Workbench,
    history: &HistoryLayout,
    theme: &Theme,
    area: Rect,
    frame: &mut Frame,
) {
    let transcript = &workbench.transcript();
    if transcript.is_empty() {
        pane::empty_state(
            "No messages yet.\nType below and press Enter to send.",
            theme,
            area,
            frame.buffer_mut(),
        );
        return;
    }
    let lines = history.paint(transcript, conversation.flash, theme);
    Paragraph::new(lines).render(area, frame.buffer_mut());
    if let Some(selection) = &conversation.selection {
        let buf = frame.buffer_mut();
        for (y, (entry, row)) in (area.top()..area.bottom()).zip(history.shown_rows()) {
            let Some((start, end)) = selection.columns_of(entry, row) else {
                continue;
            };
            let last = end.min(usize::from(area.width).saturating_sub(1));
            for col in start..=last {
                buf[(area.x + col as u16, y)].set_style(theme.roles.selection);
            }
        }
    }
    if let Some(cursor) = &conversation.text_cursor
        && let Some(y) = history
            .shown_rows()
            .iter()
            .position(|&shown| shown == (cursor.at.entry, cursor.at.row))
        && cursor.at.col < usize::from(area.width)
    {
        let cell = (area.x + cursor.at.col as u16, area.y + y as u16);
        frame.buffer_mut()[cell].set_style(theme.roles.cursor);
    }
}

/// Takes the composer's text and clears it; `None` when there is nothing
/// but whitespace (nothing is sent, nothing is cleared).
fn take_text(composer: &mut TextArea<'static>) -> Option<String> {
    let text = composer.lines().join("\n");
    if text.trim().is_empty() {
        return None;
    }
    composer.select_all();
    composer.cut();
    composer.move_cursor(tui_textarea::CursorMove::Top);
    Some(text)
}

/// Ctrl+U and Ctrl+R in the composer: undo and redo a typed word at a
/// time (`undo_words`); `None` for any other key.
fn undo_or_redo(
    composer: &mut tui_textarea::TextArea<'static>,
    key: &crossterm::event::KeyEvent,
) -> Option<bool> {
    use crossterm::event::{KeyCode, KeyModifiers};
    if key.modifiers != KeyModifiers::CONTROL {
        return None;
    }
    match key.code {
        KeyCode::Char('u') => Some(super::undo_words::undo(composer)),
        KeyCode::Char('r') => Some(super::undo_words::redo(composer)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pointer maps to a row the pane shows, pulled into the text
    /// area when a drag leaves it; a pane with no text rows (a tiny
    /// terminal) maps nothing instead of panicking.
    #[test]
    fn the_pointer_maps_to_a_shown_row_or_to_nothing() {
        let shown = ShownRows {
            area: Rect::new(2, 3, 10, 2),
            rows: vec![(0, 0), (0, 1)],
        };
        let at = |entry, row, col| Some(HistoryPoint { entry, row, col });
        assert_eq!(shown.point_at(4, 3), at(0, 0, 2));
        assert_eq!(shown.point_at(0, 0), at(0, 0, 0), "above: the first row");
        assert_eq!(shown.point_at(50, 30), at(0, 1, 9), "below: the last row");
        let empty = ShownRows {
            area: Rect::new(2, 3, 10, 0),
            rows: Vec::new(),
        };
        assert_eq!(empty.point_at(4, 3), None);
        let no_rows = ShownRows {
            area: Rect::new(2, 3, 10, 2),
            rows: Vec::new(),
        };
        assert_eq!(no_rows.point_at(4, 3), None);
    }
}
