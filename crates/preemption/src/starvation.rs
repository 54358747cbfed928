//! Starvation, one leaf at a time (Hadoop's `FSLeafQueue.updateStarvedApps`):
//! the fair-share and min-share timers, fair-share starvation per app, and
//! the leaf's min-share starvation spread over its apps.
//!
//! Which leaves are visited, when, and what happens to a starved app is
//! `preemptor`'s business; this module is arithmetic over one leaf's figures.

use weft_model::{AppId, Duration, Resource, Time};

use crate::calc::Calc;
use crate::view::AppInfo;

/// What preemption remembers about an app from one update to the next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct AppTimers {
    /// The app these timers belong to (a slot may be reused by another app).
    pub(crate) id: AppId,
    /// The last update at which the app was at or above its fair-share target.
    pub(crate) last_at_fair_share: Time,
    /// Before this the app is not considered for starvation (it triggered
    /// preemption and waits for the result).
    pub(crate) next_check: Time,
    /// Fair-share starvation as last computed.
    pub(crate) fair_share_starvation: Resource,
    /// Min-share starvation as last attributed to the app.
    pub(crate) min_share_starvation: Resource,
}

impl AppTimers {
    /// Fresh timers: the fair-share timer starts when the app does, as in Hadoop.
    pub(crate) fn new(app: &AppInfo) -> AppTimers {
        AppTimers {
            id: app.id,
            last_at_fair_share: app.start,
            next_check: Time::ZERO,
            fair_share_starvation: Resource::ZERO,
            min_share_starvation: Resource::ZERO,
        }
    }
}

/// The leaf's figures starvation depends on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct LeafFigures {
    pub(crate) calc: Calc,
    pub(crate) min_share: Resource,
    pub(crate) demand: Resource,
    pub(crate) usage: Resource,
    pub(crate) min_share_timeout: Duration,
    pub(crate) fair_share_timeout: Duration,
    pub(crate) threshold: f64,
}

/// An app found starved, by its position in the leaf's app list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Starved {
    pub(crate) index: usize,
    pub(crate) fair_share: Resource,
    pub(crate) min_share: Resource,
}

/// The fair-share target of an app: its fair share times the threshold
/// (truncated, as Hadoop's `Resources.multiply`), capped by its demand.
pub(crate) fn fair_share_target(app: &AppInfo, threshold: f64) -> Resource {
    app.fair_share
        .scale_down(hadoop_threshold(threshold))
        .component_min(app.demand)
}

/// The threshold as Hadoop multiplies by it: it keeps
/// `fairSharePreemptionThreshold` as a float and widens it only to multiply,
/// so 0.9 is 0.899999976... and 10240 × 0.9 truncates to 9215, not 9216.
/// Narrowing at use keeps the configured value intact for display.
pub(crate) fn hadoop_threshold(threshold: f64) -> f64 {
    f64::from(threshold as f32)
}

/// What the app asked for and does not hold.
pub(crate) fn unmet_demand(app: &AppInfo) -> Resource {
    app.demand - app.usage
}

/// How far the leaf is below min(min share, demand), when its calculator
/// says it is below at all (Hadoop counts any component, so a `fair` leaf
/// with unmet min vcores would be starved of vcores it never shares).
pub(crate) fn min_share_deficit(leaf: &LeafFigures) -> Resource {
    let target = leaf.calc.min(leaf.min_share, leaf.demand);
    if leaf.calc.is_below(&leaf.usage, &target) {
        target - leaf.usage
    } else {
        Resource::ZERO
    }
}

/// Refreshes one leaf's timers at `now` and, when `evaluate`, computes its
/// starvation into `starved` (in the leaf's app order).
///
/// `apps` are the leaf's runnable apps in the view's order and `timers`
/// theirs, index for index; `last_at_min_share` is the leaf's min-share timer.
pub(crate) fn update_leaf(
    leaf: &LeafFigures,
    apps: &[AppInfo],
    timers: &mut [AppTimers],
    last_at_min_share: &mut Time,
    now: Time,
    evaluate: bool,
    starved: &mut Vec<Starved>,
) {
    debug_assert_eq!(apps.len(), timers.len());
    // Every timer is refreshed on every update, so "starved for the timeout"
    // means continuously below target for that long (see docs/preemption.md).
    for (app, timer) in apps.iter().zip(timers.iter_mut()) {
        if !leaf
            .calc
            .is_below(&app.usage, &fair_share_target(app, leaf.threshold))
        {
            timer.last_at_fair_share = now;
        }
    }
    let min_share_deficit = min_share_deficit(leaf);
    if min_share_deficit.is_zero() {
        *last_at_min_share = now;
    }
    if !evaluate {
        return;
    }

    // Apps without unmet demand are not starved, whatever they were before.
    for (app, timer) in apps.iter().zip(timers.iter_mut()) {
        if unmet_demand(app).is_zero() {
            timer.fair_share_starvation = Resource::ZERO;
            timer.min_share_starvation = Resource::ZERO;
        }
    }
    let first = starved.len();
    let due: Vec<usize> = (0..apps.len())
        .filter(|i| !unmet_demand(&apps[*i]).is_zero() && now >= timers[*i].next_check)
        .collect();

    // Fair share: in the leaf's order, until the first app that is not starved.
    let mut fair_share_total = Resource::ZERO;
    let mut walking = true;
    for &i in &due {
        let app = &apps[i];
        let mut starvation = Resource::ZERO;
        if walking {
            let target = fair_share_target(app, leaf.threshold);
            let timer = &timers[i];
            if leaf.calc.is_below(&app.usage, &target)
                && now.since(timer.last_at_fair_share) >= leaf.fair_share_timeout
            {
                starvation = target - app.usage;
            }
            if starvation.is_zero() {
                walking = false;
            } else {
                fair_share_total += starvation;
                starved.push(Starved {
                    index: i,
                    fair_share: starvation,
                    min_share: Resource::ZERO,
                });
            }
        }
        timers[i].fair_share_starvation = starvation;
    }

    // Min share: what fair-share starvation does not already cover, handed
    // out in the same order, each app taking at most its unmet demand.
    let queue_starvation = if now.since(*last_at_min_share) >= leaf.min_share_timeout {
        min_share_deficit
    } else {
        Resource::ZERO
    };
    let mut rest = queue_starvation - fair_share_total;
    for &i in &due {
        if rest.is_zero() {
            timers[i].min_share_starvation = Resource::ZERO;
            continue;
        }
        let room = unmet_demand(&apps[i]) - timers[i].fair_share_starvation;
        // Hadoop attributes room − rest here when room exceeds rest; Weft
        // attributes rest, what its comment intends (docs/preemption.md).
        let attributed = if leaf.calc.compare(&room, &rest).is_gt() {
            rest
        } else {
            room
        };
        rest -= attributed;
        timers[i].min_share_starvation = attributed;
        match starved[first..].iter_mut().find(|s| s.index == i) {
            Some(s) => s.min_share = attributed,
            None => starved.push(Starved {
                index: i,
                fair_share: Resource::ZERO,
                min_share: attributed,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_model::AppId;

    fn app(seq: u32, usage: u64, demand: u64, fair_share: u64) -> AppInfo {
        AppInfo {
            slot: crate::view::AppSlot(seq),
            id: AppId::new(1, seq),
            usage: Resource::new(usage, 0),
            demand: Resource::new(demand, 0),
            fair_share: Resource::new(fair_share, 0),
            start: Time::ZERO,
            weight: 1.0,
        }
    }

    fn leaf(min_share: u64, demand: u64, usage: u64) -> LeafFigures {
        LeafFigures {
            calc: Calc::Memory,
            min_share: Resource::new(min_share, 0),
            demand: Resource::new(demand, 0),
            usage: Resource::new(usage, 0),
            min_share_timeout: Duration::from_secs(1),
            fair_share_timeout: Duration::from_secs(1),
            threshold: 0.5,
        }
    }

    fn run(leaf: &LeafFigures, apps: &[AppInfo], now: u64) -> (Vec<Starved>, Vec<AppTimers>) {
        let mut timers: Vec<AppTimers> = apps.iter().map(AppTimers::new).collect();
        let mut last = Time::ZERO;
        let mut starved = Vec::new();
        update_leaf(
            leaf,
            apps,
            &mut timers,
            &mut last,
            Time::from_millis(now),
            true,
            &mut starved,
        );
        (starved, timers)
    }

    #[test]
    fn fair_share_starvation_waits_for_the_timeout() {
        // Target 4000 × 0.5 = 2000, usage 500: starved by 1500 once 1 s has passed.
        let apps = [app(1, 500, 8000, 4000)];
        let (starved, _) = run(&leaf(0, 8000, 500), &apps, 999);
        assert!(starved.is_empty());
        let (starved, _) = run(&leaf(0, 8000, 500), &apps, 1000);
        assert_eq!(starved[0].fair_share, Resource::new(1500, 0));
    }

    #[test]
    fn the_walk_stops_at_the_first_app_not_starved() {
        // The second app is at its target, so the third is not looked at.
        let apps = [
            app(1, 0, 4000, 4000),
            app(2, 2000, 4000, 4000),
            app(3, 0, 4000, 4000),
        ];
        let (starved, timers) = run(&leaf(0, 12_000, 2000), &apps, 5000);
        assert_eq!(starved.len(), 1);
        assert_eq!(starved[0].index, 0);
        assert_eq!(timers[2].fair_share_starvation, Resource::ZERO);
    }

    #[test]
    fn min_share_goes_to_apps_in_order_capped_by_unmet_demand() {
        // Queue min 6000, usage 0: 6000 to hand out; the first app wants 4000,
        // the second 8000 of which only the remaining 2000 is attributed.
        let apps = [app(1, 0, 4000, 0), app(2, 0, 8000, 0), app(3, 0, 8000, 0)];
        let (starved, _) = run(&leaf(6000, 20_000, 0), &apps, 5000);
        let amounts: Vec<(usize, u64)> = starved
            .iter()
            .map(|s| (s.index, s.min_share.memory_mb()))
            .collect();
        assert_eq!(amounts, [(0, 4000), (1, 2000)]);
    }

    #[test]
    fn min_share_starvation_not_covered_by_fair_share_starvation() {
        // Fair share 2000 → target 1000: starved by 1000. Queue min 3000:
        // 2000 more as min-share starvation.
        let apps = [app(1, 0, 5000, 2000)];
        let (starved, _) = run(&leaf(3000, 5000, 0), &apps, 5000);
        assert_eq!(starved[0].fair_share, Resource::new(1000, 0));
        assert_eq!(starved[0].min_share, Resource::new(2000, 0));
    }

    #[test]
    fn timers_reset_when_at_target_and_checks_wait() {
        let apps = [app(1, 3000, 8000, 4000)];
        let mut timers = vec![AppTimers::new(&apps[0])];
        let mut last = Time::ZERO;
        let mut starved = Vec::new();
        let leaf = leaf(0, 8000, 3000);
        update_leaf(
            &leaf,
            &apps,
            &mut timers,
            &mut last,
            Time::from_millis(700),
            false,
            &mut starved,
        );
        assert_eq!(timers[0].last_at_fair_share, Time::from_millis(700));
        // The queue has no min share: never below it.
        assert_eq!(last, Time::from_millis(700));
        // A starved app whose check is not due is left alone.
        let apps = [app(1, 0, 8000, 4000)];
        timers[0].next_check = Time::from_millis(9000);
        update_leaf(
            &leaf,
            &apps,
            &mut timers,
            &mut last,
            Time::from_millis(5000),
            true,
            &mut starved,
        );
        assert!(starved.is_empty());
    }
}
