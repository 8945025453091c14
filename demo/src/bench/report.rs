//! What a run leaves behind: the report's JSON (the run's settings, the machine, the figures
//! and the memory and time series) and the two SVG plots drawn from its series.

use anyhow::Result;
use serde_json::{Value, json};

use super::statistics::round;
use super::{BenchOptions, Point};
use crate::env::Cloud;

/// The report of one run: what was run, where and how, the figures and the series.
pub(super) fn run_report(
    options: &BenchOptions,
    started_at: jiff::Timestamp,
    figures: Value,
    series: &[Point],
) -> Result<Value> {
    Ok(json!({
        "provider": options.stem(),
        "providerBinary": match options.subject.release() {
            None => crate::env::provider_binary(options.subject.cloud())?.display().to_string(),
            Some(release) => format!("{} {release}", options.subject.binary()),
        },
        "cloud": options.subject.cloud().kind_prefix(),
        "date": started_at.to_string(),
        "command": std::env::args().collect::<Vec<_>>().join(" "),
        "machine": machine(),
        "settings": {
            "sizes": options.sizes,
            "restSeconds": options.rest.as_secs_f64(),
            "pollInterval": options.poll_interval,
            "cloudDelaySeconds": 0,
            "workloadServers": options.with_workload_servers(),
            "network": if options.brought_network() { "brought by the user" } else { "made by the provider" },
            "poolsPerCluster": 1,
            "nodesPerPool": 1,
            "kubernetesVersion": options.subject.kubernetes_version(),
            "clusterQuota": options.clusters_needed().max(match options.subject.cloud() {
                Cloud::Eks => emulators::eks::CLUSTER_QUOTA,
                Cloud::Gke => emulators::gke::CLUSTER_QUOTA,
                Cloud::Oke => emulators::oke::CLUSTER_LIMIT,
                Cloud::Aks => 0,
            }),
        },
        "figures": figures,
        "series": series.iter().map(|p| json!({
            "clusters": p.clusters,
            "rssMiB": round(p.rss_mib),
            "secondsToReady": round(p.seconds_to_ready),
        })).collect::<Vec<_>>(),
    }))
}

/// Writes a report's JSON and its two plots (from its `series`) into `options.out`.
pub(super) fn write_report(options: &BenchOptions, report: &Value) -> Result<()> {
    std::fs::create_dir_all(&options.out)?;
    std::fs::write(
        options.out.join(format!("{}-bench.json", options.stem())),
        serde_json::to_string_pretty(report)?,
    )?;
    // (clusters, the point's `field`) for each point of the series.
    let points = |field: &str| -> Vec<(f64, f64)> {
        report["series"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| Some((p["clusters"].as_f64()?, p[field].as_f64()?)))
            .collect()
    };
    let plots = [
        (
            format!("{}-rss.svg", options.stem()),
            format!("{} resident memory", options.subject.binary()),
            "clusters",
            "RSS (MiB)",
            points("rssMiB"),
        ),
        (
            format!("{}-time.svg", options.stem()),
            "clusters applied at once → all ready".to_string(),
            "clusters in all",
            "seconds",
            points("secondsToReady"),
        ),
    ];
    for (file, title, x_label, y_label, points) in plots {
        std::fs::write(
            options.out.join(file),
            svg_plot(&title, x_label, y_label, &points),
        )?;
    }
    Ok(())
}

fn machine() -> Value {
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let mem_kib = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .unwrap_or(0.0);
    let cpu_model = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|m| m.trim_start_matches([' ', '\t', ':']).to_string())
        .unwrap_or_default();
    json!({
        "cpus": std::thread::available_parallelism().map_or(0, std::num::NonZero::get),
        "cpuModel": cpu_model,
        "memoryGiB": round(mem_kib / 1024.0 / 1024.0),
        "kernel": std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default().trim(),
    })
}

/// A line plot of `points` with labelled axes, as a standalone SVG document.
pub fn svg_plot(title: &str, x_label: &str, y_label: &str, points: &[(f64, f64)]) -> String {
    let (w, h, left, bottom, top, right) = (640.0, 400.0, 70.0, 50.0, 40.0, 20.0);
    let x_max = points.iter().map(|p| p.0).fold(1.0f64, f64::max);
    let y_max = points.iter().map(|p| p.1).fold(1.0f64, f64::max) * 1.1;
    let sx = |x: f64| left + x / x_max * (w - left - right);
    let sy = |y: f64| h - bottom - y / y_max * (h - bottom - top);
    let path: Vec<String> = points
        .iter()
        .map(|&(x, y)| format!("{:.1},{:.1}", sx(x), sy(y)))
        .collect();
    let dots: String = points
        .iter()
        .map(|&(x, y)| {
            format!(
                "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\">{y:.1}</text>",
                sx(x),
                sy(y),
                sx(x) + 4.0,
                sy(y) - 4.0
            )
        })
        .collect();
    let escape = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\">\
<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\
<text x=\"{left}\" y=\"24\" font-size=\"14\">{}</text>\
<line x1=\"{left}\" y1=\"{y0}\" x2=\"{x1}\" y2=\"{y0}\" stroke=\"black\"/>\
<line x1=\"{left}\" y1=\"{top}\" x2=\"{left}\" y2=\"{y0}\" stroke=\"black\"/>\
<text x=\"{xm}\" y=\"{xl}\" font-size=\"12\" text-anchor=\"middle\">{}</text>\
<text x=\"16\" y=\"{ym}\" font-size=\"12\" transform=\"rotate(-90 16 {ym})\" text-anchor=\"middle\">{}</text>\
<text x=\"{left}\" y=\"{xt}\" font-size=\"10\">0</text>\
<text x=\"{x1}\" y=\"{xt}\" font-size=\"10\" text-anchor=\"end\">{x_max}</text>\
<text x=\"{yt}\" y=\"{top}\" font-size=\"10\" text-anchor=\"end\">{y_max:.1}</text>\
<polyline fill=\"none\" stroke=\"steelblue\" stroke-width=\"2\" points=\"{}\"/>\
<g fill=\"steelblue\">{dots}</g></svg>\n",
        escape(title),
        escape(x_label),
        escape(y_label),
        path.join(" "),
        y0 = h - bottom,
        x1 = w - right,
        xm = (left + w - right) / 2.0,
        xl = h - 12.0,
        ym = (top + h - bottom) / 2.0,
        xt = h - bottom + 14.0,
        yt = left - 4.0,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plots_are_escaped_svg() {
        let svg = svg_plot("a <b>", "x", "y", &[(0.0, 1.0), (10.0, 5.0)]);
        assert!(svg.starts_with("<svg") && svg.contains("a &lt;b&gt;"));
        assert!(svg.contains("<polyline"));
    }
}
