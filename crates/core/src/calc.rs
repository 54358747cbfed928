//! Hadoop's resource calculators as one comparison: memory only for `fair`
//! and `fifo` queues (DefaultResourceCalculator), dominant shares for `drf`
//! queues (DominantResourceCalculator). Used wherever Hadoop asks "is this
//! less than that" under the queue's policy: starvation, reservation size.

use std::cmp::Ordering;

use weft_model::Resource;
use weft_queue_tree::Policy;

/// Compares two amounts the way the queue's policy's calculator does.
pub(crate) fn policy_compare(
    policy: Policy,
    cluster: &Resource,
    a: &Resource,
    b: &Resource,
) -> Ordering {
    match policy {
        Policy::Fair | Policy::Fifo => a.memory_mb().cmp(&b.memory_mb()),
        Policy::Drf => a.compare_shares(b, cluster),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fair_compares_memory_drf_dominant_shares() {
        let cluster = Resource::new(1000, 10);
        let a = Resource::new(100, 5);
        let b = Resource::new(200, 1);
        assert_eq!(
            policy_compare(Policy::Fair, &cluster, &a, &b),
            Ordering::Less
        );
        // a's dominant share is 0.5 (vcores), b's 0.2 (memory).
        assert_eq!(
            policy_compare(Policy::Drf, &cluster, &a, &b),
            Ordering::Greater
        );
        assert_eq!(
            policy_compare(Policy::Drf, &cluster, &a, &a),
            Ordering::Equal
        );
    }
}
