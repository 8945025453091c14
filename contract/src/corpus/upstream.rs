//! Inputs no one here wrote: the valid and invalid strings of Kubernetes' own validation tests,
//! for the classes the pool CRDs must enforce as Kubernetes does (label keys and taint keys are
//! qualified names; label values and taint values are label values; a key's prefix is a DNS
//! subdomain).
//!
//! Taken verbatim from `k8s.io/apimachinery` v0.36.3, `pkg/util/validation/validation_test.go`
//! (`TestIsQualifiedName`, `TestIsValidLabelValue`, `TestIsDNS1123Subdomain`; Apache-2.0, The
//! Kubernetes Authors), with `strings.Repeat` written out by [`repeat`]. Each provider's admission
//! test replays them against its real CRDs on a real kube-apiserver: every invalid one must be
//! refused naming its field, every valid one admitted unless the cloud's own tighter limit
//! refuses it (then with the cloud's message).

/// `strings.Repeat(s, n)`.
fn repeat(s: &str, n: usize) -> String {
    s.repeat(n)
}

fn owned(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_string()).collect()
}

/// `TestIsQualifiedName` success cases.
pub fn qualified_names_valid() -> Vec<String> {
    let mut out = owned(&[
        "simple",
        "now-with-dashes",
        "1-starts-with-num",
        "1234",
        "simple/simple",
        "now-with-dashes/simple",
        "now-with-dashes/now-with-dashes",
        "now.with.dots/simple",
        "now-with.dashes-and.dots/simple",
        "1-num.2-num/3-num",
        "1234/5678",
        "1.2.3.4/5678",
        "Uppercase_Is_OK_123",
        "example.com/Uppercase_Is_OK_123",
        "requests.storage-foo",
    ]);
    out.push(repeat("a", 63));
    out.push(format!("{}/{}", repeat("a", 253), repeat("b", 63)));
    out
}

/// `TestIsQualifiedName` error cases.
pub fn qualified_names_invalid() -> Vec<String> {
    let mut out = owned(&[
        "nospecialchars%^=@",
        "cantendwithadash-",
        "-cantstartwithadash-",
        "only/one/slash",
        "Example.com/abc",
        "example_com/abc",
        "example.com/",
        "/simple",
    ]);
    out.push(repeat("a", 64));
    out.push(format!("{}/abc", repeat("a", 254)));
    out
}

/// `TestIsValidLabelValue` success cases.
pub fn label_values_valid() -> Vec<String> {
    let mut out = owned(&[
        "simple",
        "now-with-dashes",
        "1-starts-with-num",
        "end-with-num-1",
        "1234",
    ]);
    out.push(repeat("a", 63));
    out.push(String::new());
    out
}

/// `TestIsValidLabelValue` error cases.
pub fn label_values_invalid() -> Vec<String> {
    let mut out = owned(&[
        "nospecialchars%^=@",
        "Tama-nui-te-rā.is.Māori.sun",
        "\\backslashes\\are\\bad",
        "-starts-with-dash",
        "ends-with-dash-",
        ".starts.with.dot",
        "ends.with.dot.",
    ]);
    out.push(repeat("a", 64));
    out
}

/// `TestIsDNS1123Subdomain` good values (valid key prefixes).
pub fn subdomains_valid() -> Vec<String> {
    let mut out = owned(&[
        "a",
        "ab",
        "abc",
        "a1",
        "a-1",
        "a--1--2--b",
        "0",
        "01",
        "012",
        "1a",
        "1-a",
        "1--a--b--2",
        "a.a",
        "ab.a",
        "abc.a",
        "a1.a",
        "a-1.a",
        "a--1--2--b.a",
        "a.1",
        "ab.1",
        "abc.1",
        "a1.1",
        "a-1.1",
        "a--1--2--b.1",
        "0.a",
        "01.a",
        "012.a",
        "1a.a",
        "1-a.a",
        "1--a--b--2",
        "0.1",
        "01.1",
        "012.1",
        "1a.1",
        "1-a.1",
        "1--a--b--2.1",
        "a.b.c.d.e",
        "aa.bb.cc.dd.ee",
        "1.2.3.4.5",
        "11.22.33.44.55",
    ]);
    out.push(repeat("a", 253));
    out
}

/// `TestIsDNS1123Subdomain` bad values (invalid key prefixes; the empty one is left out: an
/// empty prefix is the `/simple` case of [`qualified_names_invalid`]).
pub fn subdomains_invalid() -> Vec<String> {
    let mut out = owned(&[
        "A",
        "ABC",
        "aBc",
        "A1",
        "A-1",
        "1-A",
        "-",
        "a-",
        "-a",
        "1-",
        "-1",
        "_",
        "a_",
        "_a",
        "a_b",
        "1_",
        "_1",
        "1_2",
        ".",
        "a.",
        ".a",
        "a..b",
        "1.",
        ".1",
        "1..2",
        " ",
        "a ",
        " a",
        "a b",
        "1 ",
        " 1",
        "1 2",
        "A.a",
        "aB.a",
        "ab.A",
        "A1.a",
        "a1.A",
        "A.1",
        "aB.1",
        "A1.1",
        "1A.1",
        "0.A",
        "01.A",
        "012.A",
        "1A.a",
        "1a.A",
        "A.B.C.D.E",
        "AA.BB.CC.DD.EE",
        "a.B.c.d.e",
        "aa.bB.cc.dd.ee",
        "a@b",
        "a,b",
        "a_b",
        "a;b",
        "a:b",
        "a%b",
        "a?b",
        "a$b",
    ]);
    out.push(repeat("a", 254));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lists_are_upstreams_in_size_and_the_long_cases_are_at_their_limits() {
        assert_eq!(qualified_names_valid().len(), 17);
        assert_eq!(qualified_names_invalid().len(), 10);
        assert_eq!(label_values_valid().len(), 7);
        assert_eq!(label_values_invalid().len(), 8);
        assert_eq!(subdomains_valid().len(), 41);
        assert_eq!(subdomains_invalid().len(), 59);
        assert_eq!(qualified_names_valid()[16].len(), 253 + 1 + 63);
        assert_eq!(qualified_names_invalid()[9].len(), 254 + 1 + 3);
    }
}
