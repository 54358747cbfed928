//! What nodes say they actually use, as opposed to what the scheduler
//! allocated: YARN's `ResourceUtilization` of a node and of its containers,
//! as the node agent measured it and sent it with a heartbeat, and the
//! cluster's utilized share computed from it as Hadoop's `ClusterMetrics`
//! does.
//!
//! This lives in the service shell, never in the core: the scheduler does
//! not schedule on utilization, so the figures only pass through the actor
//! (which keeps each node's latest) into the published view. Parsing the
//! wire form and refusing bad values is `dto::nm`'s; showing the figures is
//! the REST, metrics and web UI modules'.

use weft_core::{NodeReport, NodeState};
use weft_model::Resource;

/// One `ResourceUtilization`: what a node, or its containers together, use.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Utilization {
    /// Physical memory in use, MB.
    pub pmem_mb: u64,
    /// Virtual memory in use, MB.
    pub vmem_mb: u64,
    /// CPU in use, in processors (1.0 is one processor fully busy), as
    /// YARN's `ResourceUtilization.getCPU()`; never negative, always finite.
    pub cpu: f64,
}

/// The latest utilization a node reported, with the machine's own size.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct NodeUtilization {
    /// The whole machine's use; `None` until the node reports it.
    pub node: Option<Utilization>,
    /// Its containers' use together; `None` until the node reports it.
    pub containers: Option<Utilization>,
    /// The machine's physical memory and processors, as the node gave them
    /// at registration (Hadoop's `physicalResource`), which scale its use to
    /// the capability it offers; `None` when it did not say.
    pub physical: Option<Resource>,
}

impl NodeUtilization {
    /// The node's use scaled to the capability it offers the scheduler, in
    /// MB and vcores, as Hadoop's `RMNodeImpl` scales a node's contribution
    /// to the cluster's utilized figures: a machine of 64 GB using 16 GB
    /// that offers 8 GB counts 2 GB. Without the machine's size the figures
    /// count as they are. `None` until the node reports its own use.
    pub fn scaled(&self, capability: Resource) -> Option<(f64, f64)> {
        let node = self.node?;
        let physical = self.physical.unwrap_or(capability);
        let mem = node.pmem_mb as f64 / (physical.memory_mb() as f64).max(1.0)
            * capability.memory_mb() as f64;
        let cpu = node.cpu / (physical.vcores() as f64).max(1.0) * capability.vcores() as f64;
        Some((mem, cpu))
    }
}

/// The cluster's utilization, summed over the nodes that reported.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ClusterUtilization {
    /// Live nodes (running, unhealthy or draining) that reported their use.
    pub reporting_nodes: u32,
    /// Their machines' physical memory in use, MB.
    pub node_pmem_mb: u64,
    /// Their machines' CPU in use, in processors.
    pub node_cpu: f64,
    /// Their containers' physical memory in use, MB.
    pub containers_pmem_mb: u64,
    /// Their containers' CPU in use, in processors.
    pub containers_cpu: f64,
    /// Memory in use scaled to each node's capability (`NodeUtilization::scaled`), MB.
    pub utilized_mb: f64,
    /// CPU in use scaled to each node's capability, vcores.
    pub utilized_vcores: f64,
}

impl ClusterUtilization {
    /// The sums over `nodes` of what `utilization` holds for them. Lost,
    /// shut-down and decommissioned nodes count no more, as Hadoop takes a
    /// node's contribution back when it leaves.
    pub fn sum<'a>(
        nodes: impl IntoIterator<Item = &'a NodeReport>,
        utilization: impl Fn(&NodeReport) -> Option<&'a NodeUtilization>,
    ) -> ClusterUtilization {
        let mut acc = ClusterUtilization::default();
        for n in nodes {
            let live = matches!(
                n.state,
                NodeState::Running | NodeState::Unhealthy | NodeState::Decommissioning
            );
            let Some(u) = utilization(n).filter(|_| live) else {
                continue;
            };
            if u.node.is_none() && u.containers.is_none() {
                continue;
            }
            acc.reporting_nodes += 1;
            if let Some(node) = u.node {
                acc.node_pmem_mb = acc.node_pmem_mb.saturating_add(node.pmem_mb);
                acc.node_cpu += node.cpu;
            }
            if let Some(c) = u.containers {
                acc.containers_pmem_mb = acc.containers_pmem_mb.saturating_add(c.pmem_mb);
                acc.containers_cpu += c.cpu;
            }
            if let Some((mem, cpu)) = u.scaled(n.capability) {
                acc.utilized_mb += mem;
                acc.utilized_vcores += cpu;
            }
        }
        acc
    }

    /// Hadoop's `utilizedMBPercent` and `utilizedVirtualCoresPercent`: the
    /// scaled use as a whole percentage of `total` (the running nodes'
    /// capability), 0 when there is none.
    pub fn percent_of(&self, total: Resource) -> (u64, u64) {
        let pct = |used: f64, total: u64| {
            if total == 0 {
                0
            } else {
                // Truncated, as Hadoop's integer division does.
                (used * 100.0 / total as f64) as u64
            }
        };
        (
            pct(self.utilized_mb, total.memory_mb()),
            pct(self.utilized_vcores, total.vcores()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn used(pmem_mb: u64, cpu: f64) -> Utilization {
        Utilization {
            pmem_mb,
            vmem_mb: pmem_mb * 2,
            cpu,
        }
    }

    #[test]
    fn a_node_counts_in_proportion_to_what_it_offers() {
        let u = NodeUtilization {
            node: Some(used(16_384, 4.0)),
            containers: None,
            physical: Some(Resource::new(65_536, 16)),
        };
        assert_eq!(u.scaled(Resource::new(8192, 8)), Some((2048.0, 2.0)));
        // Without the machine's size, the figures count as they are.
        let bare = NodeUtilization {
            physical: None,
            ..u
        };
        assert_eq!(bare.scaled(Resource::new(8192, 8)), Some((16_384.0, 4.0)));
        assert_eq!(NodeUtilization::default().scaled(Resource::new(1, 1)), None);
    }

    #[test]
    fn percentages_truncate_and_survive_an_empty_cluster() {
        let c = ClusterUtilization {
            utilized_mb: 2047.9,
            utilized_vcores: 0.5,
            ..ClusterUtilization::default()
        };
        assert_eq!(c.percent_of(Resource::new(4096, 2)), (49, 25));
        assert_eq!(c.percent_of(Resource::ZERO), (0, 0));
    }
}
