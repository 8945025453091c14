//! IPv4 CIDR blocks and the deterministic subnet layout of a created VPC.
//!
//! For `n` zones, let `k = ceil(log2 n)`. The first half of the VPC holds the private subnets,
//! each `vpc prefix + 1 + k` long (the big ones: with the VPC CNI every pod takes an address
//! there); the public subnets, each four times smaller, sit at the start of the second half.
//! A 10.0.0.0/16 VPC over two zones gets private 10.0.0.0/18 and 10.0.64.0/18, public
//! 10.0.128.0/20 and 10.0.144.0/20; the rest of the second half stays free.
//!
//! The layout depends on `n` only through `k`, and `n` is immutable on the EKSCluster, so the
//! subnet in slot `i` always has the same blocks: recomputing it on every pass is safe.

use std::net::Ipv4Addr;

/// An IPv4 CIDR block (`ipnet`'s type; blocks made here always have their host bits cleared).
pub type Ipv4Cidr = ipnet::Ipv4Net;

/// The smallest subnet AWS accepts.
pub const MAX_SUBNET_PREFIX: u8 = 28;
/// The largest subnet (and VPC) AWS accepts.
pub const MIN_PREFIX: u8 = 16;

/// Parses `a.b.c.d/n`, clearing the host bits (`10.0.3.7/16` is `10.0.0.0/16`).
///
/// # Errors
/// A message naming the value when it is not an IPv4 CIDR block.
pub fn parse(s: &str) -> Result<Ipv4Cidr, String> {
    if !s.contains('/') {
        return Err(format!("{s} is not a CIDR block (a.b.c.d/n)"));
    }
    s.parse::<Ipv4Cidr>()
        .map(|net| net.trunc())
        .map_err(|_| format!("{s} is not an IPv4 CIDR block (a.b.c.d/n, n at most 32)"))
}

/// The `index`-th block of length `prefix` inside `net`, or `None` when it does not fit.
pub fn subnet(net: Ipv4Cidr, prefix: u8, index: u32) -> Option<Ipv4Cidr> {
    net.subnets(prefix).ok()?.nth(usize::try_from(index).ok()?)
}

/// A block from its network address and prefix (tests and fixed layouts).
pub fn block(addr: Ipv4Addr, prefix: u8) -> Option<Ipv4Cidr> {
    Ipv4Cidr::new(addr, prefix).ok().map(|net| net.trunc())
}

/// The subnet blocks of a created VPC, by zone slot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Private subnet of slot `i`.
    pub private: Vec<Ipv4Cidr>,
    /// Public subnet of slot `i`.
    pub public: Vec<Ipv4Cidr>,
}

impl Layout {
    /// The slot whose public (`true`) or private block is `cidr`.
    pub fn slot_of(&self, cidr: &Ipv4Cidr) -> Option<(usize, bool)> {
        if let Some(i) = self.public.iter().position(|c| c == cidr) {
            return Some((i, true));
        }
        self.private
            .iter()
            .position(|c| c == cidr)
            .map(|i| (i, false))
    }
}

/// Lays out `zones` public and private subnets in `vpc` (see the module documentation).
///
/// # Errors
/// A message for the user when `zones` is 0 or the VPC is too small for them.
pub fn carve(vpc: Ipv4Cidr, zones: usize) -> Result<Layout, String> {
    if zones == 0 {
        return Err("at least one zone is needed".into());
    }
    let k = u8::try_from(usize::BITS - (zones - 1).leading_zeros()).unwrap_or(u8::MAX);
    let private_prefix = vpc.prefix_len().saturating_add(1).saturating_add(k);
    let public_prefix = private_prefix.saturating_add(2);
    if public_prefix > MAX_SUBNET_PREFIX {
        let largest = MAX_SUBNET_PREFIX.saturating_sub(3).saturating_sub(k);
        return Err(format!(
            "spec.network.cidrBlock {vpc} is too small for {zones} zones: each zone needs a public subnet of at least /{MAX_SUBNET_PREFIX}; use a /{largest} or larger block"
        ));
    }
    let too_small = || format!("spec.network.cidrBlock {vpc} cannot hold {zones} zones");
    let half = |index| subnet(vpc, vpc.prefix_len() + 1, index).ok_or_else(too_small);
    let (first, second) = (half(0)?, half(1)?);
    let private = (0..zones)
        .map(|i| {
            u32::try_from(i)
                .ok()
                .and_then(|i| subnet(first, private_prefix, i))
                .ok_or_else(too_small)
        })
        .collect::<Result<Vec<_>, _>>()?;
    let public = (0..zones)
        .map(|i| {
            u32::try_from(i)
                .ok()
                .and_then(|i| subnet(second, public_prefix, i))
                .ok_or_else(too_small)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Layout { private, public })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn cidr(s: &str) -> Ipv4Cidr {
        parse(s).unwrap()
    }

    fn strings(v: &[Ipv4Cidr]) -> Vec<String> {
        v.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn parsing_clears_host_bits_and_prints_the_canonical_form() {
        assert_eq!(cidr("10.0.3.7/16").to_string(), "10.0.0.0/16");
        assert_eq!(cidr("192.168.1.0/24").to_string(), "192.168.1.0/24");
        assert!(parse("10.0.0.0").is_err());
        assert!(parse("10.0.0.0/33").is_err());
        assert!(parse("fd00::/8").is_err());
        assert!(parse("10.0.0.0/x").is_err());
    }

    #[test]
    fn subnets_are_numbered_from_the_start_of_the_block_and_must_fit() {
        let vpc = cidr("10.0.0.0/16");
        assert_eq!(subnet(vpc, 18, 1).unwrap().to_string(), "10.0.64.0/18");
        assert_eq!(subnet(vpc, 18, 3).unwrap().to_string(), "10.0.192.0/18");
        assert_eq!(subnet(vpc, 18, 4), None);
        assert_eq!(subnet(vpc, 15, 0), None);
        assert_eq!(subnet(vpc, 33, 0), None);
        assert_eq!(
            subnet(cidr("0.0.0.0/0"), 1, 1).unwrap().to_string(),
            "128.0.0.0/1"
        );
    }

    #[test]
    fn two_zones_in_a_slash_16_get_big_private_and_small_public_subnets() {
        let layout = carve(cidr("10.0.0.0/16"), 2).unwrap();
        assert_eq!(strings(&layout.private), ["10.0.0.0/18", "10.0.64.0/18"]);
        assert_eq!(strings(&layout.public), ["10.0.128.0/20", "10.0.144.0/20"]);
    }

    #[test]
    fn three_and_four_zones_share_one_layout_and_six_zones_fit_in_a_slash_16() {
        let three = carve(cidr("10.0.0.0/16"), 3).unwrap();
        let four = carve(cidr("10.0.0.0/16"), 4).unwrap();
        assert_eq!(
            strings(&three.private),
            ["10.0.0.0/19", "10.0.32.0/19", "10.0.64.0/19"]
        );
        assert_eq!(three.private[..], four.private[..3]);
        assert_eq!(
            strings(&four.public),
            [
                "10.0.128.0/21",
                "10.0.136.0/21",
                "10.0.144.0/21",
                "10.0.152.0/21"
            ]
        );
        let six = carve(cidr("10.0.0.0/16"), 6).unwrap();
        assert_eq!(six.private.len(), 6);
        assert_eq!(six.public[5].to_string(), "10.0.148.0/22");
    }

    #[test]
    fn no_two_blocks_of_a_layout_overlap_and_all_stay_inside_the_vpc() {
        for (vpc, zones) in [
            ("10.0.0.0/16", 2),
            ("172.16.0.0/20", 5),
            ("192.168.0.0/24", 2),
            ("10.1.0.0/16", 6),
        ] {
            let vpc = cidr(vpc);
            let layout = carve(vpc, zones).unwrap();
            let all: Vec<Ipv4Cidr> = layout
                .private
                .iter()
                .chain(&layout.public)
                .copied()
                .collect();
            let range = |c: &Ipv4Cidr| (c.network(), c.broadcast());
            let (vpc_start, vpc_end) = range(&vpc);
            for (i, a) in all.iter().enumerate() {
                let (s, e) = range(a);
                assert!(s >= vpc_start && e <= vpc_end, "{a} outside {vpc}");
                assert!(a.prefix_len() <= MAX_SUBNET_PREFIX, "{a} too small for AWS");
                for b in &all[i + 1..] {
                    let (s2, e2) = range(b);
                    assert!(e < s2 || e2 < s, "{a} overlaps {b}");
                }
            }
        }
    }

    #[test]
    fn a_block_too_small_for_the_zones_is_refused_with_the_size_that_would_fit() {
        let err = carve(cidr("10.0.0.0/24"), 3).unwrap_err();
        assert!(
            err.contains("spec.network.cidrBlock 10.0.0.0/24 is too small for 3 zones"),
            "{err}"
        );
        assert!(err.contains("/23 or larger"), "{err}");
        assert!(carve(cidr("10.0.0.0/24"), 2).is_ok());
        assert!(carve(cidr("10.0.0.0/16"), 0).is_err());
    }

    #[test]
    fn slot_of_finds_the_zone_and_role_of_a_block() {
        let layout = carve(cidr("10.0.0.0/16"), 2).unwrap();
        assert_eq!(layout.slot_of(&cidr("10.0.64.0/18")), Some((1, false)));
        assert_eq!(layout.slot_of(&cidr("10.0.128.0/20")), Some((0, true)));
        assert_eq!(layout.slot_of(&cidr("10.0.200.0/24")), None);
    }
}
