//! The arithmetic of the figures: rounding to what a report shows, the slope of the memory
//! series, nearest-rank percentiles, and the median and range of each figure over several runs.

use serde_json::{Value, json};

/// The report of several runs: every figure and series value the median of the runs' (for
/// an even count, the mean of the middle two), beside `figuresRange`, the same tree with each
/// number's `[least, greatest]`. A number a run reports as `null` (not measured) is left out of
/// that median; a key absent from a run's object counts as 0 there (only the per-operation and
/// per-resource counts have keys that vary between runs: an operation a run never called).
/// Text that differs between runs (e.g. P6's longest reconcile) becomes the list of each run's.
pub fn medians(reports: &[Value]) -> Value {
    let Some(first) = reports.first() else {
        return Value::Null;
    };
    let mut report = first.clone();
    for key in ["figures", "series"] {
        let values: Vec<&Value> = reports.iter().map(|r| &r[key]).collect();
        report[key] = combine(&values, Combine::Median);
    }
    report["figuresRange"] = combine(
        &reports.iter().map(|r| &r["figures"]).collect::<Vec<_>>(),
        Combine::Range,
    );
    report["dates"] = json!(
        reports
            .iter()
            .map(|r| r["date"].clone())
            .collect::<Vec<_>>()
    );
    report
}

#[derive(Clone, Copy)]
enum Combine {
    Median,
    Range,
}

/// One node of [`medians`]: the runs' values at the same place in their reports.
fn combine(values: &[&Value], how: Combine) -> Value {
    let present: Vec<&Value> = values.iter().copied().filter(|v| !v.is_null()).collect();
    let Some(first) = present.first() else {
        return Value::Null;
    };
    if present.iter().any(|v| v.is_object()) {
        let keys: std::collections::BTreeSet<&String> = present
            .iter()
            .filter_map(|v| v.as_object())
            .flat_map(|o| o.keys())
            .collect();
        let zero = json!(0);
        let mut out = serde_json::Map::new();
        for key in keys {
            let at: Vec<&Value> = present
                .iter()
                .map(|v| match v.get(key.as_str()) {
                    Some(inner) => inner,
                    None if v.is_object() => &zero,
                    None => &Value::Null,
                })
                .collect();
            let combined = combine(&at, how);
            if !(matches!(how, Combine::Range) && combined.is_null()) {
                out.insert(key.clone(), combined);
            }
        }
        return Value::Object(out);
    }
    if present.iter().any(|v| v.is_array()) {
        let longest = present
            .iter()
            .filter_map(|v| v.as_array())
            .map(Vec::len)
            .max()
            .unwrap_or(0);
        return Value::Array(
            (0..longest)
                .map(|i| {
                    let at: Vec<&Value> = present
                        .iter()
                        .map(|v| v.get(i).unwrap_or(&Value::Null))
                        .collect();
                    combine(&at, how)
                })
                .collect(),
        );
    }
    let mut numbers: Vec<f64> = present.iter().filter_map(|v| v.as_f64()).collect();
    if numbers.len() == present.len() {
        numbers.sort_by(f64::total_cmp);
        let integers = present.iter().all(|v| v.is_u64());
        let number = |x: f64| {
            if integers && x.fract() == 0.0 {
                json!(x as u64)
            } else {
                json!(round(x))
            }
        };
        return match how {
            Combine::Median => {
                let n = numbers.len();
                number((numbers[(n - 1) / 2] + numbers[n / 2]) / 2.0)
            }
            Combine::Range => json!([number(numbers[0]), number(numbers[numbers.len() - 1])]),
        };
    }
    match how {
        Combine::Range => Value::Null,
        Combine::Median if present.iter().all(|v| v == first) => (*first).clone(),
        Combine::Median => Value::Array(present.into_iter().cloned().collect()),
    }
}

/// The slope of the least-squares line through `points`.
pub(super) fn slope(points: &[(f64, f64)]) -> Option<f64> {
    if points.len() < 2 {
        return None;
    }
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

pub(super) fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The nearest-rank percentile `q` (0–1) of sorted values.
pub(super) fn percentile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted.get(rank.clamp(1, sorted.len()) - 1).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slope_is_least_squares() {
        assert_eq!(slope(&[(0.0, 10.0), (10.0, 12.0), (20.0, 14.0)]), Some(0.2));
        assert_eq!(slope(&[(1.0, 1.0)]), None);
    }

    #[test]
    fn several_runs_report_medians_ranges_and_what_differs() {
        let run = |date: &str, rss: f64, calls: u64, extra: Option<u64>, longest: &str| {
            let mut by_operation = json!({"eks/DescribeCluster": calls});
            if let Some(n) = extra {
                by_operation["ec2/DescribeSubnets"] = json!(n);
            }
            json!({
                "provider": "eks",
                "date": date,
                "figures": {
                    "P1": {"idleRssMiB": rss, "target": "≤ 12 MiB"},
                    "P3": null,
                    "P7": {"byOperation": by_operation},
                    "P6": {"secondsToProvisioned": if rss > 14.0 { json!(null) } else { json!(rss) },
                           "longestReconcile": longest},
                },
                "series": [{"clusters": 0, "rssMiB": rss}, {"clusters": 5, "rssMiB": rss + 1.0}],
            })
        };
        let report = medians(&[
            run("d1", 15.0, 10, Some(4), "≤ 5.12 s"),
            run("d2", 13.0, 30, None, "≤ 5.12 s"),
            run("d3", 14.0, 20, Some(2), "≤ 10.24 s"),
        ]);
        let figures = &report["figures"];
        assert_eq!(
            figures["P1"],
            json!({"idleRssMiB": 14.0, "target": "≤ 12 MiB"})
        );
        assert_eq!(figures["P3"], Value::Null);
        // A count absent from a run is that run's 0: the median of 4, 0 and 2.
        assert_eq!(
            figures["P7"]["byOperation"],
            json!({"eks/DescribeCluster": 20, "ec2/DescribeSubnets": 2})
        );
        // null is "not measured": the median of the two measured.
        assert_eq!(figures["P6"]["secondsToProvisioned"], json!(13.5));
        assert_eq!(
            figures["P6"]["longestReconcile"],
            json!(["≤ 5.12 s", "≤ 5.12 s", "≤ 10.24 s"])
        );
        assert_eq!(report["series"][1], json!({"clusters": 5, "rssMiB": 15.0}));
        let range = &report["figuresRange"];
        assert_eq!(range["P1"], json!({"idleRssMiB": [13.0, 15.0]}));
        assert_eq!(
            range["P7"]["byOperation"]["ec2/DescribeSubnets"],
            json!([0, 4])
        );
        assert_eq!(report["dates"], json!(["d1", "d2", "d3"]));
        assert_eq!(report["provider"], "eks");
        assert_eq!(medians(&[]), Value::Null);
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&v, 0.5), Some(50.0));
        assert_eq!(percentile(&v, 0.99), Some(99.0));
        assert_eq!(percentile(&[3.0], 0.99), Some(3.0));
        assert_eq!(percentile(&[], 0.5), None);
    }
}
