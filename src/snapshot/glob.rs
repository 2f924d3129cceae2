//! A small, case-insensitive glob matcher for privacy rules.
//!
//! Supported syntax: `*` (any run without `/`), `**` (any run, including
//! `/`), `?` (one character other than `/`). Matching is a dynamic program
//! over (pattern, text), so hostile patterns or paths cannot blow up
//! exponentially. Case-insensitive because `.ENV` on a case-insensitive file
//! system is still `.env`; when in doubt, withholding more is the safe side.

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Glob {
    source: String,
    tokens: Vec<Token>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    Char(char),
    AnyChar,
    Star,
    DoubleStar,
    /// `**/`: zero or more whole directories, so `**/a` matches `a`.
    AnyDirs,
}

impl Glob {
    pub fn new(pattern: &str) -> Self {
        let mut tokens = Vec::new();
        let mut chars = pattern.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '*' if chars.peek() == Some(&'*') => {
                    chars.next();
                    if chars.peek() == Some(&'/') {
                        chars.next();
                        tokens.push(Token::AnyDirs);
                    } else {
                        tokens.push(Token::DoubleStar);
                    }
                }
                '*' => tokens.push(Token::Star),
                '?' => tokens.push(Token::AnyChar),
                other => tokens.extend(other.to_lowercase().map(Token::Char)),
            }
        }
        Self {
            source: pattern.to_string(),
            tokens,
        }
    }

    /// True when the glob contains a `/` and so applies to whole paths rather
    /// than to file names.
    pub(crate) fn is_path_pattern(&self) -> bool {
        self.source.contains('/')
    }

    pub fn matches(&self, text: &str) -> bool {
        let text: Vec<char> = text.chars().flat_map(char::to_lowercase).collect();
        let t = text.len();
        // reachable[j] == pattern prefix i matches text prefix j.
        let mut reachable = vec![false; t + 1];
        reachable[0] = true;
        for &token in &self.tokens {
            let mut next = vec![false; t + 1];
            match token {
                Token::AnyDirs => {
                    let mut seen = false;
                    for j in 0..=t {
                        seen |= reachable[j];
                        next[j] = reachable[j] || (seen && j > 0 && text[j - 1] == '/');
                    }
                }
                Token::DoubleStar => {
                    let mut seen = false;
                    for j in 0..=t {
                        seen |= reachable[j];
                        next[j] = seen;
                    }
                }
                Token::Star => {
                    let mut open = false;
                    for j in 0..=t {
                        if reachable[j] {
                            open = true;
                        } else if j > 0 && text[j - 1] == '/' {
                            open = false;
                        }
                        next[j] = open;
                    }
                }
                Token::AnyChar => {
                    for j in 1..=t {
                        next[j] = reachable[j - 1] && text[j - 1] != '/';
                    }
                }
                Token::Char(c) => {
                    for j in 1..=t {
                        next[j] = reachable[j - 1] && text[j - 1] == c;
                    }
                }
            }
            reachable = next;
        }
        reachable[t]
    }
}

#[cfg(test)]
mod tests {
    use super::Glob;

    fn m(pattern: &str, text: &str) -> bool {
        Glob::new(pattern).matches(text)
    }

    #[test]
    fn literal_and_question_mark() {
        assert!(m(".env", ".env"));
        assert!(m(".ENV", ".env"));
        assert!(!m(".env", ".envx"));
        assert!(m("id_?sa", "id_rsa"));
        assert!(!m("a?b", "a/b"));
    }

    #[test]
    fn single_star_stays_in_one_component() {
        assert!(m("*.pem", "server.pem"));
        assert!(m(".env*", ".env.local"));
        assert!(m(".env*", ".env"));
        assert!(!m("*.pem", "dir/server.pem"));
        assert!(!m("*.pem", "server.pem.txt"));
    }

    #[test]
    fn double_star_crosses_directories() {
        assert!(m("**/.ssh/**", "/home/u/.ssh/config"));
        assert!(m("**/.ssh/**", ".ssh/id"));
        assert!(m("secrets/**", "secrets/a/b.txt"));
        assert!(!m("secrets/**", "src/secrets.rs"));
        assert!(m("**/a", "a"));
        assert!(m("**/a", "x/y/a"));
        assert!(!m("**/a", "xa"));
    }

    #[test]
    fn pathological_input_is_fast() {
        let pattern = "*a*a*a*a*a*a*a*a*b";
        let text = "a".repeat(2000);
        assert!(!m(pattern, &text));
    }
}
