//! `--include`/`--exclude` in the order they were given: the AWS CLI lets the last matching
//! filter decide, so `--exclude '*' --include '*.txt'` and the reverse mean different things,
//! and clap's two lists lose that order. The argument indices clap keeps restore it.

use clap::ArgMatches;
use slipstream_s3::pattern::{Filters, Rule};

use crate::args;
use crate::Failure;

/// The filters of `flags` in command-line order; `matches` are the subcommand's.
pub fn ordered(flags: &args::Filters, matches: Option<&ArgMatches>) -> Result<Filters, Failure> {
    let mut all: Vec<(usize, Rule, &str)> = Vec::new();
    for (rule, id, values) in [
        (Rule::Include, "include", &flags.include),
        (Rule::Exclude, "exclude", &flags.exclude),
    ] {
        let indices = matches
            .and_then(|m| m.indices_of(id))
            .map(Iterator::collect::<Vec<_>>)
            .unwrap_or_default();
        // Without indices (never from the command line) keep the lists' own order.
        let indices = (0..values.len()).map(|i| indices.get(i).copied().unwrap_or(i));
        all.extend(indices.zip(values).map(|(i, v)| (i, rule, v.as_str())));
    }
    all.sort_by_key(|(i, _, _)| *i);
    let mut filters = Filters::new();
    for (_, rule, pattern) in all {
        filters
            .push(rule, pattern)
            .map_err(|e| Failure::usage(e.to_string()))?;
    }
    Ok(filters)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{CommandFactory, FromArgMatches};

    fn parse(argv: &[&str]) -> Filters {
        let m = args::Cli::command().get_matches_from(argv);
        let cli = args::Cli::from_arg_matches(&m).unwrap();
        let args::Command::Rm(rm) = cli.command else {
            panic!("not rm")
        };
        ordered(&rm.filters, m.subcommand().map(|(_, s)| s)).unwrap()
    }

    #[test]
    fn the_order_on_the_command_line_decides() {
        let only_txt = parse(&[
            "slipstream",
            "rm",
            "s3://b/",
            "--recursive",
            "--exclude",
            "*",
            "--include",
            "*.txt",
        ]);
        assert!(only_txt.takes("a.txt") && !only_txt.takes("a.jpg"));
        let nothing = parse(&[
            "slipstream",
            "rm",
            "s3://b/",
            "--recursive",
            "--include",
            "*.txt",
            "--exclude",
            "*",
        ]);
        assert!(!nothing.takes("a.txt") && !nothing.takes("a.jpg"));
    }
}
