//! A little simulator around [`TestView`]: it carries preemption's output
//! out the way the core will (kills, hand-back entries, withdrawals),
//! schedules free room on a heartbeat (hand-back first, then roughly in the
//! fair order: needy queues first), and recomputes fair
//! shares the simple way (weights 1, min shares honoured). Good enough to watch preemption
//! over many updates; the real scheduling is the core's.
//!
//! The seed-003 experiment, replayed at the view level under both models,
//! lives here too.

use weft_model::{Resource, ResourceType, Time};
use weft_queue_tree::Policy;

use super::fixture::{TestLocation, TestView};
use crate::{PreemptionOutput, TransitionKind};

impl TestView {
    /// Carries out an update's transitions and ended claims.
    pub(crate) fn apply(&mut self, out: &PreemptionOutput) {
        for t in &out.transitions {
            let node = self.node_named(t.node.host());
            let key = (node, self.app_by_id(t.for_app));
            match t.kind {
                TransitionKind::Warned { .. } if t.set_aside => {
                    *self.earmarks.entry(key).or_default() += t.resource;
                }
                TransitionKind::Killed => {
                    self.remove_container(&t.container);
                }
                TransitionKind::Withdrawn { .. } if t.set_aside => {
                    if let Some(held) = self.earmarks.get_mut(&key) {
                        *held -= t.resource;
                        if held.is_zero() {
                            self.earmarks.remove(&key);
                        }
                    }
                }
                TransitionKind::Warned { .. }
                | TransitionKind::Withdrawn { .. }
                | TransitionKind::Released => {}
            }
        }
        for app in &out.claims_ended {
            let a = self.app_by_id(*app);
            self.earmarks.retain(|(_, ea), _| *ea != a);
        }
    }

    /// Every node heartbeats: starved apps it holds resources for take what
    /// they can first, then the app first in the fair order (`fair_order`) takes
    /// what is free, container by container.
    /// Returns what was allocated.
    pub(crate) fn heartbeat(&mut self, now: Time) -> Vec<String> {
        let mut events = Vec::new();
        for n in 0..self.nodes.len() {
            let held: Vec<(usize, Resource)> = self
                .earmarks
                .iter()
                .filter(|((en, _), _)| *en == n)
                .map(|((_, a), r)| (*a, *r))
                .collect();
            for (a, mut left) in held {
                while left.any_positive() {
                    let Some(id) = self.allocate_on(a, n, self.free(n), now) else {
                        break;
                    };
                    left -= self.containers[&id].resource;
                    events.push(format!(
                        "{} on {} (hand-back)",
                        self.container_label(&id),
                        self.nodes[n].id.host()
                    ));
                }
                if left.is_zero() {
                    self.earmarks.remove(&(n, a));
                } else {
                    self.earmarks.insert((n, a), left);
                }
            }
            // As in Hadoop, what is held for starved apps gives them the
            // first turn only; it does not keep others off the node.
            loop {
                let room = self.free(n);
                let neediest = self
                    .live_apps()
                    .filter(|a| self.next_ask(*a, room).is_some())
                    .min_by(|x, y| {
                        let (a, b) = (self.fair_order(*x), self.fair_order(*y));
                        a.0.cmp(&b.0)
                            .then(a.1.total_cmp(&b.1))
                            .then(a.2.total_cmp(&b.2))
                            .then(x.cmp(y))
                    });
                let Some(a) = neediest else {
                    break;
                };
                let id = self.allocate_on(a, n, room, now).expect("the ask fits");
                events.push(format!(
                    "{} on {}",
                    self.container_label(&id),
                    self.nodes[n].id.host()
                ));
            }
        }
        events
    }

    /// Roughly the fair order an app is offered a node in: its leaf's
    /// (needy below min(min share, demand) first, then by usage over fair
    /// share), then its own usage over fair share; smaller goes first.
    fn fair_order(&self, a: usize) -> (bool, f64, f64) {
        let app = &self.apps[a];
        let q = app.queue;
        let queue = &self.queues[q];
        let usage = self.queue_usage(q).memory_mb();
        let min = queue
            .min_share
            .memory_mb()
            .min(self.queue_demand(q).memory_mb());
        let needy = usage < min;
        let ratio = |used: u64, share: u64| used as f64 / share.max(1) as f64;
        (
            !needy,
            if needy {
                ratio(usage, min)
            } else {
                ratio(usage, queue.fair_share.memory_mb())
            },
            ratio(app.usage.memory_mb(), app.fair_share.memory_mb()),
        )
    }

    fn free(&self, n: usize) -> Resource {
        let node = &self.nodes[n];
        node.capability - node.allocated - node.reserved
    }

    /// The app's first anywhere ask that fits in `room`.
    fn next_ask(&self, a: usize, room: Resource) -> Option<usize> {
        self.apps[a].asks.iter().position(|ask| {
            ask.location == TestLocation::Any && ask.count > 0 && ask.capability.fits_in(&room)
        })
    }

    fn allocate_on(
        &mut self,
        a: usize,
        n: usize,
        room: Resource,
        now: Time,
    ) -> Option<weft_model::ContainerId> {
        let i = self.next_ask(a, room)?;
        let ask = self.apps[a].asks[i].clone();
        self.apps[a].asks[i].count -= 1;
        let (name, rack) = (
            self.nodes[n].id.host().to_owned(),
            self.nodes[n].rack.clone(),
        );
        for other in &mut self.apps[a].asks {
            let here = match &other.location {
                TestLocation::Node(x) => *x == name,
                TestLocation::Rack(r) => *r == rack,
                TestLocation::Any => false,
            };
            if here
                && other.priority == ask.priority
                && other.capability == ask.capability
                && other.count > 0
            {
                other.count -= 1;
            }
        }
        let is_am = self.apps[a].next_seq == 1;
        Some(self.add_container(a, n, ask.capability, ask.priority, is_am, now))
    }

    /// Instantaneous fair shares, roughly as the queue tree computes them
    /// with every weight 1: each parent splits its share among its active
    /// children (those with live apps) honouring min shares, each leaf
    /// evenly among its apps; `fair` shares memory only.
    pub(crate) fn recompute_fair_shares(&mut self) {
        let cluster: Resource = self.nodes.iter().map(|n| n.capability).sum();
        self.queues[0].fair_share = cluster;
        self.share_children(0);
    }

    fn share_children(&mut self, q: usize) {
        let total = self.queues[q].fair_share;
        let types: &[ResourceType] = match self.queues[q].policy {
            Policy::Drf => &ResourceType::ALL,
            Policy::Fair | Policy::Fifo => &[ResourceType::Memory],
        };
        let children: Vec<usize> = (0..self.queues.len())
            .filter(|c| self.queues[*c].parent == Some(q))
            .collect();
        if children.is_empty() {
            let apps: Vec<usize> = self
                .live_apps()
                .filter(|a| self.apps[*a].queue == q)
                .collect();
            let mut shares = vec![Resource::ZERO; apps.len()];
            for ty in types {
                let split = split(&vec![0; apps.len()], total.get(*ty));
                for (share, v) in shares.iter_mut().zip(split) {
                    share.set(*ty, v);
                }
            }
            for (a, share) in apps.iter().zip(shares) {
                self.apps[*a].fair_share = share;
            }
            return;
        }
        let active: Vec<usize> = children
            .iter()
            .copied()
            .filter(|c| {
                self.live_apps()
                    .any(|a| self.is_under(self.apps[a].queue, *c))
            })
            .collect();
        for c in &children {
            self.queues[*c].fair_share = Resource::ZERO;
        }
        for ty in types {
            let mins: Vec<u64> = active
                .iter()
                .map(|c| self.queues[*c].min_share.get(*ty))
                .collect();
            for (c, v) in active.iter().zip(split(&mins, total.get(*ty))) {
                self.queues[*c].fair_share.set(*ty, v);
            }
        }
        for c in children {
            self.share_children(c);
        }
    }
}

/// Splits `total` so each part is max(its min, R) with the largest R whose
/// parts add up to at most `total` (weights all 1); the mins alone when they
/// already exceed it.
fn split(mins: &[u64], total: u64) -> Vec<u64> {
    let used = |r: u64| {
        mins.iter()
            .fold(0u64, |acc, m| acc.saturating_add((*m).max(r)))
    };
    if mins.is_empty() || used(0) >= total {
        return mins.to_vec();
    }
    let (mut low, mut high) = (0, total);
    while low < high {
        let mid = low + (high - low).div_ceil(2);
        if used(mid) <= total {
            low = mid;
        } else {
            high = mid - 1;
        }
    }
    mins.iter().map(|m| (*m).max(low)).collect()
}

#[cfg(test)]
mod tests {
    use std::fmt::Write;

    use expect_test::expect;
    use weft_model::Time;

    use super::*;
    use crate::Preemptor;
    use crate::testing::fixture::{render_transition, res};

    /// Seed 003's cluster: 3 nodes × 8 GB / 16 vcores, `default` (min 6000
    /// MB / 12 vcores) filling it with 1 GB containers, `supertool` (min
    /// 18000 MB / 36 vcores) asking for 24 of them; 1 s timeouts. Updates
    /// every 500 ms for 70 s; after each one the output is carried out and
    /// the nodes heartbeat. Prints what changes.
    fn seed_003(default_apps: usize) -> String {
        seed_003_with(default_apps, "")
    }

    /// `seed_003`, with extra `settings` words (`classic`).
    fn seed_003_with(default_apps: usize, settings: &str) -> String {
        let mut fixture = String::from(
            "node n1 /rack 8192,16\nnode n2 /rack 8192,16\nnode n3 /rack 8192,16\n\
             queue root.default min=6000,12 minto=1s fsto=1s\n\
             queue root.supertool min=18000,36 minto=1s fsto=1s\n",
        );
        let per_app = 24 / default_apps;
        for i in 0..default_apps {
            writeln!(fixture, "app d{i} root.default").unwrap();
            writeln!(fixture, "ask d{i} * 6x1024,1").unwrap();
        }
        // Fill the nodes in turn, each app's first container its AM.
        for c in 0..24 {
            let app = c / per_app;
            let am = if c % per_app == 0 { " am" } else { "" };
            writeln!(
                fixture,
                "run d{app} n{} 1x1024,1 at={}{am}",
                c / 8 + 1,
                c * 10
            )
            .unwrap();
        }
        fixture.push_str("app s root.supertool start=0\nask s * 24x1024,1\n");
        if !settings.is_empty() {
            writeln!(fixture, "settings {settings}").unwrap();
        }
        let mut view = TestView::parse(&fixture);
        let settings = view.settings.clone();
        let mut preemptor = Preemptor::new();
        let mut acc = String::new();
        let mut t = 0;
        while t <= 70_000 {
            let now = Time::from_millis(t);
            view.recompute_fair_shares();
            let out = preemptor
                .update(now, &view, &settings)
                .expect("consistent view");
            let mut lines = Vec::new();
            for s in &out.starved {
                let taken: u32 = s.victims.iter().map(|v| v.containers.len() as u32).sum();
                lines.push(format!(
                    "{} starved: fair-share {} + min-share {}, wants {}, {taken} victims",
                    view.app_label(s.app),
                    res(s.fair_share_starvation),
                    res(s.min_share_starvation),
                    res(s.requested),
                ));
            }
            let warned = out
                .transitions
                .iter()
                .filter(|t| matches!(t.kind, TransitionKind::Warned { .. }))
                .count();
            let killed = out
                .transitions
                .iter()
                .filter(|t| t.kind == TransitionKind::Killed)
                .count();
            if warned > 0 {
                let first = out
                    .transitions
                    .iter()
                    .find(|t| matches!(t.kind, TransitionKind::Warned { .. }));
                lines.push(format!(
                    "{warned} warned (first: {})",
                    render_transition(&view, first.expect("some"))
                ));
            }
            if killed > 0 {
                lines.push(format!("{killed} killed"));
            }
            for app in &out.claims_ended {
                lines.push(format!("claim of {} ended", view.app_label(*app)));
            }
            view.apply(&out);
            let allocated = view.heartbeat(now);
            if !allocated.is_empty() {
                lines.push(format!("{} allocated", allocated.len()));
            }
            if !lines.is_empty() {
                let default = view.queue_usage(1).memory_mb();
                let supertool = view.queue_usage(2).memory_mb();
                writeln!(
                    acc,
                    "{now}: {} | supertool {supertool} : default {default} MB",
                    lines.join("; ")
                )
                .unwrap();
            }
            t += 500;
        }
        writeln!(
            acc,
            "fair shares: supertool {}, default {} ({} per app)",
            res(view.queues[2].fair_share),
            res(view.queues[1].fair_share),
            res(view.apps[0].fair_share)
        )
        .unwrap();
        acc
    }

    #[test]
    fn seed_003_with_one_app_in_default() {
        expect![[r#"
            1.000s: s starved: fair-share 9000,0 + min-share 9000,36, wants 17408,17, 17 victims; 17 warned (first: d0#8 on n1 for s: warned, deadline 16.000s) | supertool 0 : default 24576 MB
            16.000s: 17 killed; 17 allocated | supertool 17408 : default 7168 MB
            20.500s: claim of s ended | supertool 17408 : default 7168 MB
            30.000s: s starved: fair-share 0,0 + min-share 592,19, wants 0,0, 0 victims | supertool 17408 : default 7168 MB
            59.000s: s starved: fair-share 0,0 + min-share 592,19, wants 0,0, 0 victims | supertool 17408 : default 7168 MB
            fair shares: supertool 18000,0, default 6576,0 (6576,0 per app)
        "#]]
        .assert_eq(&seed_003(1));
    }

    #[test]
    fn seed_003_with_four_apps_in_default() {
        expect![[r#"
            1.000s: s starved: fair-share 9000,0 + min-share 9000,36, wants 17408,17, 16 victims; 16 warned (first: d1#2 on n1 for s: warned, deadline 16.000s) | supertool 0 : default 24576 MB
            16.000s: 16 killed; 16 allocated | supertool 16384 : default 8192 MB
            20.500s: claim of s ended | supertool 16384 : default 8192 MB
            30.000s: s starved: fair-share 0,0 + min-share 1616,20, wants 1024,1, 0 victims | supertool 16384 : default 8192 MB
            59.000s: s starved: fair-share 0,0 + min-share 1616,20, wants 1024,1, 0 victims | supertool 16384 : default 8192 MB
            fair shares: supertool 18000,0, default 6576,0 (1644,0 per app)
        "#]]
        .assert_eq(&seed_003(4));
    }

    #[test]
    fn seed_003_classic_with_four_apps_in_default() {
        expect![[r#"
            1.500s: s starved: fair-share 0,0 + min-share 18000,24, wants 18000,24, 18 victims; 18 warned (first: d3#6 on n3 for s: warned, deadline 16.500s) | supertool 0 : default 24576 MB
            16.500s: 18 killed; 18 allocated | supertool 18432 : default 6144 MB
            fair shares: supertool 18000,0, default 6576,0 (1644,0 per app)
        "#]]
        .assert_eq(&seed_003_with(4, "classic"));
    }

    #[test]
    fn seed_003_classic_with_one_app_in_default() {
        expect![[r#"
            1.500s: s starved: fair-share 0,0 + min-share 18000,24, wants 18000,24, 18 victims; 18 warned (first: d0#24 on n3 for s: warned, deadline 16.500s) | supertool 0 : default 24576 MB
            16.500s: 18 killed; 18 allocated | supertool 18432 : default 6144 MB
            fair shares: supertool 18000,0, default 6576,0 (6576,0 per app)
        "#]]
        .assert_eq(&seed_003_with(1, "classic"));
    }
}
