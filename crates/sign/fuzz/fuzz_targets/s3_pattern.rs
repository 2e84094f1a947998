//! Wildcards and filters come from the command line and keys from the server: compiling any
//! pattern returns a value or an error, matching never panics and stays fast (the fuzzer's
//! timeout catches backtracking blow-ups), a pattern without wildcards matches exactly itself,
//! and every match starts with the pattern's literal prefix. The input is `pattern \0 text`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use slipstream_s3::pattern::{Filters, Pattern, Rule};

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let (pattern, text) = input.split_once('\0').unwrap_or((input, input));
    let Ok(p) = Pattern::new(pattern) else {
        return;
    };
    let matched = p.matches(text);
    if matched {
        assert!(text.starts_with(p.literal_prefix()), "{pattern:?} ~ {text:?}");
    }
    if !Pattern::has_wildcard(pattern) && !pattern.contains('\\') {
        assert_eq!(matched, pattern == text, "{pattern:?} ~ {text:?}");
    }
    let mut f = Filters::new();
    if f.push(Rule::Exclude, pattern).is_ok() {
        assert_eq!(f.takes(text), !matched);
    }
});
