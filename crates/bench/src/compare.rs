//! `slipstream bench compare A.json B.json`: ratios per percentile, and both runs in one plot.

use std::fmt::Write as _;

use crate::html;
use crate::report::Report;

/// The comparison table: for each operation both runs have, each percentile of latency and
/// time to first byte in A and B, and B/A (below 1: B is faster).
pub fn table(a: &Report, b: &Report, a_name: &str, b_name: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "A: {a_name}: {}", a.title());
    let _ = writeln!(out, "B: {b_name}: {}", b.title());
    let _ = writeln!(
        out,
        "throughput: A {:.0} ops/s {:.1} MB/s, B {:.0} ops/s {:.1} MB/s, B/A {}",
        a.ops_per_s,
        a.mb_per_s,
        b.ops_per_s,
        b.mb_per_s,
        ratio(b.ops_per_s, a.ops_per_s)
    );
    let _ = writeln!(out, "{:<22}{:>12}{:>12}{:>9}", "(ms)", "A", "B", "B/A");
    let mut shared = 0;
    for (name, oa) in &a.operations {
        let Some(ob) = b.operations.get(name) else {
            continue;
        };
        shared += 1;
        for (what, sa, sb) in [
            ("latency", &oa.latency_ms, &ob.latency_ms),
            ("ttfb", &oa.ttfb_ms, &ob.ttfb_ms),
        ] {
            if sa.count == 0 || sb.count == 0 {
                continue;
            }
            for ((p, va), (_, vb)) in sa.named().iter().zip(sb.named().iter()) {
                let _ = writeln!(
                    out,
                    "{:<22}{va:>12.3}{vb:>12.3}{:>9}",
                    format!("{name} {what} {p}"),
                    ratio(*vb, *va)
                );
            }
        }
    }
    if shared == 0 {
        out.push_str("the runs have no kind of operation in common\n");
    }
    out
}

fn ratio(b: f64, a: f64) -> String {
    if a > 0.0 {
        format!("{:.2}x", b / a)
    } else {
        "-".into()
    }
}

/// A page with the table and both runs' percentile curves in one plot.
pub fn html(a: &Report, b: &Report, a_name: &str, b_name: &str) -> String {
    let mut series = html::cdf_series(a, "A ");
    series.extend(html::cdf_series(b, "B "));
    let body = format!(
        "<h1>Comparison</h1><pre>{}</pre><h2>Latency by percentile</h2>{}",
        slipstream_client::xml::escape(&table(a, b, a_name, b_name)),
        html::percentile_chart(&series)
    );
    html::page("slipstream bench compare", &body)
}
