//! The AWS shared-file format: INI sections with one level of nested keys.
//!
//! ```text
//! [profile dev]
//! region = eu-west-1
//! s3 =
//!   addressing_style = path
//! ```
//! Nested keys are returned as `s3.addressing_style`. Comments start with `#` or `;`.

use std::collections::HashMap;

/// Section name to (key to value). Section names are as written inside the brackets, trimmed.
pub type Sections = HashMap<String, HashMap<String, String>>;

/// Parses `text`; lines that are neither sections, keys nor comments are ignored, as botocore does.
pub fn parse(text: &str) -> Sections {
    let mut sections = Sections::new();
    let mut current: Option<String> = None;
    let mut parent: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if let Some(name) = trimmed.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
            let name = name.trim().to_owned();
            sections.entry(name.clone()).or_default();
            current = Some(name);
            parent = None;
            continue;
        }
        let Some(section) = current.as_ref().and_then(|c| sections.get_mut(c)) else {
            continue;
        };
        let Some((key, value)) = trimmed.split_once('=') else {
            continue;
        };
        let (key, value) = (key.trim().to_ascii_lowercase(), value.trim().to_owned());
        let indented = line.starts_with([' ', '\t']);
        match (&parent, indented) {
            (Some(p), true) => {
                section.insert(format!("{p}.{key}"), value);
            }
            _ if value.is_empty() => parent = Some(key),
            _ => {
                parent = None;
                section.insert(key, value);
            }
        }
    }
    sections
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sections_comments_and_nested_keys() {
        let s = parse("# c\n[default]\naws_access_key_id = A\n; c\n[profile dev]\nregion=eu-west-1\ns3 =\n  addressing_style = path\nother = x\n");
        assert_eq!(s["default"]["aws_access_key_id"], "A");
        assert_eq!(s["profile dev"]["region"], "eu-west-1");
        assert_eq!(s["profile dev"]["s3.addressing_style"], "path");
        assert_eq!(s["profile dev"]["other"], "x");
    }
}
