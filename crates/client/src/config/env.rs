//! The process environment as the chain sees it: the `AWS_*` variables and the home directory,
//! passed in so that tests do not touch the real environment.

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;

/// The variables and home directory the chain reads. Its `Debug` names the variables and shows
/// their values except those that hold secrets (`AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`,
/// any other `*SECRET*` or `*TOKEN` variable), which print as `<redacted>`.
#[derive(Clone, Default)]
pub struct Env {
    vars: HashMap<String, String>,
    pub(super) home: Option<PathBuf>,
}

impl Env {
    /// The process environment.
    pub fn from_process() -> Self {
        let vars = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .filter(|(k, _)| k.starts_with("AWS_"))
            .collect();
        let home = std::env::var_os("HOME").map(PathBuf::from);
        Self { vars, home }
    }

    /// A given set of variables and home directory (tests).
    pub fn new(vars: &[(&str, &str)], home: Option<PathBuf>) -> Self {
        Self {
            vars: vars
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
            home,
        }
    }

    pub(super) fn var(&self, name: &str) -> Option<&str> {
        self.vars
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    pub(super) fn file(&self, var: &str, default: &str) -> Option<PathBuf> {
        match self.var(var) {
            Some(p) => Some(PathBuf::from(p)),
            None => self.home.as_ref().map(|h| h.join(".aws").join(default)),
        }
    }
}

impl fmt::Debug for Env {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut names: Vec<&String> = self.vars.keys().collect();
        names.sort();
        let vars = names.into_iter().map(|name| {
            let value = if holds_secret(name) {
                "<redacted>"
            } else {
                self.vars[name].as_str()
            };
            (name, value)
        });
        f.debug_struct("Env")
            .field("vars", &DebugMap(vars.collect()))
            .field("home", &self.home)
            .finish()
    }
}

/// Whether an `AWS_*` variable holds a secret: a key, a token (not a token's file name), a
/// password. Unknown names containing these words are redacted too.
fn holds_secret(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    name.contains("SECRET")
        || name.contains("PASSWORD")
        || (name.contains("TOKEN") && !name.ends_with("_FILE"))
}

/// A list of pairs shown as a map.
struct DebugMap<'a>(Vec<(&'a String, &'a str)>);

impl fmt::Debug for DebugMap<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(k, v)| (k, v)))
            .finish()
    }
}
