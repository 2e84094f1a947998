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
            .filter(|(k, _)| k.starts_with("AWS_") || read_beside(k))
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

    /// A variable as set, empty or not.
    pub(super) fn raw(&self, name: &str) -> Option<&str> {
        self.vars.get(name).map(String::as_str)
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
                "<redacted>".to_owned()
            } else if is_proxy(name) {
                crate::proxy::shown(&self.vars[name])
            } else {
                self.vars[name].clone()
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

/// Variables read besides `AWS_*`: the proxies (`proxy.rs`), in either case, and
/// `REQUEST_METHOD`, which says the process is a CGI program.
fn read_beside(name: &str) -> bool {
    is_proxy(name) || name.eq_ignore_ascii_case("no_proxy") || name == "REQUEST_METHOD"
}

/// Whether a variable names a proxy, whose URL may hold a password (shown without it).
fn is_proxy(name: &str) -> bool {
    name.eq_ignore_ascii_case("http_proxy") || name.eq_ignore_ascii_case("https_proxy")
}

/// A list of pairs shown as a map.
struct DebugMap<'a>(Vec<(&'a String, String)>);

impl fmt::Debug for DebugMap<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(k, v)| (k, v)))
            .finish()
    }
}
