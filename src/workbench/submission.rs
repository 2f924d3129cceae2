//! What Enter in the composer means: `%py CODE` runs a cell in the kernel
//! without the model, `/command ARGS` changes the workbench, anything else
//! is a prompt for the agent.

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Submission {
    /// `%py` followed by Python (same line or the lines below).
    PythonCell(String),
    /// `/name args`, e.g. `/approval auto`.
    SlashCommand {
        name: String,
        args: String,
    },
    Prompt(String),
}

/// Classifies the composer text. A leading `//` escapes a prompt that
/// really starts with a slash.
pub fn parse(text: &str) -> Submission {
    let trimmed = text.trim_start();
    if let Some(code) = trimmed.strip_prefix("%py")
        && (code.is_empty() || code.starts_with([' ', '\n', '\t']))
    {
        let code = code.strip_prefix(' ').unwrap_or(code);
        let code = code.strip_prefix('\n').unwrap_or(code);
        return Submission::PythonCell(code.to_owned());
    }
    if let Some(rest) = trimmed.strip_prefix("//") {
        return Submission::Prompt(format!("/{rest}"));
    }
    if let Some(command) = trimmed.strip_prefix('/')
        && !command.starts_with(char::is_whitespace)
    {
        let (name, args) = command
            .split_once(char::is_whitespace)
            .unwrap_or((command, ""));
        return Submission::SlashCommand {
            name: name.to_owned(),
            args: args.trim().to_owned(),
        };
    }
    Submission::Prompt(text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_cells() {
        assert_eq!(parse("%py x = 1"), Submission::PythonCell("x = 1".into()));
        assert_eq!(
            parse("%py\nfor i in range(3):\n    print(i)"),
            Submission::PythonCell("for i in range(3):\n    print(i)".into())
        );
        assert_eq!(parse("%python"), Submission::Prompt("%python".into()));
    }

    #[test]
    fn slash_commands_and_escapes() {
        assert_eq!(
            parse("/approval auto"),
            Submission::SlashCommand {
                name: "approval".into(),
                args: "auto".into()
            }
        );
        assert_eq!(
            parse("//etc/hosts is odd"),
            Submission::Prompt("/etc/hosts is odd".into())
        );
        assert_eq!(
            parse("why does checkAuth fail?"),
            Submission::Prompt("why does checkAuth fail?".into())
        );
        assert_eq!(parse("/ spaced"), Submission::Prompt("/ spaced".into()));
    }
}
