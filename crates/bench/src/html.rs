//! The HTML report: one self-contained file (inline SVG and CSS, no script, no fetch), so it
//! opens offline and can be attached to an issue as it is.

use std::fmt::Write as _;

use slipstream_client::xml::escape as esc;

use crate::report::Report;

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 300.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 20.0;
const BOTTOM: f64 = 45.0;
const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// A labelled series of points.
pub struct Series<'a> {
    /// Legend text.
    pub label: String,
    /// `(x, y)` points.
    pub points: &'a [(f64, f64)],
}

/// The report of one run.
pub fn report(r: &Report) -> String {
    let mut body = String::new();
    let _ = write!(body, "<h1>{}</h1>", esc(&r.title()));
    let _ = write!(
        body,
        "<p>{} operations in {:.2} s: {:.0} ops/s, {:.1} MB/s, {} errors.</p>",
        r.ops, r.elapsed_s, r.ops_per_s, r.mb_per_s, r.errors
    );
    body.push_str(&table(r));
    body.push_str("<h2>Latency by percentile</h2>");
    body.push_str(&percentile_chart(&cdf_series(r, "")));
    body.push_str("<h2>Latency histogram</h2>");
    for (name, op) in &r.operations {
        let _ = write!(body, "<h3>{}</h3>", esc(name));
        body.push_str(&histogram_chart(&op.latency_histogram));
    }
    body.push_str("<h2>Throughput over time</h2>");
    let ops: Vec<(f64, f64)> = r
        .timeline
        .iter()
        .map(|p| (p.second as f64, p.ops as f64))
        .collect();
    let mb: Vec<(f64, f64)> = r.timeline.iter().map(|p| (p.second as f64, p.mb)).collect();
    body.push_str(&line_chart(
        &[Series {
            label: "operations per second".into(),
            points: &ops,
        }],
        "second of the run",
        "ops/s",
    ));
    if r.bytes > 0 {
        body.push_str(&line_chart(
            &[Series {
                label: "MB per second".into(),
                points: &mb,
            }],
            "second of the run",
            "MB/s",
        ));
    }
    body.push_str("<h2>Where the time to first byte goes (mean ms)</h2>");
    body.push_str(&split_chart(r));
    page(&r.title(), &body)
}

/// The latency and time-to-first-byte curves of every operation of `r`, labels prefixed by
/// `tag` (`"A "` and `"B "` in a comparison).
pub fn cdf_series<'a>(r: &'a Report, tag: &str) -> Vec<Series<'a>> {
    let mut series = Vec::new();
    for (name, op) in &r.operations {
        series.push(Series {
            label: format!("{tag}{name} latency"),
            points: &op.latency_cdf,
        });
        if !op.ttfb_cdf.is_empty() {
            series.push(Series {
                label: format!("{tag}{name} ttfb"),
                points: &op.ttfb_cdf,
            });
        }
    }
    series
}

/// A whole page around `body`.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>{}</title><style>\
         body{{font:14px system-ui,sans-serif;max-width:780px;margin:2em auto;color:#222}}\
         table{{border-collapse:collapse;margin:1em 0}}td,th{{padding:2px 8px;text-align:right;\
         border-bottom:1px solid #ddd}}th:first-child,td:first-child{{text-align:left}}\
         svg{{background:#fafafa;border:1px solid #eee}}text{{font:11px sans-serif}}\
         </style></head><body>{body}</body></html>\n",
        esc(title)
    )
}

fn table(r: &Report) -> String {
    let mut t = String::from(
        "<table><tr><th>ms</th><th>count</th><th>p25</th><th>p50</th><th>p75</th><th>p90</th>\
         <th>p99</th><th>p99.9</th><th>max</th><th>mean</th></tr>",
    );
    for (name, op) in &r.operations {
        for (what, s) in [("latency", &op.latency_ms), ("ttfb", &op.ttfb_ms)] {
            if s.count == 0 {
                continue;
            }
            let _ = write!(t, "<tr><td>{} {what}</td><td>{}</td>", esc(name), s.count);
            for (_, v) in s.named() {
                let _ = write!(t, "<td>{v:.3}</td>");
            }
            t.push_str("</tr>");
        }
    }
    t.push_str("</table>");
    if !r.error_kinds.is_empty() {
        t.push_str("<p>Errors:</p><ul>");
        for (what, n) in &r.error_kinds {
            let _ = write!(t, "<li>{n} x {}</li>", esc(what));
        }
        t.push_str("</ul>");
    }
    t
}

/// Latency (y) against percentile (x, on a log scale of the tail: 0, 90, 99, 99.9, 99.99%),
/// the plot HdrHistogram made usual: the tail is as wide as the body.
pub fn percentile_chart(series: &[Series<'_>]) -> String {
    let tail = |q: f64| -(1.0 - q.min(0.99999)).log10();
    let converted: Vec<Vec<(f64, f64)>> = series
        .iter()
        .map(|s| s.points.iter().map(|(ms, q)| (tail(*q), *ms)).collect())
        .collect();
    let ymax = nice_max(converted.iter().flatten().map(|p| p.1).fold(0.0, f64::max));
    let xmax = converted
        .iter()
        .flatten()
        .map(|p| p.0)
        .fold(1.0, f64::max)
        .ceil();
    let mut svg = frame();
    for d in 0..=xmax as usize {
        let label = match d {
            0 => "0%".to_string(),
            d => format!("{}%", 100.0 - 100.0 / 10f64.powi(d as i32)),
        };
        x_tick(&mut svg, d as f64 / xmax, &label);
    }
    y_ticks(&mut svg, ymax, "ms");
    for (i, points) in converted.iter().enumerate() {
        let scaled: Vec<(f64, f64)> = points.iter().map(|(x, y)| (x / xmax, y / ymax)).collect();
        polyline(&mut svg, &scaled, COLORS[i % COLORS.len()], true);
    }
    legend(&mut svg, series);
    axis_title(&mut svg, "percentile", "latency");
    svg.push_str("</svg>");
    svg
}

/// Counts per log-spaced bucket, as bars.
fn histogram_chart(buckets: &[(f64, u64)]) -> String {
    let mut svg = frame();
    if buckets.is_empty() {
        svg.push_str("</svg>");
        return svg;
    }
    let lo = (buckets[0].0.log10() - 0.1).floor();
    let hi = buckets[buckets.len() - 1].0.log10().ceil().max(lo + 1.0);
    let cmax = buckets.iter().map(|b| b.1).max().unwrap_or(1) as f64;
    let x = |ms: f64| (ms.log10() - lo) / (hi - lo);
    for d in lo as i32..=hi as i32 {
        x_tick(
            &mut svg,
            (d as f64 - lo) / (hi - lo),
            &format!("{} ms", fmt_num(10f64.powi(d))),
        );
    }
    y_ticks(&mut svg, nice_max(cmax), "");
    let ymax = nice_max(cmax);
    for (upper, count) in buckets {
        let (x1, x0) = (x(*upper), x(upper / 10f64.powf(0.1)));
        let (px0, px1) = (px(x0), px(x1));
        let h = *count as f64 / ymax * (HEIGHT - TOP - BOTTOM);
        let _ = write!(
            svg,
            "<rect x=\"{px0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{h:.1}\" fill=\"{}\"><title>{} at or below {} ms</title></rect>",
            HEIGHT - BOTTOM - h,
            (px1 - px0 - 1.0).max(1.0),
            COLORS[0],
            count,
            fmt_num(*upper)
        );
    }
    axis_title(&mut svg, "latency (log scale)", "requests");
    svg.push_str("</svg>");
    svg
}

/// Lines over a linear x axis (the timeline).
pub fn line_chart(series: &[Series<'_>], xlabel: &str, ylabel: &str) -> String {
    let mut svg = frame();
    let xmax = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .fold(1.0, f64::max);
    let ymax = nice_max(
        series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1))
            .fold(0.0, f64::max),
    );
    let xmax = nice_max(xmax);
    for i in 0..=5 {
        let v = xmax * i as f64 / 5.0;
        x_tick(&mut svg, v / xmax, &fmt_num(v));
    }
    y_ticks(&mut svg, ymax, "");
    for (i, s) in series.iter().enumerate() {
        let scaled: Vec<(f64, f64)> = s.points.iter().map(|(x, y)| (x / xmax, y / ymax)).collect();
        polyline(&mut svg, &scaled, COLORS[i % COLORS.len()], false);
    }
    legend(&mut svg, series);
    axis_title(&mut svg, xlabel, ylabel);
    svg.push_str("</svg>");
    svg
}

/// One stacked bar per kind of operation: mean connect, TLS, send, wait and body times.
fn split_chart(r: &Report) -> String {
    const PHASES: [&str; 5] = ["connect", "tls", "send", "wait", "body"];
    let rows: Vec<(&String, Vec<f64>)> = r
        .operations
        .iter()
        .filter(|(_, op)| !op.phases_ms.is_empty())
        .map(|(name, op)| {
            let count = op.count.max(1) as f64;
            // Means over every request: a phase only some requests had (connect, on pooled
            // connections) weighs in by how often it happened.
            let parts = PHASES
                .iter()
                .map(|p| {
                    op.phases_ms
                        .get(*p)
                        .map_or(0.0, |s| s.mean * s.count as f64 / count)
                })
                .collect();
            (name, parts)
        })
        .collect();
    let total = rows
        .iter()
        .map(|(_, p)| p.iter().sum::<f64>())
        .fold(0.0, f64::max);
    let xmax = nice_max(total);
    let bar = 28.0;
    let height = TOP + BOTTOM + rows.len().max(1) as f64 * (bar + 12.0) + 20.0;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\">"
    );
    for (i, (name, parts)) in rows.iter().enumerate() {
        let y = TOP + i as f64 * (bar + 12.0);
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            LEFT - 6.0,
            y + bar / 2.0 + 4.0,
            esc(name)
        );
        let mut x = 0.0;
        for (j, v) in parts.iter().enumerate() {
            if *v <= 0.0 {
                continue;
            }
            let w = v / xmax * (WIDTH - LEFT - RIGHT);
            let _ = write!(
                svg,
                "<rect x=\"{:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" height=\"{bar}\" fill=\"{}\"><title>{} {v:.3} ms</title></rect>",
                LEFT + x,
                COLORS[j % COLORS.len()],
                PHASES[j]
            );
            x += w;
        }
    }
    let axis_y = TOP + rows.len().max(1) as f64 * (bar + 12.0);
    for i in 0..=5 {
        let v = xmax * i as f64 / 5.0;
        let _ = write!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{} ms</text>",
            LEFT + v / xmax * (WIDTH - LEFT - RIGHT),
            axis_y + 14.0,
            fmt_num(v)
        );
    }
    for (j, p) in PHASES.iter().enumerate() {
        let x = LEFT + j as f64 * 110.0;
        let _ = write!(
            svg,
            "<rect x=\"{x}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{:.1}\" y=\"{:.1}\">{p}</text>",
            axis_y + 26.0,
            COLORS[j],
            x + 14.0,
            axis_y + 35.0
        );
    }
    svg.push_str("</svg>");
    svg
}

fn frame() -> String {
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{HEIGHT}\" viewBox=\"0 0 {WIDTH} {HEIGHT}\">"
    );
    let _ = write!(
        s,
        "<line x1=\"{LEFT}\" y1=\"{0}\" x2=\"{1}\" y2=\"{0}\" stroke=\"#888\"/><line x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{0}\" stroke=\"#888\"/>",
        HEIGHT - BOTTOM,
        WIDTH - RIGHT
    );
    s
}

/// Plot x in pixels of a fraction 0..1 of the axis.
fn px(f: f64) -> f64 {
    LEFT + f * (WIDTH - LEFT - RIGHT)
}

fn py(f: f64) -> f64 {
    HEIGHT - BOTTOM - f * (HEIGHT - TOP - BOTTOM)
}

fn x_tick(svg: &mut String, f: f64, label: &str) {
    let _ = write!(
        svg,
        "<line x1=\"{0:.1}\" y1=\"{TOP}\" x2=\"{0:.1}\" y2=\"{1}\" stroke=\"#eee\"/><text x=\"{0:.1}\" y=\"{2}\" text-anchor=\"middle\">{3}</text>",
        px(f),
        HEIGHT - BOTTOM,
        HEIGHT - BOTTOM + 14.0,
        esc(label)
    );
}

fn y_ticks(svg: &mut String, max: f64, unit: &str) {
    for i in 0..=4 {
        let v = max * i as f64 / 4.0;
        let y = py(i as f64 / 4.0);
        let _ = write!(
            svg,
            "<line x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{0}\" y2=\"{y:.1}\" stroke=\"#eee\"/><text x=\"{1}\" y=\"{2:.1}\" text-anchor=\"end\">{3}{4}</text>",
            WIDTH - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            fmt_num(v),
            if unit.is_empty() { String::new() } else { format!(" {unit}") }
        );
    }
}

fn polyline(svg: &mut String, points: &[(f64, f64)], color: &str, steps: bool) {
    let mut d = String::new();
    let mut last: Option<(f64, f64)> = None;
    for (x, y) in points {
        let (x, y) = (px(x.clamp(0.0, 1.0)), py(y.clamp(0.0, 1.0)));
        if let (true, Some((_, ly))) = (steps, last) {
            let _ = write!(d, "{x:.1},{ly:.1} ");
        }
        let _ = write!(d, "{x:.1},{y:.1} ");
        last = Some((x, y));
    }
    let _ = write!(
        svg,
        "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"1.5\" points=\"{}\"/>",
        d.trim_end()
    );
}

fn legend(svg: &mut String, series: &[Series<'_>]) {
    for (i, s) in series.iter().enumerate() {
        let y = TOP + 6.0 + i as f64 * 15.0;
        let _ = write!(
            svg,
            "<rect x=\"{0}\" y=\"{1:.1}\" width=\"10\" height=\"10\" fill=\"{2}\"/><text x=\"{3}\" y=\"{4:.1}\">{5}</text>",
            LEFT + 12.0,
            y,
            COLORS[i % COLORS.len()],
            LEFT + 26.0,
            y + 9.0,
            esc(&s.label)
        );
    }
}

fn axis_title(svg: &mut String, x: &str, y: &str) {
    let _ = write!(
        svg,
        "<text x=\"{0:.1}\" y=\"{1}\" text-anchor=\"middle\">{2}</text><text x=\"12\" y=\"{3:.1}\" transform=\"rotate(-90 12 {3:.1})\" text-anchor=\"middle\">{4}</text>",
        px(0.5),
        HEIGHT - 8.0,
        esc(x),
        py(0.5),
        esc(y)
    );
}

/// The smallest of 1, 2, 2.5, 5 times a power of ten at or above `v`.
fn nice_max(v: f64) -> f64 {
    if v <= 0.0 || !v.is_finite() {
        return 1.0;
    }
    let p = 10f64.powf(v.log10().floor());
    [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * p)
        .find(|c| *c >= v)
        .unwrap_or(10.0 * p)
}

fn fmt_num(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{}", (v * 10.0).round() / 10.0)
    } else {
        format!("{}", (v * 1000.0).round() / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_maxima() {
        assert_eq!(nice_max(0.0), 1.0);
        assert_eq!(nice_max(3.0), 5.0);
        assert_eq!(nice_max(180.0), 200.0);
        assert_eq!(nice_max(0.21), 0.25);
        assert_eq!(nice_max(1000.0), 1000.0);
    }
}
