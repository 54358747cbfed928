//! Hadoop's resource calculators, as preemption uses them: memory only for
//! `fair` and `fifo` queues (DefaultResourceCalculator), shares of the
//! cluster for `drf` queues (DominantResourceCalculator).
//!
//! Which quantities are compared, and why, is the callers' business
//! (`starvation`, `victims`); this module only answers "less, equal or more".

use std::cmp::Ordering;

use weft_model::Resource;
use weft_queue_tree::Policy;

/// One queue's way of comparing resources.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Calc {
    /// Memory decides.
    Memory,
    /// Shares of the cluster decide, largest share first.
    Dominant {
        /// The cluster's capacity, the denominator of every share.
        cluster: Resource,
    },
}

impl Calc {
    /// The calculator of a queue with `policy`.
    pub(crate) fn for_policy(policy: Policy, cluster: Resource) -> Calc {
        match policy {
            Policy::Fair | Policy::Fifo => Calc::Memory,
            Policy::Drf => Calc::Dominant { cluster },
        }
    }

    /// Hadoop's `compare(cluster, a, b)`: for shares, every share in
    /// descending order, the largest first.
    pub(crate) fn compare(&self, a: &Resource, b: &Resource) -> Ordering {
        match self {
            Calc::Memory => a.memory_mb().cmp(&b.memory_mb()),
            Calc::Dominant { cluster } => a.compare_shares(b, cluster),
        }
    }

    /// Hadoop's `compare(cluster, a, b, singleType = true)`: memory, or the
    /// dominant share alone. This is how "usage below share" is decided.
    pub(crate) fn compare_dominant(&self, a: &Resource, b: &Resource) -> Ordering {
        match self {
            Calc::Memory => a.memory_mb().cmp(&b.memory_mb()),
            Calc::Dominant { cluster } => {
                if a == b {
                    return Ordering::Equal;
                }
                a.dominant_share(cluster)
                    .total_cmp(&b.dominant_share(cluster))
            }
        }
    }

    /// True when `usage` is strictly below `share` (Hadoop's `isUsageBelowShare`).
    pub(crate) fn is_below(&self, usage: &Resource, share: &Resource) -> bool {
        self.compare_dominant(usage, share) == Ordering::Less
    }

    /// Hadoop's `Resources.min(calculator, ...)`: the whole smaller vector, not
    /// a componentwise minimum; `a` on a tie.
    pub(crate) fn min(&self, a: Resource, b: Resource) -> Resource {
        if self.compare(&a, &b) == Ordering::Greater {
            b
        } else {
            a
        }
    }
}

/// The order starved apps are served in: a total order that extends
/// Hadoop's "A goes first when A's starvation fits inside B's" (the less
/// starved app first). Vectors are compared type by type in
/// `ResourceType::ALL` order, which agrees with "fits inside" wherever that
/// decides and settles incomparable pairs by memory first.
pub(crate) fn starvation_order(a: &Resource, b: &Resource) -> Ordering {
    a.values().cmp(&b.values())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn memory_for_fair_and_fifo_shares_for_drf() {
        let cluster = Resource::new(1000, 10);
        let a = Resource::new(100, 5);
        let b = Resource::new(200, 1);
        for policy in [Policy::Fair, Policy::Fifo] {
            let calc = Calc::for_policy(policy, cluster);
            assert_eq!(calc.compare(&a, &b), Ordering::Less);
            assert!(calc.is_below(&a, &b));
            assert_eq!(calc.min(a, b), a);
        }
        // Under DRF a's dominant share is 0.5 (vcores) and b's 0.2 (memory).
        let drf = Calc::for_policy(Policy::Drf, cluster);
        assert_eq!(drf.compare(&a, &b), Ordering::Greater);
        assert!(!drf.is_below(&a, &b));
        assert_eq!(drf.min(a, b), b);
    }

    #[test]
    fn drf_full_compare_looks_past_the_dominant_share() {
        let drf = Calc::Dominant {
            cluster: Resource::new(1000, 10),
        };
        // Both dominant shares are 0.5; the second shares are 0.1 and 0.3.
        let a = Resource::new(500, 1);
        let b = Resource::new(300, 5);
        assert_eq!(drf.compare_dominant(&a, &b), Ordering::Equal);
        assert_eq!(drf.compare(&a, &b), Ordering::Less);
    }

    proptest! {
        #[test]
        fn starvation_order_extends_fits_in(
            a in (0u64..10, 0u64..10), b in (0u64..10, 0u64..10)
        ) {
            let (a, b) = (Resource::new(a.0, a.1), Resource::new(b.0, b.1));
            if a.fits_in(&b) {
                prop_assert_ne!(starvation_order(&a, &b), Ordering::Greater);
            }
            prop_assert_eq!(starvation_order(&a, &b), starvation_order(&b, &a).reverse());
        }
    }
}
