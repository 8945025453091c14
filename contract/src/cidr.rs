//! IPv4 CIDR blocks as a spec writes them (`10.0.0.0/16`): parsed with a message naming the
//! field, compared for overlap, and split into a created network's subnets.

use std::net::Ipv4Addr;

/// A block as `(network address, prefix length)`.
pub type Block = (u32, u8);

fn mask(prefix: u8) -> u32 {
    if prefix == 0 {
        0
    } else {
        u32::MAX << (32 - u32::from(prefix))
    }
}

/// Parses `text`, the value of `field`; `example` is a block of the cloud's own, shown when
/// `text` is not one.
///
/// # Errors
/// A sentence naming the field: not an IPv4 block, or host bits set.
pub fn parse(field: &str, text: &str, example: &str) -> Result<Block, String> {
    let bad = || format!("{field} {text:?} is not an IPv4 CIDR block such as {example}");
    let (ip, prefix) = text.split_once('/').ok_or_else(bad)?;
    let ip: Ipv4Addr = ip.parse().map_err(|_| bad())?;
    let prefix: u8 = prefix.parse().map_err(|_| bad())?;
    if prefix > 32 {
        return Err(bad());
    }
    let base = u32::from(ip);
    if base & !mask(prefix) != 0 {
        return Err(format!("{field} {text} has host bits set"));
    }
    Ok((base, prefix))
}

/// Whether two blocks share an address.
pub fn overlap(a: Block, b: Block) -> bool {
    let m = mask(a.1.min(b.1));
    a.0 & m == b.0 & m
}

/// Whether every address of `inner` is in `outer`.
pub fn within(inner: Block, outer: Block) -> bool {
    inner.1 >= outer.1 && inner.0 & mask(outer.1) == outer.0
}

/// The block of length `prefix` that starts `offset` addresses after `base`, as text.
pub fn block(base: u32, offset: u32, prefix: u8) -> String {
    format!("{}/{prefix}", Ipv4Addr::from(base.wrapping_add(offset)))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_block_parses_and_bad_ones_name_the_field() {
        assert_eq!(
            parse("f", "10.1.0.0/16", "x"),
            Ok((u32::from(Ipv4Addr::new(10, 1, 0, 0)), 16))
        );
        assert_eq!(parse("f", "0.0.0.0/0", "x"), Ok((0, 0)));
        for bad in ["10.1.0.0", "10.1.0/16", "10.1.0.0/33", "a/b", ""] {
            let e = parse("spec.network.cidrBlock", bad, "10.0.0.0/16").unwrap_err();
            assert!(e.starts_with("spec.network.cidrBlock"), "{e}");
            assert!(e.ends_with("such as 10.0.0.0/16"), "{e}");
        }
        assert_eq!(
            parse("f", "10.1.2.0/16", "x").unwrap_err(),
            "f 10.1.2.0/16 has host bits set"
        );
    }

    #[test]
    fn overlap_is_sharing_an_address() {
        let p = |t: &str| parse("f", t, "x").unwrap();
        assert!(overlap(p("10.0.0.0/8"), p("10.4.0.0/14")));
        assert!(overlap(p("10.4.0.0/14"), p("10.0.0.0/8")));
        assert!(!overlap(p("10.0.0.0/16"), p("10.1.0.0/16")));
        assert!(overlap(p("0.0.0.0/0"), p("192.168.0.0/24")));
    }

    #[test]
    fn within_is_holding_every_address() {
        let p = |t: &str| parse("f", t, "x").unwrap();
        assert!(within(p("10.0.1.0/24"), p("10.0.0.0/16")));
        assert!(within(p("10.0.0.0/16"), p("10.0.0.0/16")));
        assert!(!within(p("10.0.0.0/16"), p("10.0.1.0/24")));
        assert!(!within(p("10.1.1.0/24"), p("10.0.0.0/16")));
        assert!(overlap(p("10.0.1.0/24"), p("10.0.1.128/25")));
        assert!(!overlap(p("10.0.1.0/24"), p("10.0.2.0/24")));
    }

    #[test]
    fn a_block_is_its_start_and_length() {
        let (base, _) = parse("f", "10.1.2.0/24", "x").unwrap();
        assert_eq!(block(base, 64, 26), "10.1.2.64/26");
        assert_eq!(block(base, 0, 25), "10.1.2.0/25");
    }
}
