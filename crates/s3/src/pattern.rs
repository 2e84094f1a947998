//! Which keys a command takes: wildcards in a source (`s3://b/logs/2026-*/*.gz`, as s5cmd reads
//! them) and `--include`/`--exclude` filters (as the AWS CLI applies them). Pure string matching;
//! the listing that feeds it is the caller's.
//!
//! Both use fnmatch's wildcards, as the AWS CLI's filters do: `*` is any run of characters,
//! `/` included (so `logs/*` takes the whole tree below `logs/`), `?` one character, `[abc]`,
//! `[a-z]` and `[!abc]` one character of (or not of) a set. A `\` before a character takes
//! it literally.

use crate::Error;

/// A compiled wildcard pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pattern {
    tokens: Vec<Token>,
    source: String,
    /// The literal text before the first wildcard, kept: listings and every key's relative
    /// name ask for it.
    literal: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Char(char),
    Any,
    AnyRun,
    /// `(negated, ranges)`.
    Set(bool, Vec<(char, char)>),
}

impl Pattern {
    /// Compiles `pattern`; an unclosed `[` is an error rather than a literal.
    pub fn new(pattern: &str) -> Result<Self, Error> {
        let mut tokens = Vec::new();
        let mut chars = pattern.chars();
        while let Some(c) = chars.next() {
            tokens.push(match c {
                '*' => {
                    if tokens.last() == Some(&Token::AnyRun) {
                        continue;
                    }
                    Token::AnyRun
                }
                '?' => Token::Any,
                '\\' => Token::Char(chars.next().unwrap_or('\\')),
                '[' => set(&mut chars).ok_or_else(|| {
                    Error::InvalidPattern(format!("{pattern:?} has a [ without its ]"))
                })?,
                c => Token::Char(c),
            });
        }
        let literal = tokens
            .iter()
            .map_while(|t| match t {
                Token::Char(c) => Some(*c),
                _ => None,
            })
            .collect();
        Ok(Self {
            tokens,
            source: pattern.to_owned(),
            literal,
        })
    }

    /// Whether `text` contains a wildcard (so names it literally if not).
    pub fn has_wildcard(text: &str) -> bool {
        text.contains(['*', '?', '['])
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The literal text before the first wildcard: every match starts with it, so it is the
    /// prefix to list.
    pub fn literal_prefix(&self) -> &str {
        &self.literal
    }

    /// The pattern cut after the last `/` of its literal part: that directory (as text, escapes
    /// undone) and the rest (as pattern text, whose literal part holds no `/`). A sync lists
    /// the directory and matches names relative to it with the rest.
    pub fn split_directory(&self) -> (&str, &str) {
        let directory = &self.literal[..self.literal.rfind('/').map_or(0, |i| i + 1)];
        let mut rest = self.source.as_str();
        for _ in directory.chars() {
            let mut chars = rest.chars();
            if chars.next() == Some('\\') {
                chars.next();
            }
            rest = chars.as_str();
        }
        (directory, rest)
    }

    /// `text` as a pattern that matches it alone: `*`, `?`, `[` and `\` escaped.
    pub fn escape(text: &str) -> String {
        let mut escaped = String::with_capacity(text.len());
        for c in text.chars() {
            if matches!(c, '*' | '?' | '[' | '\\') {
                escaped.push('\\');
            }
            escaped.push(c);
        }
        escaped
    }

    /// Whether the whole of `text` matches.
    pub fn matches(&self, text: &str) -> bool {
        // Classic wildcard matching with one backtrack point (the last `*`): linear in
        // practice, quadratic at worst, never exponential. `t` is a byte offset of `text`,
        // always on a character boundary (no copy of the key per match).
        let next = |t: usize| text[t..].chars().next().map(|c| (c, t + c.len_utf8()));
        let (mut t, mut p) = (0, 0);
        let mut star: Option<(usize, usize)> = None;
        while let Some((c, after)) = next(t) {
            match self.tokens.get(p) {
                Some(Token::AnyRun) => {
                    star = Some((p, t));
                    p += 1;
                    continue;
                }
                Some(token) if token.takes(c) => {
                    p += 1;
                    t = after;
                    continue;
                }
                _ => {}
            }
            match star.and_then(|(sp, st)| Some((sp, next(st)?.1))) {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st;
                    star = Some((sp, st));
                }
                None => return false,
            }
        }
        self.tokens[p..].iter().all(|t| *t == Token::AnyRun)
    }
}

impl Token {
    fn takes(&self, c: char) -> bool {
        match self {
            Token::Char(x) => *x == c,
            Token::Any => true,
            Token::AnyRun => false,
            Token::Set(negated, ranges) => {
                ranges.iter().any(|(lo, hi)| (*lo..=*hi).contains(&c)) != *negated
            }
        }
    }
}

/// The set after a `[`, up to its `]` (a `]` first in the set is a member).
fn set(chars: &mut std::str::Chars<'_>) -> Option<Token> {
    let mut negated = false;
    let mut ranges = Vec::new();
    let mut first = true;
    loop {
        let c = chars.next()?;
        match c {
            '!' | '^' if first && !negated => {
                negated = true;
                continue;
            }
            ']' if !first => return Some(Token::Set(negated, ranges)),
            _ => {}
        }
        first = false;
        let mut ahead = chars.clone();
        match (ahead.next(), ahead.next()) {
            (Some('-'), Some(hi)) if hi != ']' => {
                chars.next();
                chars.next();
                ranges.push((c, hi));
            }
            _ => ranges.push((c, c)),
        }
    }
}

/// Whether a filter takes or leaves what it matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// `--include`.
    Include,
    /// `--exclude`.
    Exclude,
}

/// `--include`/`--exclude` filters in command-line order, with the AWS CLI's semantics: every
/// name is included unless a filter says otherwise, and the last filter that matches decides.
/// Patterns match names relative to the command's source (the prefix or directory).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filters {
    rules: Vec<(Rule, Pattern)>,
    /// A wildcard source's pattern (relative): a name it does not match is never taken,
    /// whatever the rules say.
    within: Option<Bound>,
}

/// How a wildcard source bounds the names taken.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Bound {
    /// An S3 wildcard: the whole name matches, `*` crossing `/` (s5cmd's and `ls`'s).
    Keys(Pattern),
    /// A local glob, one pattern per path segment, as a shell or Go's `filepath.Glob` (s5cmd's)
    /// reads it: `*` stays within a segment, and a match that is a directory takes everything
    /// below it (`dir/*` takes `dir/a/b`).
    Paths(Vec<Pattern>),
}

impl Filters {
    /// No filter: everything is taken.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a filter after the ones already given.
    pub fn push(&mut self, rule: Rule, pattern: &str) -> Result<(), Error> {
        self.rules.push((rule, Pattern::new(pattern)?));
        Ok(())
    }

    /// Takes only names `pattern` matches, before any rule is asked: a sync whose source is a
    /// wildcard (`s3://b/logs/*.gz`, relative `*.gz`) applies it to both sides, so that it
    /// neither copies nor (with `--delete`) removes a name outside it, as an excluded name is
    /// left alone; an `--include` cannot widen it.
    pub fn within(&mut self, pattern: &str) -> Result<(), Error> {
        self.within = Some(Bound::Keys(Pattern::new(pattern)?));
        Ok(())
    }

    /// [`Filters::within`] for a local glob (`*.csv`, `2026-*/day?`), matched segment by
    /// segment (see `Bound::Paths`), as s5cmd expands `cp 'dir/*.csv' s3://b/`.
    pub fn within_paths(&mut self, glob: &str) -> Result<(), Error> {
        let segments = glob.split('/').filter(|s| !s.is_empty());
        let segments = segments.map(Pattern::new).collect::<Result<Vec<_>, _>>()?;
        self.within = Some(Bound::Paths(segments));
        Ok(())
    }

    /// The S3 wildcard [`Filters::within`] set, if any: a listing can start at its literal
    /// part.
    pub fn bound(&self) -> Option<&Pattern> {
        match &self.within {
            Some(Bound::Keys(p)) => Some(p),
            _ => None,
        }
    }

    /// Whether a local glob bounds the names, so a walk can leave out the directories that
    /// [`Filters::may_take_below`] rules out.
    pub fn prunes(&self) -> bool {
        matches!(self.within, Some(Bound::Paths(_)))
    }

    /// Whether anything below the directory `dir` (relative, `/`-separated) can be taken:
    /// false only where a local glob rules it out (`2026-*/x` and `2025-01`), so that a
    /// walk of `~/*.jpg` reads one directory, not the whole tree below it.
    pub fn may_take_below(&self, dir: &str) -> bool {
        match &self.within {
            Some(Bound::Paths(segments)) => dir
                .split('/')
                .zip(segments)
                .all(|(part, p)| p.matches(part)),
            _ => true,
        }
    }

    /// Whether `name` (relative to the source) is taken.
    pub fn takes(&self, name: &str) -> bool {
        let inside = match &self.within {
            None => true,
            Some(Bound::Keys(p)) => p.matches(name),
            Some(Bound::Paths(segments)) => {
                let mut parts = name.split('/');
                segments
                    .iter()
                    .all(|p| parts.next().is_some_and(|part| p.matches(part)))
            }
        };
        if !inside {
            return false;
        }
        self.rules
            .iter()
            .rev()
            .find(|(_, p)| p.matches(name))
            .map_or(true, |(rule, _)| *rule == Rule::Include)
    }

    /// Whether there are no filters.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty() && self.within.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pattern: &str, text: &str) -> bool {
        Pattern::new(pattern).unwrap().matches(text)
    }

    #[test]
    fn wildcards_match_as_fnmatch_does() {
        let cases = [
            ("*", "", true),
            ("*", "a/b/c", true),
            ("logs/*", "logs/2026/x.gz", true),
            ("logs/*", "log/x", false),
            ("logs/2026-*/*.gz", "logs/2026-01/a.gz", true),
            ("logs/2026-*/*.gz", "logs/2026-01/a.gzip", false),
            ("logs/2026-*/*.gz", "logs/2025-01/a.gz", false),
            ("a?c", "abc", true),
            ("a?c", "ac", false),
            ("a?c", "aüc", true),
            ("[ab]x", "bx", true),
            ("[ab]x", "cx", false),
            ("[!ab]x", "cx", true),
            ("[a-c]1", "b1", true),
            ("[a-c]1", "d1", false),
            ("[]]", "]", true),
            ("x[-]y", "x-y", true),
            ("\\*", "*", true),
            ("\\*", "a", false),
            ("*.txt", "a.txt.bak", false),
            ("*a*b*c", "xxaxxbxxbxxc", true),
            ("*a*b*c", "xxaxxbxxbxx", false),
            ("a**b", "ab", true),
        ];
        for (pattern, text, want) in cases {
            assert_eq!(m(pattern, text), want, "{pattern:?} ~ {text:?}");
        }
    }

    #[test]
    fn a_pathological_pattern_stays_fast() {
        let text = "a".repeat(10_000);
        assert!(!m(&format!("{}b", "*a".repeat(50)), &text));
    }

    #[test]
    fn the_literal_prefix_is_what_to_list() {
        let p = |s: &str| Pattern::new(s).unwrap().literal_prefix().to_owned();
        assert_eq!(p("logs/2026-*/*.gz"), "logs/2026-");
        assert_eq!(p("a?"), "a");
        assert_eq!(p("x\\*y*"), "x*y");
        assert_eq!(p("*"), "");
        assert_eq!(p("plain/key"), "plain/key");
        assert!(Pattern::new("a[bc").is_err());
        assert!(Pattern::has_wildcard("a*") && !Pattern::has_wildcard("a/b"));
    }

    #[test]
    fn the_last_matching_filter_decides() {
        let mut f = Filters::new();
        assert!(f.takes("anything"));
        f.push(Rule::Exclude, "*").unwrap();
        f.push(Rule::Include, "*.txt").unwrap();
        assert!(f.takes("a/b.txt"));
        assert!(!f.takes("a/b.jpg"));
        f.push(Rule::Exclude, "tmp/*").unwrap();
        assert!(!f.takes("tmp/b.txt"));
        let mut g = Filters::new();
        g.push(Rule::Include, "*.txt").unwrap();
        assert!(
            g.takes("b.jpg"),
            "an include alone excludes nothing, as in the AWS CLI"
        );
    }

    #[test]
    fn a_pattern_splits_at_its_literal_directory_and_escapes_round_trip() {
        let split = |p: &str| {
            let p = Pattern::new(p).unwrap();
            let (dir, rest) = p.split_directory();
            (dir.to_owned(), rest.to_owned())
        };
        assert_eq!(
            split("logs/2026-*/*.gz"),
            ("logs/".into(), "2026-*/*.gz".into())
        );
        assert_eq!(split("*.gz"), ("".into(), "*.gz".into()));
        assert_eq!(split("a\\*b/c?/d"), ("a*b/".into(), "c?/d".into()));
        let odd = "we*ird?[dir]\\/k";
        let p = Pattern::new(&Pattern::escape(odd)).unwrap();
        assert!(p.matches(odd) && !p.matches("weXird?[dir]\\/k") && p.literal_prefix() == odd);
    }

    #[test]
    fn a_local_glob_matches_segment_by_segment_and_takes_what_is_below_a_match() {
        let mut f = Filters::new();
        f.within_paths("2026-*/*.gz").unwrap();
        assert!(f.prunes() && f.bound().is_none());
        assert!(f.takes("2026-01/a.gz") && f.takes("2026-01/b.gz/inside"));
        assert!(!f.takes("2026-01/x/a.gz"), "* stays within its segment");
        assert!(!f.takes("2026-01") && !f.takes("2025-01/a.gz"));
        assert!(f.may_take_below("2026-01") && f.may_take_below("2026-01/b.gz/deeper"));
        assert!(!f.may_take_below("2025-01") && !f.may_take_below("2026-01/x"));
        let mut all = Filters::new();
        all.within_paths("*").unwrap();
        assert!(
            all.takes(".hidden") && all.takes("a/b/c"),
            "as Go's filepath.Glob"
        );
        assert!(Filters::new().may_take_below("any/where") && !Filters::new().prunes());
    }

    #[test]
    fn a_wildcard_source_bounds_what_the_rules_take() {
        let mut f = Filters::new();
        f.within("2026-*/*.gz").unwrap();
        assert!(!f.is_empty());
        assert!(f.takes("2026-01/a.gz") && !f.takes("2025-01/a.gz") && !f.takes("2026-01/a.txt"));
        f.push(Rule::Include, "*").unwrap();
        assert!(!f.takes("2025-01/a.gz"), "an include does not widen it");
        f.push(Rule::Exclude, "*/b.gz").unwrap();
        assert!(f.takes("2026-01/a.gz") && !f.takes("2026-01/b.gz"));
    }
}
