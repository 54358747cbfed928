//! Which of a starved app's asks preemption tries to make room for, and how
//! many containers of each (Hadoop's `getStarvedResourceRequests`).
//!
//! Hadoop takes the first location level it happens to meet for each
//! (priority, size) and skips the others, in hash order. Weft picks the
//! widest level the app may actually be placed at: anywhere when the `*` ask
//! relaxes locality, else the racks, else the nodes. Finding victims for the
//! chosen requests is `victims`' business.

use std::cmp::Ordering;

use weft_model::{Priority, Resource, ratio};

use crate::view::{Ask, Location};

/// Containers of one size that preemption should make room for, at one location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct StarvedRequest<'a> {
    pub(crate) priority: Priority,
    pub(crate) capability: Resource,
    pub(crate) location: Location<'a>,
    pub(crate) count: u32,
    /// True when a victim set holding AM containers may be replaced by a
    /// better one found on any node (the app may run off this location).
    pub(crate) may_widen: bool,
}

/// Turns `starvation` into requests, from `asks` (sorted and filtered in
/// place). `rack_of` names the rack of a node named in an ask.
pub(crate) fn starved_requests<'a>(
    asks: &mut Vec<Ask<'a>>,
    rack_of: impl Fn(&str) -> Option<&'a str>,
    starvation: Resource,
    out: &mut Vec<StarvedRequest<'a>>,
) {
    // An empty container needs no room (and would be "placed" forever).
    asks.retain(|a| a.count > 0 && !a.capability.is_zero());
    asks.sort_by(ask_order);
    let mut pending = starvation;
    let mut picks = Vec::new();
    let mut start = 0;
    while start < asks.len() && !pending.is_zero() {
        let key = (asks[start].priority, asks[start].capability);
        let end = start
            + asks[start..]
                .iter()
                .take_while(|a| (a.priority, a.capability) == key)
                .count();
        picks.clear();
        pick_levels(&asks[start..end], &rack_of, &mut picks);
        for pick in &picks {
            if pending.is_zero() {
                break;
            }
            let n = containers_that_fit(&pending, &pick.capability).min(pick.count);
            if n == 0 {
                continue;
            }
            out.push(StarvedRequest { count: n, ..*pick });
            pending -= pick.capability.saturating_mul(u64::from(n));
        }
        start = end;
    }
}

/// Priority first (a smaller number first, as YARN serves them), then size,
/// then anywhere before racks before nodes, then by name.
fn ask_order(a: &Ask<'_>, b: &Ask<'_>) -> Ordering {
    a.priority
        .cmp(&b.priority)
        .then_with(|| a.capability.values().cmp(&b.capability.values()))
        .then_with(|| a.location.cmp(&b.location))
}

/// How many containers of `size` fit in `pending`, by memory as Hadoop's
/// scheduler-wide calculator counts them.
fn containers_that_fit(pending: &Resource, size: &Resource) -> u32 {
    let n = ratio(pending.memory_mb(), size.memory_mb()).floor();
    if n >= f64::from(u32::MAX) {
        u32::MAX
    } else {
        n as u32
    }
}

/// The levels to serve one (priority, size), widest first; `group` is sorted.
fn pick_levels<'a>(
    group: &[Ask<'a>],
    rack_of: &impl Fn(&str) -> Option<&'a str>,
    picks: &mut Vec<StarvedRequest<'a>>,
) {
    let pick = |ask: &Ask<'a>, may_widen: bool| StarvedRequest {
        priority: ask.priority,
        capability: ask.capability,
        location: ask.location,
        count: ask.count,
        may_widen,
    };
    let any = group.iter().find(|a| a.location == Location::Any);
    let narrower = group.len() > usize::from(any.is_some());
    if let Some(any) = any
        && (any.relax_locality || !narrower)
    {
        picks.push(pick(any, false));
        return;
    }
    // Off-switch is forbidden, or nothing was asked anywhere.
    let off_switch_allowed = any.is_none();
    let racks: Vec<&Ask<'a>> = group
        .iter()
        .filter(|a| matches!(a.location, Location::Rack(_)))
        .collect();
    let rack_name = |ask: &Ask<'a>| match ask.location {
        Location::Rack(r) => Some(r),
        _ => None,
    };
    for rack in &racks {
        let in_rack: Vec<&Ask<'a>> = group
            .iter()
            .filter(
                |a| matches!(a.location, Location::Node(name) if rack_of(name) == rack_name(rack)),
            )
            .collect();
        if rack.relax_locality || in_rack.is_empty() {
            picks.push(pick(rack, off_switch_allowed && rack.relax_locality));
        } else {
            // Rack-local placement is forbidden here: only the named nodes.
            picks.extend(in_rack.into_iter().map(|node| pick(node, false)));
        }
    }
    for node in group
        .iter()
        .filter(|a| matches!(a.location, Location::Node(_)))
    {
        let Location::Node(name) = node.location else {
            continue;
        };
        let rack = rack_of(name);
        let rack_asked = racks.iter().any(|r| rack_name(r) == rack);
        if !rack_asked {
            picks.push(pick(node, off_switch_allowed && node.relax_locality));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ask(location: Location<'static>, mb: u64, count: u32, relax: bool) -> Ask<'static> {
        Ask {
            priority: Priority(1),
            capability: Resource::new(mb, 1),
            location,
            count,
            relax_locality: relax,
        }
    }

    fn rack_of(name: &str) -> Option<&'static str> {
        match name {
            "h1" | "h2" => Some("/r1"),
            "h3" => Some("/r2"),
            _ => None,
        }
    }

    fn render(mut asks: Vec<Ask<'static>>, starvation: Resource) -> Vec<String> {
        let mut out = Vec::new();
        starved_requests(&mut asks, rack_of, starvation, &mut out);
        out.iter()
            .map(|r| {
                format!(
                    "{:?} {}mb x{}{}",
                    r.location,
                    r.capability.memory_mb(),
                    r.count,
                    if r.may_widen { " widen" } else { "" }
                )
            })
            .collect()
    }

    #[test]
    fn anywhere_wins_when_it_relaxes_and_counts_are_capped_by_starvation() {
        let asks = vec![
            ask(Location::Node("h1"), 1024, 1, true),
            ask(Location::Rack("/r1"), 1024, 1, true),
            ask(Location::Any, 1024, 6, true),
        ];
        // 4000 MB of starvation holds three 1 GB containers.
        assert_eq!(render(asks, Resource::new(4000, 4)), ["Any 1024mb x3"]);
    }

    #[test]
    fn strict_anywhere_falls_back_to_racks_and_nodes() {
        let asks = vec![
            ask(Location::Node("h1"), 1024, 1, true),
            ask(Location::Node("h3"), 1024, 2, true),
            ask(Location::Rack("/r1"), 1024, 1, false),
            ask(Location::Rack("/r2"), 1024, 2, true),
            ask(Location::Any, 1024, 3, false),
        ];
        assert_eq!(
            render(asks, Resource::new(8192, 8)),
            ["Node(\"h1\") 1024mb x1", "Rack(\"/r2\") 1024mb x2"]
        );
    }

    #[test]
    fn a_size_only_asked_at_a_node_may_widen() {
        // Hadoop's relaxed-locality test: the node ask is the only one small
        // enough; the big rack and anywhere asks do not fit the starvation.
        let asks = vec![
            ask(Location::Node("h1"), 1024, 4, true),
            ask(Location::Rack("/r1"), 10_240, 1, true),
            ask(Location::Any, 10_240, 1, true),
        ];
        assert_eq!(
            render(asks, Resource::new(4096, 4)),
            ["Node(\"h1\") 1024mb x4 widen"]
        );
    }

    #[test]
    fn empty_containers_are_not_made_room_for() {
        let mut empty = ask(Location::Any, 0, u32::MAX, true);
        empty.capability = Resource::ZERO;
        assert!(render(vec![empty], Resource::new(4096, 4)).is_empty());
    }

    #[test]
    fn higher_priority_first_and_nothing_past_the_starvation() {
        let mut low = ask(Location::Any, 1024, 4, true);
        low.priority = Priority(5);
        let high = ask(Location::Any, 2048, 1, true);
        assert_eq!(
            render(vec![low, high], Resource::new(3072, 3)),
            ["Any 2048mb x1", "Any 1024mb x1"]
        );
        assert!(render(vec![high], Resource::new(1000, 3)).is_empty());
    }
}
