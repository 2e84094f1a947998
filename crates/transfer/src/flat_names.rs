//! `--flatten` (s5cmd's): every object or file of a many-object copy goes under its last name
//! alone (`logs/2026-01/a.gz` to `dir/a.gz`), into one directory or prefix. Two sources with
//! the same last name would write one destination, the later over the earlier without a word
//! (s5cmd's outcome, decided by which finishes last); here the later is refused instead, an
//! error of that object naming both, and the others go on.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::TransferError;

/// The last `/`-separated segment of a name relative to the source (`2026-01/a.gz`: `a.gz`).
pub fn last_name(relative: &str) -> &str {
    relative.rsplit('/').next().unwrap_or(relative)
}

/// The destination names a flattened copy has given out, and to which source.
#[derive(Debug, Default)]
pub(crate) struct FlatNames {
    taken: Mutex<HashMap<String, String>>,
}

impl FlatNames {
    /// Claims `destination` for `source` (both as the messages show them); if another source
    /// has it, an error of this object that names both.
    pub(crate) fn claim(&self, destination: &str, source: &str) -> Result<(), TransferError> {
        let mut taken = self.taken.lock().unwrap_or_else(|e| e.into_inner());
        match taken.get(destination) {
            Some(first) if first != source => Err(TransferError::Object {
                name: source.to_owned(),
                error: Box::new(TransferError::Invalid(format!(
                    "{destination} is already the copy of {first} (--flatten keeps only last \
                     names, and two sources have this one)"
                ))),
            }),
            Some(_) => Ok(()),
            None => {
                taken.insert(destination.to_owned(), source.to_owned());
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_segment_is_the_name() {
        assert_eq!(last_name("2026-01/a.gz"), "a.gz");
        assert_eq!(last_name("a.gz"), "a.gz");
        assert_eq!(last_name("x/y/z"), "z");
    }

    #[test]
    fn a_second_source_for_one_name_is_refused_with_both_named() {
        let names = FlatNames::default();
        names.claim("dir/a.gz", "s3://b/x/a.gz").unwrap();
        names.claim("dir/a.gz", "s3://b/x/a.gz").unwrap(); // the same source again: fine
        names.claim("dir/b.gz", "s3://b/y/b.gz").unwrap();
        let e = names.claim("dir/a.gz", "s3://b/y/a.gz").unwrap_err();
        let text = e.to_string();
        assert!(
            text.starts_with("s3://b/y/a.gz: dir/a.gz is already the copy of s3://b/x/a.gz"),
            "{text}"
        );
        assert!(
            matches!(e, TransferError::Object { .. }),
            "an error of that object alone"
        );
    }
}
