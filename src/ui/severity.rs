//! How a severity looks wherever it shows (the Diagnostics pane, the file
//! view's gutter, the status bar, the problem detail): one icon and one
//! theme role each.

use ratatui::style::Style;

use crate::diagnostics::Severity;
use crate::theme::Theme;

pub(crate) fn severity_style(severity: Severity, theme: &Theme) -> Style {
    match severity {
        Severity::Error => theme.roles.error,
        Severity::Warning => theme.roles.warning,
        Severity::Info => theme.roles.info,
        Severity::Hint => theme.roles.hint,
    }
}

pub(crate) fn severity_icon(severity: Severity) -> &'static str {
    match severity {
        Severity::Error => "✖",
        Severity::Warning => "▲",
        Severity::Info => "●",
        Severity::Hint => "○",
    }
}
