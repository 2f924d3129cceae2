//! A hook's `matcher`, read as Claude Code reads it: empty or `*` matches
//! everything; names made of letters, digits, `_` and `|` match exactly
//! (`Bash`, `Edit|Write`); anything else is a regular expression searched
//! in the name (`mcp__github__.*`, `Notebook.*`).

use serde::Deserialize;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(try_from = "String")]
pub enum Matcher {
    #[default]
    All,
    Names(Vec<String>),
    Pattern(regex::Regex),
}

impl Matcher {
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.is_empty() || text == "*" {
            return Ok(Matcher::All);
        }
        if text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '|')
        {
            return Ok(Matcher::Names(
                text.split('|')
                    .filter(|name| !name.is_empty())
                    .map(str::to_owned)
                    .collect(),
            ));
        }
        regex::Regex::new(text)
            .map(Matcher::Pattern)
            .map_err(|error| format!("matcher `{text}` is not a valid pattern: {error}"))
    }

    pub fn matches(&self, name: &str) -> bool {
        match self {
            Matcher::All => true,
            Matcher::Names(names) => names.iter().any(|n| n == name),
            Matcher::Pattern(pattern) => pattern.is_match(name),
        }
    }
}

impl TryFrom<String> for Matcher {
    type Error = String;

    fn try_from(text: String) -> Result<Self, String> {
        Matcher::parse(&text)
    }
}

impl PartialEq for Matcher {
    fn eq(&self, other: &Self) -> bool {
        self.to_string() == other.to_string()
    }
}

impl std::fmt::Display for Matcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Matcher::All => f.write_str("*"),
            Matcher::Names(names) => f.write_str(&names.join("|")),
            Matcher::Pattern(pattern) => f.write_str(pattern.as_str()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_match_exactly_and_patterns_search() {
        let all = Matcher::parse("").unwrap();
        assert!(all.matches("Bash") && Matcher::parse("*").unwrap().matches("x"));
        let names = Matcher::parse("Edit|Write").unwrap();
        assert!(names.matches("Write") && !names.matches("WriteAll") && !names.matches("Bash"));
        let pattern = Matcher::parse("mcp__github__.*").unwrap();
        assert!(pattern.matches("mcp__github__create_issue") && !pattern.matches("Bash"));
        assert!(Matcher::parse("(").is_err());
    }
}
