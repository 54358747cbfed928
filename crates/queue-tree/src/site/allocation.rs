//! The scheduler-wide container limits (minimum, maximum, increment) and
//! request normalisation: how an ask becomes the container size the
//! scheduler actually looks for.
//!
//! The queue side of the cap (a queue's inherited `maxContainerAllocation`)
//! is computed by the caller; rejecting asks for a resource a queue has none
//! of is `weft-core`'s business.

use weft_model::{Resource, ResourceType};

/// Minimum, maximum and increment of a container, per resource type.
///
/// Invariant: for every type, minimum ≤ maximum and increment > 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocationLimits {
    min: Resource,
    max: Resource,
    increment: Resource,
}

/// Why a set of limits is inconsistent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AllocationLimitsError {
    /// The minimum is above the maximum.
    #[error("the minimum allocation of {resource} ({min}) is above the maximum ({max})")]
    MinAboveMax {
        /// The resource type.
        resource: ResourceType,
        /// The minimum.
        min: u64,
        /// The maximum.
        max: u64,
    },
    /// A zero increment, which would leave nothing to round to.
    #[error("the allocation increment of {resource} must be positive")]
    ZeroIncrement {
        /// The resource type.
        resource: ResourceType,
    },
}

impl Default for AllocationLimits {
    /// Hadoop's defaults: minimum 1024 MB / 1 vcore, maximum 8192 MB / 4
    /// vcores, increment 1024 MB / 1 vcore.
    fn default() -> AllocationLimits {
        AllocationLimits {
            min: Resource::new(1024, 1),
            max: Resource::new(8192, 4),
            increment: Resource::new(1024, 1),
        }
    }
}

impl AllocationLimits {
    /// Checks the invariant; every violation is reported, in resource-type order.
    pub fn new(
        min: Resource,
        max: Resource,
        increment: Resource,
    ) -> Result<AllocationLimits, Vec<AllocationLimitsError>> {
        let mut problems = Vec::new();
        for resource in ResourceType::ALL {
            let (lo, hi) = (min.get(resource), max.get(resource));
            if lo > hi {
                problems.push(AllocationLimitsError::MinAboveMax {
                    resource,
                    min: lo,
                    max: hi,
                });
            }
            if increment.get(resource) == 0 {
                problems.push(AllocationLimitsError::ZeroIncrement { resource });
            }
        }
        if problems.is_empty() {
            Ok(AllocationLimits {
                min,
                max,
                increment,
            })
        } else {
            Err(problems)
        }
    }

    /// The smallest container (`yarn.scheduler.minimum-allocation-*`).
    pub fn min(&self) -> Resource {
        self.min
    }

    /// The largest container anywhere (`yarn.scheduler.maximum-allocation-*`).
    pub fn max(&self) -> Resource {
        self.max
    }

    /// The step container sizes are rounded up to (`*.increment-allocation`).
    pub fn increment(&self) -> Resource {
        self.increment
    }

    /// Normalises an ask, per resource type: raise it to the minimum, round
    /// it up to a multiple of the increment, then cap it at
    /// `queue_max_container` (the queue's effective `maxContainerAllocation`)
    /// and never above the scheduler's maximum.
    ///
    /// A capped result need not be a multiple of the increment, and when the
    /// cap is below the minimum the cap wins, as in Hadoop.
    pub fn normalize(&self, ask: Resource, queue_max_container: Resource) -> Resource {
        let cap = queue_max_container.component_min(self.max);
        let mut res = ask;
        for ty in ResourceType::ALL {
            let raised = ask.get(ty).max(self.min.get(ty));
            let rounded = round_up(raised, self.increment.get(ty));
            res.set(ty, rounded.min(cap.get(ty)));
        }
        res
    }

    /// The smallest container that may reserve a node: the increment times
    /// `multiple`, each type truncated (Hadoop's `Resources.multiply`).
    pub fn reservation_threshold(&self, multiple: f64) -> Resource {
        // Hadoop reads the multiple with getFloat and widens it to multiply:
        // 1.15 × 1000 MB is 1149 MB there, not 1150.
        self.increment.scale_down(f64::from(multiple as f32))
    }
}

/// `value` rounded up to a multiple of `step`, saturating; a zero step leaves
/// it alone (the invariant rules that out, but nothing here may panic).
fn round_up(value: u64, step: u64) -> u64 {
    if step == 0 {
        return value;
    }
    value.div_ceil(step).saturating_mul(step)
}

#[cfg(test)]
mod tests {
    use expect_test::expect;
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn invariant_is_checked() {
        let err = AllocationLimits::new(
            Resource::new(2048, 1),
            Resource::new(1024, 4),
            Resource::new(512, 0),
        )
        .unwrap_err();
        let rendered: Vec<String> = err.iter().map(ToString::to_string).collect();
        expect![[r#"
            [
                "the minimum allocation of memory-mb (2048) is above the maximum (1024)",
                "the allocation increment of vcores must be positive",
            ]
        "#]]
        .assert_debug_eq(&rendered);
        assert!(AllocationLimits::new(Resource::ZERO, Resource::ZERO, Resource::new(1, 1)).is_ok());
    }

    /// `mb/vcores`, or `inf` for unbounded.
    fn resource(text: &str) -> Resource {
        if text == "inf" {
            return Resource::UNBOUNDED;
        }
        let (mb, vcores) = text.split_once('/').expect("mb/vcores");
        Resource::new(mb.parse().expect("mb"), vcores.parse().expect("vcores"))
    }

    /// Runs each fixture line `ask min increment queue-max scheduler-max #
    /// note` (resources as `mb/vcores`) through `normalize` and renders the
    /// result after the inputs.
    fn check_normalize(fixture: &str, expect: expect_test::Expect) {
        let mut out = format!(
            "{:>22} {:>9} {:>8} {:>9} {:>10}    {}\n",
            "ask", "min", "inc", "queue-max", "sched-max", "normalised"
        );
        for line in fixture.lines().map(str::trim).filter(|l| !l.is_empty()) {
            let (inputs, note) = line.split_once('#').unwrap_or((line, ""));
            let fields: Vec<&str> = inputs.split_whitespace().collect();
            let [ask, min, inc, cap, max] = fields[..] else {
                panic!("five resources expected in {line:?}");
            };
            let limits = AllocationLimits::new(resource(min), resource(max), resource(inc))
                .expect("consistent limits");
            let res = limits.normalize(resource(ask), resource(cap));
            let res = format!("{}/{}", res.memory_mb(), res.vcores());
            out.push_str(&format!(
                "{ask:>22} {min:>9} {inc:>8} {cap:>9} {max:>10} -> {res:<11} #{note}\n"
            ));
        }
        expect.assert_eq(&out);
    }

    #[test]
    fn normalisation_table() {
        check_normalize(
            "
            512/1     0/0       1024/1  inf       inf        # reference: min 0, 512 rounds up
            5120/1    0/0       1024/1  4096/4    inf        # reference: capped by the queue
            100/0     1024/1    1024/1  8192/4    16384/8    # raised to the minimum
            2048/2    1024/1    1024/1  8192/4    16384/8    # an exact multiple stays
            1025/3    1024/1    1024/2  8192/8    16384/8    # one above a multiple
            1000/1    0/0       768/1   8192/4    16384/8    # an odd increment
            0/0       0/0       1024/1  8192/4    16384/8    # nothing asked, no minimum
            1/1       1024/2    1024/1  512/1     16384/8    # the cap wins over the minimum
            3000/1    0/0       1024/1  2500/4    16384/8    # a cap that is not a multiple
            1024/9    1024/1    1024/1  8192/4    16384/8    # vcores capped, memory not
            20000/1   1024/1    1024/1  inf       16384/8    # the scheduler maximum caps too
            18446744073709551615/1 0/0 1000/1 inf 16384/8    # rounding saturates, then caps
            ",
            expect![[r#"
                                   ask       min      inc queue-max  sched-max    normalised
                                 512/1       0/0   1024/1       inf        inf -> 1024/1      # reference: min 0, 512 rounds up
                                5120/1       0/0   1024/1    4096/4        inf -> 4096/1      # reference: capped by the queue
                                 100/0    1024/1   1024/1    8192/4    16384/8 -> 1024/1      # raised to the minimum
                                2048/2    1024/1   1024/1    8192/4    16384/8 -> 2048/2      # an exact multiple stays
                                1025/3    1024/1   1024/2    8192/8    16384/8 -> 2048/4      # one above a multiple
                                1000/1       0/0    768/1    8192/4    16384/8 -> 1536/1      # an odd increment
                                   0/0       0/0   1024/1    8192/4    16384/8 -> 0/0         # nothing asked, no minimum
                                   1/1    1024/2   1024/1     512/1    16384/8 -> 512/1       # the cap wins over the minimum
                                3000/1       0/0   1024/1    2500/4    16384/8 -> 2500/1      # a cap that is not a multiple
                                1024/9    1024/1   1024/1    8192/4    16384/8 -> 1024/4      # vcores capped, memory not
                               20000/1    1024/1   1024/1       inf    16384/8 -> 16384/1     # the scheduler maximum caps too
                18446744073709551615/1       0/0   1000/1       inf    16384/8 -> 16384/1     # rounding saturates, then caps
            "#]],
        );
    }

    #[test]
    fn reservation_threshold_truncates() {
        let limits = AllocationLimits::default();
        assert_eq!(limits.reservation_threshold(2.0), Resource::new(2048, 2));
        assert_eq!(limits.reservation_threshold(1.5), Resource::new(1536, 1));
        assert_eq!(limits.reservation_threshold(0.0), Resource::ZERO);
        let limits = AllocationLimits {
            increment: Resource::new(1000, 10),
            ..AllocationLimits::default()
        };
        assert_eq!(limits.reservation_threshold(1.15), Resource::new(1149, 11));
        assert_eq!(limits.reservation_threshold(0.7), Resource::new(699, 6));
    }

    fn limits() -> impl Strategy<Value = AllocationLimits> {
        (
            0u64..4096,
            0u64..8,
            1u64..2048,
            1u64..4,
            0u64..65536,
            0u64..16,
        )
            .prop_map(|(min_mb, min_vc, inc_mb, inc_vc, extra_mb, extra_vc)| {
                AllocationLimits::new(
                    Resource::new(min_mb, min_vc),
                    Resource::new(min_mb + extra_mb, min_vc + extra_vc),
                    Resource::new(inc_mb, inc_vc),
                )
                .expect("generated limits are consistent")
            })
    }

    proptest! {
        #[test]
        fn normalised_asks_respect_the_limits(
            limits in limits(),
            ask_mb in 0u64..100_000,
            ask_vc in 0u64..64,
            cap_mb in 0u64..100_000,
            cap_vc in 0u64..64,
        ) {
            let ask = Resource::new(ask_mb, ask_vc);
            let queue_cap = Resource::new(cap_mb, cap_vc);
            let res = limits.normalize(ask, queue_cap);
            let cap = queue_cap.component_min(limits.max());
            for ty in ResourceType::ALL {
                let v = res.get(ty);
                prop_assert!(v <= cap.get(ty));
                if limits.min().get(ty) <= cap.get(ty) {
                    prop_assert!(v >= limits.min().get(ty));
                }
                if v != cap.get(ty) {
                    prop_assert_eq!(v % limits.increment().get(ty), 0);
                    prop_assert!(v >= ask.get(ty));
                }
            }
            prop_assert_eq!(limits.normalize(res, queue_cap), res);
        }
    }
}
