//! The seeded plan of a fault run: where the provider is killed in each phase and which share
//! of cloud calls fails how. The same seed gives the same plan (the points are offsets from a
//! phase's start and gaps between kills, so a machine's speed changes what a kill interrupts,
//! never how many kills there are or when they fall).

use std::time::Duration;

/// The phases of a fault run, in order.
pub const PHASES: [Phase; 4] = [Phase::Create, Phase::Upgrade, Phase::Scale, Phase::Delete];

/// A phase of the cluster's life that SIGKILLs are spread over.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    /// From apply to a settled cluster.
    Create,
    /// The control plane and pools to the next version.
    Upgrade,
    /// A pool's replicas changed.
    Scale,
    /// From the Cluster's deletion to every object and cloud resource gone.
    Delete,
}

impl Phase {
    /// The phase's name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Create => "create",
            Phase::Upgrade => "upgrade",
            Phase::Scale => "scale",
            Phase::Delete => "delete",
        }
    }
}

/// SplitMix64: a small, well-mixed generator, enough to make a plan reproducible from a seed.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `low..=high`.
    pub fn between(&mut self, low: u64, high: u64) -> u64 {
        if high <= low {
            return low;
        }
        low + self.next_u64() % (high - low + 1)
    }
}

/// The kills of one phase.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhaseKills {
    /// The phase.
    pub phase: Phase,
    /// The wait before each kill: the first from the phase's start, each next one from the
    /// moment the provider was started again.
    pub gaps: Vec<Duration>,
}

/// A whole run's plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The seed it came from.
    pub seed: u64,
    /// Kills per phase, in phase order.
    pub kills: Vec<PhaseKills>,
}

/// The shortest and longest wait before a kill, milliseconds: short enough that most fall
/// while the provider is mid-reconcile (a create on an emulator with one-second delays takes
/// tens of seconds), long enough that each incarnation gets some work done.
pub const GAP_MILLIS: (u64, u64) = (300, 4_000);

impl Plan {
    /// `kills` SIGKILLs spread over the four phases (the first phases get the remainder), each
    /// after a seeded gap.
    pub fn new(seed: u64, kills: u32) -> Self {
        let mut rng = Rng::new(seed);
        let per = kills / 4;
        let extra = kills % 4;
        let kills = PHASES
            .iter()
            .enumerate()
            .map(|(i, phase)| {
                let n = per + u32::from((i as u32) < extra);
                PhaseKills {
                    phase: *phase,
                    gaps: (0..n)
                        .map(|_| Duration::from_millis(rng.between(GAP_MILLIS.0, GAP_MILLIS.1)))
                        .collect(),
                }
            })
            .collect();
        Self { seed, kills }
    }

    /// The gaps of `phase`.
    pub fn gaps(&self, phase: Phase) -> &[Duration] {
        self.kills
            .iter()
            .find(|k| k.phase == phase)
            .map_or(&[], |k| k.gaps.as_slice())
    }

    /// How many kills the plan holds.
    pub fn total(&self) -> usize {
        self.kills.iter().map(|k| k.gaps.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_plan_and_another_seed_another() {
        assert_eq!(Plan::new(7, 20), Plan::new(7, 20));
        assert_ne!(Plan::new(7, 20), Plan::new(8, 20));
    }

    #[test]
    fn kills_are_spread_over_every_phase_and_add_up() {
        for total in [0, 1, 4, 5, 20, 23] {
            let plan = Plan::new(1, total);
            assert_eq!(plan.total(), total as usize);
            let counts: Vec<usize> = PHASES.iter().map(|p| plan.gaps(*p).len()).collect();
            let (min, max) = (counts.iter().min(), counts.iter().max());
            assert!(max.zip(min).is_some_and(|(a, b)| a - b <= 1), "{counts:?}");
        }
    }

    #[test]
    fn gaps_stay_within_their_bounds() {
        let plan = Plan::new(42, 400);
        for phase in PHASES {
            for gap in plan.gaps(phase) {
                let ms = gap.as_millis() as u64;
                assert!((GAP_MILLIS.0..=GAP_MILLIS.1).contains(&ms), "{ms}");
            }
        }
    }
}
