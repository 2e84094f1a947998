//! IAM-style policies: which S3 actions a key may take on which resources.
//!
//! The subset an edge can enforce without guessing: `Effect` (`Allow`/`Deny`), `Action` or
//! `NotAction` (`s3:GetObject`, `s3:Get*`, `*`; case-insensitive), `Resource` or `NotResource`
//! (`arn:aws:s3:::bucket/prefix*`, `?` for one character; case-sensitive), `Sid`. An explicit
//! Deny wins over any Allow; what no statement allows is denied. Anything else (`Condition`,
//! `Principal`, policy variables such as `${aws:username}`) refuses to load: ignoring a
//! condition would grant more than its author meant.

use std::fmt;

use serde_json::Value;

/// A loaded policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    statements: Vec<Statement>,
}

/// Why a policy did not load; the message names the element to fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyError(pub String);

impl fmt::Display for PolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PolicyError {}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Statement {
    allow: bool,
    action: Matcher,
    resource: Matcher,
}

/// `Action`/`Resource` (`negated: false`) or `NotAction`/`NotResource` (`true`).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Matcher {
    negated: bool,
    patterns: Vec<String>,
}

impl Matcher {
    fn matches(&self, value: &str, ignore_case: bool) -> bool {
        let any = self
            .patterns
            .iter()
            .any(|p| wildcard(p.as_bytes(), value.as_bytes(), ignore_case));
        any != self.negated
    }
}

impl Policy {
    /// Reads a policy document (`{"Version": ..., "Statement": [...]}`).
    pub fn parse(doc: &Value) -> Result<Self, PolicyError> {
        let err = |m: String| Err(PolicyError(m));
        let Value::Object(top) = doc else {
            return err("a policy is an object with a Statement".into());
        };
        let mut statements = None;
        for (name, value) in top {
            match name.as_str() {
                "Version" => match value.as_str() {
                    Some("2012-10-17" | "2008-10-17") => {}
                    _ => return err(format!("Version {value} is not 2012-10-17")),
                },
                "Id" => {}
                "Statement" => statements = Some(value),
                other => return err(format!("the policy element {other:?} is not supported")),
            }
        }
        let list = match statements {
            Some(Value::Array(list)) => list.iter().collect(),
            Some(one @ Value::Object(_)) => vec![one],
            _ => return err("the policy has no Statement (an object or a list of them)".into()),
        };
        let statements = list
            .into_iter()
            .enumerate()
            .map(|(i, s)| statement(s).map_err(|e| PolicyError(format!("Statement {i}: {}", e.0))))
            .collect::<Result<_, _>>()?;
        Ok(Self { statements })
    }

    /// Whether `action` (`s3:GetObject`) on `resource` (`arn:aws:s3:::bucket/key`, or `*`)
    /// is allowed: some statement allows it and none denies it.
    pub fn allows(&self, action: &str, resource: &str) -> bool {
        let mut allowed = false;
        for s in &self.statements {
            if s.action.matches(action, true) && s.resource.matches(resource, false) {
                if !s.allow {
                    return false;
                }
                allowed = true;
            }
        }
        allowed
    }
}

fn statement(value: &Value) -> Result<Statement, PolicyError> {
    let err = |m: String| Err(PolicyError(m));
    let Value::Object(fields) = value else {
        return err("a statement is an object".into());
    };
    let (mut allow, mut action, mut resource) = (None, None, None);
    for (name, value) in fields {
        match name.as_str() {
            "Sid" => {}
            "Effect" => {
                allow = Some(match value.as_str() {
                    Some("Allow") => true,
                    Some("Deny") => false,
                    _ => return err(format!("Effect {value} is neither \"Allow\" nor \"Deny\"")),
                })
            }
            "Action" | "NotAction" => set(&mut action, name, value)?,
            "Resource" | "NotResource" => set(&mut resource, name, value)?,
            other => {
                return err(format!(
                    "the element {other:?} is not supported: the edge refuses a policy it could only partly enforce"
                ))
            }
        }
    }
    let Some(allow) = allow else {
        return err("Effect is missing".into());
    };
    let action = action.ok_or_else(|| PolicyError("Action or NotAction is missing".into()))?;
    let resource =
        resource.ok_or_else(|| PolicyError("Resource or NotResource is missing".into()))?;
    Ok(Statement {
        allow,
        action,
        resource,
    })
}

/// Reads `Action`, `NotAction`, `Resource` or `NotResource` into `slot` (once).
fn set(slot: &mut Option<Matcher>, name: &str, value: &Value) -> Result<(), PolicyError> {
    if slot.is_some() {
        return Err(PolicyError(format!(
            "{name} given together with its twin (Action/NotAction, Resource/NotResource)"
        )));
    }
    let patterns: Vec<String> = match value {
        Value::String(s) => vec![s.clone()],
        Value::Array(list) => list
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect::<Option<_>>()
            .ok_or_else(|| PolicyError(format!("{name} must be a string or a list of strings")))?,
        _ => {
            return Err(PolicyError(format!(
                "{name} must be a string or a list of strings"
            )))
        }
    };
    if patterns.is_empty() {
        return Err(PolicyError(format!("{name} is an empty list")));
    }
    for p in &patterns {
        if p.contains("${") {
            return Err(PolicyError(format!(
                "{name} {p:?} uses a policy variable, which the edge does not support"
            )));
        }
        if name.ends_with("Action") && p != "*" && !p.to_ascii_lowercase().starts_with("s3:") {
            return Err(PolicyError(format!(
                "{name} {p:?} is not an S3 action (s3:...)"
            )));
        }
        if name.ends_with("Resource") && p != "*" && !p.starts_with("arn:aws:s3:::") {
            return Err(PolicyError(format!(
                "{name} {p:?} is not an S3 resource (arn:aws:s3:::bucket/key)"
            )));
        }
    }
    *slot = Some(Matcher {
        negated: name.starts_with("Not"),
        patterns,
    });
    Ok(())
}

/// IAM's wildcards: `*` any run of characters (also none), `?` exactly one. Iterative with one
/// backtrack point, so a pattern of many stars costs linear time, not exponential.
fn wildcard(pattern: &[u8], text: &[u8], ignore_case: bool) -> bool {
    let eq = |a: u8, b: u8| {
        if ignore_case {
            a.eq_ignore_ascii_case(&b)
        } else {
            a == b
        }
    };
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        match pattern.get(p) {
            // A trailing star takes whatever is left (`bucket/prefix*`, `s3:*`, `*`: most
            // patterns), without stepping through it.
            Some(b'*') if p + 1 == pattern.len() => return true,
            Some(b'*') => {
                star = Some((p, t));
                p += 1;
            }
            Some(&c) if c == b'?' || eq(c, text[t]) => {
                p += 1;
                t += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    p = sp + 1;
                    t = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn policy(v: Value) -> Policy {
        Policy::parse(&v).unwrap()
    }

    #[test]
    fn wildcards_match_like_iam() {
        assert!(wildcard(b"s3:Get*", b"s3:GetObject", false));
        assert!(wildcard(b"S3:get*", b"s3:GetObject", true));
        assert!(!wildcard(b"S3:get*", b"s3:GetObject", false));
        assert!(wildcard(
            b"arn:aws:s3:::b/a?c",
            b"arn:aws:s3:::b/abc",
            false
        ));
        assert!(!wildcard(
            b"arn:aws:s3:::b/a?c",
            b"arn:aws:s3:::b/ac",
            false
        ));
        assert!(wildcard(b"*", b"", false));
        // A trailing star after a prefix, and stars before others.
        assert!(wildcard(
            b"arn:aws:s3:::b/pre*",
            b"arn:aws:s3:::b/prefix/x",
            false
        ));
        assert!(!wildcard(
            b"arn:aws:s3:::b/pre*",
            b"arn:aws:s3:::b/pr",
            false
        ));
        assert!(!wildcard(b"arn:aws:s3:::c/*", b"arn:aws:s3:::b/k", false));
        assert!(wildcard(b"a*c*", b"abcd", false));
        assert!(!wildcard(b"a*c*", b"abd", false));
        assert!(wildcard(b"a*b*c", b"aXXbYYc", false));
        assert!(!wildcard(b"a*b*c", b"aXXbYY", false));
        assert!(wildcard(b"arn:aws:s3:::b/*", b"arn:aws:s3:::b/", false));
        assert!(!wildcard(b"arn:aws:s3:::b/*", b"arn:aws:s3:::b", false));
        // Many stars against a long miss stay fast (no exponential backtracking).
        let text = vec![b'a'; 10_000];
        assert!(!wildcard(b"*a*a*a*a*a*a*a*b", &text, false));
    }

    #[test]
    fn explicit_deny_wins_and_nothing_is_allowed_by_default() {
        let p = policy(json!({
            "Version": "2012-10-17",
            "Statement": [
                {"Effect": "Allow", "Action": "s3:*", "Resource": "arn:aws:s3:::b/*"},
                {"Effect": "Deny", "Action": ["s3:DeleteObject*"], "Resource": "arn:aws:s3:::b/keep/*"}
            ]
        }));
        assert!(p.allows("s3:GetObject", "arn:aws:s3:::b/x"));
        assert!(p.allows("s3:DeleteObject", "arn:aws:s3:::b/x"));
        assert!(!p.allows("s3:DeleteObject", "arn:aws:s3:::b/keep/x"));
        assert!(!p.allows("s3:DeleteObjectVersion", "arn:aws:s3:::b/keep/x"));
        assert!(p.allows("s3:GetObject", "arn:aws:s3:::b/keep/x"));
        assert!(!p.allows("s3:GetObject", "arn:aws:s3:::other/x"));
        assert!(!p.allows("s3:ListBucket", "arn:aws:s3:::b"));
    }

    #[test]
    fn not_action_and_not_resource_invert() {
        let p = policy(json!({
            "Statement": {"Effect": "Allow", "NotAction": "s3:Delete*", "NotResource": "arn:aws:s3:::secret*"}
        }));
        assert!(p.allows("s3:PutObject", "arn:aws:s3:::b/k"));
        assert!(!p.allows("s3:DeleteObject", "arn:aws:s3:::b/k"));
        assert!(!p.allows("s3:GetObject", "arn:aws:s3:::secret/k"));
    }

    #[test]
    fn what_cannot_be_enforced_refuses_to_load() {
        let refused = [
            json!({"Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*",
                "Condition": {"IpAddress": {"aws:SourceIp": "10.0.0.0/8"}}}]}),
            json!({"Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:*", "Resource": "*"}]}),
            json!({"Statement": [{"Effect": "Allow", "Action": "s3:*",
                "Resource": "arn:aws:s3:::b/${aws:username}/*"}]}),
            json!({"Statement": [{"Effect": "allow", "Action": "s3:*", "Resource": "*"}]}),
            json!({"Statement": [{"Effect": "Allow", "Action": "s3:*"}]}),
            json!({"Statement": [{"Effect": "Allow", "Action": "s3:*", "NotAction": "s3:Get*", "Resource": "*"}]}),
            json!({"Statement": [{"Effect": "Allow", "Action": "ec2:*", "Resource": "*"}]}),
            json!({"Statement": [{"Effect": "Allow", "Action": [], "Resource": "*"}]}),
            json!({"Version": "2099-01-01", "Statement": []}),
            json!({"Statment": []}),
            json!("s3:*"),
        ];
        for doc in refused {
            assert!(Policy::parse(&doc).is_err(), "loaded {doc}");
        }
    }
}
