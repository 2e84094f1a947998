//! s5cmd's order of the command line: options before the command (`s5cmd --endpoint-url URL
//! ls s3://b`, `s5cmd --json ls`), where `slipstream` reads a command's options after its name.
//! The options before the first word naming a command are moved behind it, so command lines
//! written for s5cmd work as they are. An option's value is never taken for the command: what
//! clap knows of each flag says whether it takes one (`--profile cp ls` is `ls --profile cp`).

use std::ffi::{OsStr, OsString};

use clap::Command;

/// `args` (the program name first) with the options before the command moved behind it; as
/// given when the command comes first, when something other than an option precedes it, or
/// when no command is named (`--help`, `--version`, a typo clap then reports).
pub fn command_first(command: &Command, args: Vec<OsString>) -> Vec<OsString> {
    let is_command = |word: &OsStr| {
        word.to_str().is_some_and(|w| {
            command
                .get_subcommands()
                .any(|c| c.get_name() == w || c.get_all_aliases().any(|a| a == w))
        })
    };
    let mut i = 1;
    while let Some(word) = args.get(i) {
        if is_command(word) {
            break;
        }
        let Some(text) = word.to_str().filter(|w| w.starts_with('-') && *w != "-") else {
            return args; // a word that is neither an option nor a command
        };
        i += 1;
        let Some(name) = text.strip_prefix("--").filter(|n| !n.contains('=')) else {
            continue; // `--name=value`, or a short flag (none of ours before a command takes one)
        };
        // The value of an option that takes one: always when it must have one, else when the
        // next word is no command and no option (`--request-payer [WHO]`).
        let Some(required) = takes_value(command, name) else {
            continue;
        };
        let next = args.get(i);
        let next_is_value = next.is_some_and(|n| {
            required || !(is_command(n) || n.to_str().is_some_and(|n| n.starts_with('-')))
        });
        if next_is_value {
            i += 1;
        }
    }
    if i <= 1 || i >= args.len() {
        return args;
    }
    let mut out = Vec::with_capacity(args.len());
    out.push(args[0].clone());
    out.push(args[i].clone());
    out.extend_from_slice(&args[1..i]);
    out.extend_from_slice(&args[i + 1..]);
    out
}

/// Whether the long option `name` of any command takes a value: `Some(true)` when it must
/// have one, `Some(false)` when it may, `None` for a flag without one (or a name no command
/// has, left for clap to report).
fn takes_value(command: &Command, name: &str) -> Option<bool> {
    let arg = command
        .get_subcommands()
        .flat_map(Command::get_arguments)
        .find(|a| a.get_long() == Some(name))?;
    if !arg.get_action().takes_values() {
        return None;
    }
    Some(arg.get_num_args().map_or(true, |n| n.min_values() > 0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn reordered(line: &str) -> String {
        let mut command = crate::args::Cli::command();
        command.build();
        let args = line.split(' ').map(OsString::from).collect();
        let out = command_first(&command, args);
        out.iter()
            .map(|a| a.to_str().unwrap())
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn options_before_the_command_move_behind_it() {
        for (given, read) in [
            (
                "s --endpoint-url http://x ls s3://b",
                "s ls --endpoint-url http://x s3://b",
            ),
            ("s --json ls s3://b/*", "s ls --json s3://b/*"),
            (
                "s --endpoint-url=http://x --no-sign-request cat s3://b/k",
                "s cat --endpoint-url=http://x --no-sign-request s3://b/k",
            ),
            // A value that is a command's name stays the option's.
            ("s --profile cp ls s3://b", "s ls --profile cp s3://b"),
            // An optional value: taken when it is no command, left when it is one.
            (
                "s --request-payer requester ls s3://b",
                "s ls --request-payer requester s3://b",
            ),
            ("s --request-payer ls s3://b", "s ls --request-payer s3://b"),
            // An option no command has is moved too; clap then names it.
            ("s --frobnicate ls s3://b", "s ls --frobnicate s3://b"),
        ] {
            assert_eq!(reordered(given), read, "{given}");
        }
    }

    #[test]
    fn other_lines_are_left_as_they_are() {
        for line in [
            "s ls --endpoint-url http://x s3://b",
            "s --help",
            "s --version",
            "s --endpoint-url http://x",
            "s s3://b ls",
        ] {
            assert_eq!(reordered(line), line);
        }
    }
}
