//! Sizes as people write them for the AWS CLI (`8MB`, `16MiB`, `8388608`): one reading for the
//! profile's `s3` settings, `--part-size` and the bandwidth caps, so that a value means the same
//! bytes wherever it is given.

/// Bytes, or a whole number with `K`, `M`, `G` or `T`, `KB`... or `KiB`... (all powers of 1024,
/// as the AWS CLI counts them; any case), or `B`; `None` for anything else and for sizes past
/// `u64`. The AWS CLI itself takes the two-letter and `iB` forms; the others are accepted too.
pub fn parse_size(text: &str) -> Option<u64> {
    let t = text.to_ascii_lowercase();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let unit: u64 = match unit.strip_suffix('b').unwrap_or(unit) {
        "" => 1,
        "k" | "ki" => 1 << 10,
        "m" | "mi" => 1 << 20,
        "g" | "gi" => 1 << 30,
        "t" | "ti" => 1 << 40,
        _ => return None,
    };
    digits.parse::<u64>().ok()?.checked_mul(unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What awscli's `human_readable_to_int` makes of the same text, and the short forms.
    #[test]
    fn sizes_read_as_the_aws_cli_reads_them() {
        for (text, bytes) in [
            ("8388608", 8 << 20),
            ("8MB", 8 << 20),
            ("8mb", 8 << 20),
            ("8M", 8 << 20),
            ("16MiB", 16 << 20),
            ("64KB", 64 << 10),
            ("1GB", 1 << 30),
            ("2TiB", 2 << 40),
            ("512B", 512),
        ] {
            assert_eq!(parse_size(text), Some(bytes), "{text}");
        }
        for bad in [
            "",
            "8 MB",
            "MB",
            "1.5MB",
            "-8MB",
            "8PB",
            "8iB",
            "8MBB",
            "99999999999TB",
        ] {
            assert_eq!(parse_size(bad), None, "{bad}");
        }
    }
}
