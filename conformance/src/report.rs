//! The run's report: a table for people, JUnit XML for CI systems.

use std::fmt::Write as _;
use std::time::Duration;

use crate::checks::{Check, Outcome};

/// A fixed-width table: ID, result, statement, then the observation indented below.
pub fn table(rows: &[(&'static Check, Outcome)]) -> String {
    let mut out = String::new();
    let mut group = "";
    for (check, outcome) in rows {
        if check.group != group {
            group = check.group;
            let _ = writeln!(out, "\n{group}");
        }
        let _ = writeln!(
            out,
            "  {:<4} {:<4}  {}",
            check.id,
            outcome.label(),
            check.statement
        );
        if !outcome.detail().is_empty() {
            for line in outcome.detail().lines() {
                let _ = writeln!(out, "             {line}");
            }
        }
    }
    let (pass, fail, skip) = counts(rows);
    let _ = writeln!(
        out,
        "\n{} checks: {pass} passed, {fail} failed, {skip} skipped",
        rows.len()
    );
    out
}

/// (passed, failed, skipped).
pub fn counts(rows: &[(&'static Check, Outcome)]) -> (usize, usize, usize) {
    rows.iter().fold((0, 0, 0), |(p, f, s), (_, o)| match o {
        Outcome::Pass(_) => (p + 1, f, s),
        Outcome::Fail(_) => (p, f + 1, s),
        Outcome::Skip(_) => (p, f, s + 1),
    })
}

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && c != '\n' && c != '\t' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// JUnit XML: one test suite named after the provider, one test case per check (classname =
/// the check's group), failures and skips with the observation as message.
pub fn junit(provider: &str, rows: &[(&'static Check, Outcome)], elapsed: Duration) -> String {
    let (_, fail, skip) = counts(rows);
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"capi-managed-conformance\" tests=\"{}\" failures=\"{fail}\" skipped=\"{skip}\" time=\"{:.1}\">",
        rows.len(),
        elapsed.as_secs_f64()
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{fail}\" skipped=\"{skip}\" time=\"{:.1}\">",
        escape(provider),
        rows.len(),
        elapsed.as_secs_f64()
    );
    for (check, outcome) in rows {
        let _ = write!(
            out,
            "    <testcase classname=\"{}\" name=\"{} {}\"",
            escape(check.group),
            check.id,
            escape(check.statement)
        );
        match outcome {
            Outcome::Pass(detail) => {
                let _ = writeln!(
                    out,
                    "><system-out>{}</system-out></testcase>",
                    escape(detail)
                );
            }
            Outcome::Fail(detail) => {
                let first = detail.lines().next().unwrap_or_default();
                let _ = writeln!(
                    out,
                    "><failure message=\"{}\">{}</failure></testcase>",
                    escape(first),
                    escape(detail)
                );
            }
            Outcome::Skip(reason) => {
                let _ = writeln!(out, "><skipped message=\"{}\"/></testcase>", escape(reason));
            }
        }
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checks::{CheckId, find};

    fn rows() -> Vec<(&'static Check, Outcome)> {
        vec![
            (
                find(CheckId::C01).unwrap_or(&crate::checks::CATALOGUE[0]),
                Outcome::Pass("3 CRDs".into()),
            ),
            (
                find(CheckId::C28).unwrap_or(&crate::checks::CATALOGUE[0]),
                Outcome::Fail("label <missing> & \"x\"".into()),
            ),
            (
                find(CheckId::C43).unwrap_or(&crate::checks::CATALOGUE[0]),
                Outcome::Skip("no Machines".into()),
            ),
        ]
    }

    #[test]
    fn junit_counts_and_escapes() {
        let xml = junit("toy", &rows(), Duration::from_secs(3));
        assert!(
            xml.contains("tests=\"3\" failures=\"1\" skipped=\"1\""),
            "{xml}"
        );
        assert!(
            xml.contains("label &lt;missing&gt; &amp; &quot;x&quot;"),
            "{xml}"
        );
        assert!(xml.contains("<skipped message=\"no Machines\"/>"), "{xml}");
        assert_eq!(xml.matches("<testcase ").count(), 3);
    }

    #[test]
    fn table_groups_and_totals() {
        let t = table(&rows());
        assert!(t.contains("C28  FAIL"), "{t}");
        assert!(t.contains("3 checks: 1 passed, 1 failed, 1 skipped"), "{t}");
    }
}
