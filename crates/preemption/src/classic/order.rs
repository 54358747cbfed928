//! Hadoop 2.x's policy comparators (`FairShareComparator`,
//! `DominantResourceFairnessComparator`, `FifoComparator`) as the classic
//! model reads them backwards: the member a policy would serve last is the
//! one "most over its fair share", the one preemption takes from first.
//! Also each policy's "is this queue over its fair share" check.
//!
//! Which members are compared, and what their usage is after the losses of
//! one update, is `classic`'s business. The current model never uses these:
//! it reads the tree's own order through the view.

use std::cmp::Ordering;

use weft_model::{AppId, N_RESOURCE_TYPES, QueuePath, Resource, ResourceType, Time, ratio};
use weft_queue_tree::Policy;

/// What a comparator reads of a queue or an app.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Member<'a> {
    /// Usage, less what this update already took from it.
    pub(crate) usage: Resource,
    pub(crate) demand: Resource,
    /// Zero for apps.
    pub(crate) min_share: Resource,
    pub(crate) weight: f32,
    /// `Time::ZERO` for queues, as Hadoop's queues report.
    pub(crate) start: Time,
    pub(crate) name: Name<'a>,
}

/// The last tie-breaker: Hadoop compares names (the queue's full path, the
/// app's id); Weft ends every order on it, so the order is total.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Name<'a> {
    Queue(&'a QueuePath),
    App(AppId),
}

/// Hadoop's comparator of `policy`: `Less` when `a` is served before `b`.
/// The greatest member is the one most over its fair share.
pub(crate) fn compare(
    policy: Policy,
    cluster: &Resource,
    a: &Member<'_>,
    b: &Member<'_>,
) -> Ordering {
    let by_policy = match policy {
        Policy::Fair => fair(a, b),
        Policy::Drf => drf(cluster, a, b),
        // Hadoop 2.x passes no app priorities to the scheduler: start time decides.
        Policy::Fifo => Ordering::Equal,
    };
    by_policy
        .then_with(|| a.start.cmp(&b.start))
        .then_with(|| a.name.cmp(&b.name))
}

/// Whether a queue's usage is over its fair share, by the check of its
/// parent's policy (Hadoop's `checkIfUsageOverFairShare`): memory for `fair`
/// (and `fifo`, which cannot order queues), any resource for `drf`.
pub(crate) fn is_over_fair_share(
    parent_policy: Policy,
    usage: &Resource,
    fair_share: &Resource,
) -> bool {
    match parent_policy {
        Policy::Fair | Policy::Fifo => usage.memory_mb() > fair_share.memory_mb(),
        Policy::Drf => !usage.fits_in(fair_share),
    }
}

/// Needy members (below min(min share, demand) in memory) first, by their
/// usage over that minimum; the others by memory used per unit of weight.
fn fair(a: &Member<'_>, b: &Member<'_>) -> Ordering {
    let needy = |m: &Member<'_>| {
        // Hadoop's `Resources.min` under the memory calculator: memory decides.
        let min = m.min_share.memory_mb().min(m.demand.memory_mb());
        (m.usage.memory_mb() < min, min)
    };
    let ((needy_a, min_a), (needy_b, min_b)) = (needy(a), needy(b));
    match (needy_a, needy_b) {
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (true, true) => {
            let ra = ratio(a.usage.memory_mb(), min_a.max(1));
            let rb = ratio(b.usage.memory_mb(), min_b.max(1));
            ra.total_cmp(&rb)
        }
        (false, false) => per_weight(a.usage.memory_mb() as f64, a.weight)
            .total_cmp(&per_weight(b.usage.memory_mb() as f64, b.weight)),
    }
}

/// Needy members (dominant resource below the min share) first, by their
/// shares of the min share; the others by their weighted shares of the
/// cluster, each list taken in the member's own dominant-first order.
fn drf(cluster: &Resource, a: &Member<'_>, b: &Member<'_>) -> Ordering {
    let (order_a, of_cluster_a) = cluster_shares(cluster, a);
    let (order_b, of_cluster_b) = cluster_shares(cluster, b);
    let dominant_needy = |m: &Member<'_>, order: &[ResourceType; N_RESOURCE_TYPES]| {
        let ty = order[0];
        m.usage.get(ty) < m.min_share.get(ty)
    };
    let needy_a = dominant_needy(a, &order_a);
    let needy_b = dominant_needy(b, &order_b);
    match (needy_a, needy_b) {
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (true, true) => compare_shares(
            &min_share_shares(a),
            &order_a,
            &min_share_shares(b),
            &order_b,
        ),
        (false, false) => compare_shares(&of_cluster_a, &order_a, &of_cluster_b, &order_b),
    }
}

/// Weighted shares of the cluster by type, and the types by share, the
/// largest first (memory first on a tie, as Hadoop orders them).
fn cluster_shares(
    cluster: &Resource,
    m: &Member<'_>,
) -> ([ResourceType; N_RESOURCE_TYPES], [f64; N_RESOURCE_TYPES]) {
    let mut shares = [0.0; N_RESOURCE_TYPES];
    for ty in ResourceType::ALL {
        shares[ty.index()] = per_weight(m.usage.share_of(ty, cluster), m.weight);
    }
    let mut order = ResourceType::ALL;
    order.sort_by(|x, y| shares[y.index()].total_cmp(&shares[x.index()]));
    (order, shares)
}

/// Usage over min share by type. Where Hadoop divides zero by zero (a NaN
/// that compares equal to anything), Weft counts 0, to keep a total order.
fn min_share_shares(m: &Member<'_>) -> [f64; N_RESOURCE_TYPES] {
    let mut shares = [0.0; N_RESOURCE_TYPES];
    for ty in ResourceType::ALL {
        shares[ty.index()] = ratio(m.usage.get(ty), m.min_share.get(ty));
    }
    shares
}

/// Hadoop's `compareShares`: the i-th largest share of one against the
/// i-th largest of the other.
fn compare_shares(
    a: &[f64; N_RESOURCE_TYPES],
    order_a: &[ResourceType; N_RESOURCE_TYPES],
    b: &[f64; N_RESOURCE_TYPES],
    order_b: &[ResourceType; N_RESOURCE_TYPES],
) -> Ordering {
    for (ta, tb) in order_a.iter().zip(order_b) {
        match a[ta.index()].total_cmp(&b[tb.index()]) {
            Ordering::Equal => continue,
            other => return other,
        }
    }
    Ordering::Equal
}

/// `x / weight`; a zero weight makes anything used infinitely much.
fn per_weight(x: f64, weight: f32) -> f64 {
    if weight > 0.0 {
        x / f64::from(weight)
    } else if x > 0.0 {
        f64::INFINITY
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queue<'a>(
        path: &'a QueuePath,
        usage: u64,
        min: u64,
        demand: u64,
        weight: f32,
    ) -> Member<'a> {
        Member {
            usage: Resource::new(usage, usage / 1024),
            demand: Resource::new(demand, demand / 1024),
            min_share: Resource::new(min, min / 1024),
            weight,
            start: Time::ZERO,
            name: Name::Queue(path),
        }
    }

    #[test]
    fn fair_puts_the_needy_first_and_the_heaviest_last() {
        let cluster = Resource::new(24_576, 48);
        let (a, b, c) = (
            QueuePath::parse("root.a").unwrap(),
            QueuePath::parse("root.b").unwrap(),
            QueuePath::parse("root.c").unwrap(),
        );
        // a is needy (below min(min share, demand)); b uses more per weight than c.
        let a = queue(&a, 1024, 18_000, 40_000, 1.0);
        let b = queue(&b, 8192, 6000, 40_000, 1.0);
        let c = queue(&c, 8192, 0, 40_000, 2.0);
        let mut all = [b, a, c];
        all.sort_by(|x, y| compare(Policy::Fair, &cluster, x, y));
        let names: Vec<String> = all
            .iter()
            .map(|m| match m.name {
                Name::Queue(p) => p.to_string(),
                Name::App(id) => id.to_string(),
            })
            .collect();
        assert_eq!(names, ["root.a", "root.c", "root.b"]);
        // A queue whose demand is below its min share is needy only below its demand.
        let d = QueuePath::parse("root.d").unwrap();
        let satisfied = queue(&d, 2048, 18_000, 2048, 1.0);
        assert_eq!(
            compare(Policy::Fair, &cluster, &a, &satisfied),
            Ordering::Less
        );
    }

    #[test]
    fn drf_weighs_dominant_shares_and_fifo_the_start() {
        let cluster = Resource::new(10_000, 10);
        let app = |seq: u32, mb: u64, vcores: u64, start: u64| Member {
            usage: Resource::new(mb, vcores),
            demand: Resource::new(mb, vcores),
            min_share: Resource::ZERO,
            weight: 1.0,
            start: Time::from_millis(start),
            name: Name::App(AppId::new(1, seq)),
        };
        // Dominant shares: 0.5 (vcores) against 0.3 (memory).
        let a = app(1, 1000, 5, 10);
        let b = app(2, 3000, 1, 0);
        assert_eq!(compare(Policy::Drf, &cluster, &a, &b), Ordering::Greater);
        // FIFO: the later start is served last, whatever it uses.
        assert_eq!(compare(Policy::Fifo, &cluster, &a, &b), Ordering::Greater);
        // Equal starts fall back on the id.
        let c = app(3, 1000, 5, 10);
        assert_eq!(compare(Policy::Fifo, &cluster, &a, &c), Ordering::Less);
    }

    #[test]
    fn over_fair_share_by_the_parent_policy() {
        let fair_share = Resource::new(4096, 0);
        let usage = Resource::new(4096, 3);
        // `fair` looks at memory only; `drf` at every resource.
        assert!(!is_over_fair_share(Policy::Fair, &usage, &fair_share));
        assert!(is_over_fair_share(Policy::Drf, &usage, &fair_share));
        assert!(is_over_fair_share(
            Policy::Fair,
            &Resource::new(4097, 0),
            &fair_share
        ));
    }
}
