//! The multi-resource quantity (`Resource`) and its arithmetic; parsing of the
//! allocation file's resource syntax lives in `resource_spec`.
//!
//! A `Resource` is a fixed-size vector indexed by [`ResourceType`].
//! Memory (MB) and vcores are first-class; a further countable type (GPUs, say)
//! is added by extending `ResourceType` and `N_RESOURCE_TYPES`: every policy
//! iterates over `ResourceType::ALL`, so none of them needs rewriting.

use std::cmp::Ordering;
use std::fmt;
use std::ops::{Add, AddAssign, Sub, SubAssign};

/// Number of resource types Weft schedules.
pub const N_RESOURCE_TYPES: usize = 2;

/// A countable resource type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ResourceType {
    /// Memory in megabytes (YARN's `memory-mb`).
    Memory,
    /// Virtual cores (YARN's `vcores`).
    Vcores,
}

impl ResourceType {
    /// Every type, in index order.
    pub const ALL: [ResourceType; N_RESOURCE_TYPES] = [ResourceType::Memory, ResourceType::Vcores];

    /// Position of this type in a `Resource` vector.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }

    /// YARN's resource-type name (`memory-mb`, `vcores`).
    #[inline]
    pub const fn name(self) -> &'static str {
        match self {
            ResourceType::Memory => "memory-mb",
            ResourceType::Vcores => "vcores",
        }
    }

    /// Looks a type up by YARN's name (case-insensitive; `memory` is accepted for memory).
    #[inline]
    pub fn from_name(name: &str) -> Option<ResourceType> {
        let name = name.trim();
        if name.eq_ignore_ascii_case("memory-mb") || name.eq_ignore_ascii_case("memory") {
            Some(ResourceType::Memory)
        } else if name.eq_ignore_ascii_case("vcores") {
            Some(ResourceType::Vcores)
        } else {
            None
        }
    }
}

impl fmt::Display for ResourceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An amount of every resource type.
///
/// Arithmetic saturates: `+` stops at [`Resource::UNBOUNDED`]'s components
/// (`u64::MAX`), `-` stops at zero. A component equal to `u64::MAX` means
/// "unbounded" (Hadoop's `Long.MAX_VALUE`); it survives additions unchanged.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Resource {
    values: [u64; N_RESOURCE_TYPES],
}

impl Resource {
    /// Nothing of anything.
    pub const ZERO: Resource = Resource {
        values: [0; N_RESOURCE_TYPES],
    };
    /// No limit on any type.
    pub const UNBOUNDED: Resource = Resource {
        values: [u64::MAX; N_RESOURCE_TYPES],
    };

    /// A resource with the given memory (MB) and vcores; other types zero.
    #[inline]
    pub const fn new(memory_mb: u64, vcores: u64) -> Resource {
        let mut values = [0; N_RESOURCE_TYPES];
        values[ResourceType::Memory.index()] = memory_mb;
        values[ResourceType::Vcores.index()] = vcores;
        Resource { values }
    }

    /// A resource from a full vector, in `ResourceType::ALL` order.
    #[inline]
    pub const fn from_values(values: [u64; N_RESOURCE_TYPES]) -> Resource {
        Resource { values }
    }

    /// A resource with the same amount of every type.
    #[inline]
    pub const fn splat(value: u64) -> Resource {
        Resource {
            values: [value; N_RESOURCE_TYPES],
        }
    }

    /// Memory in MB.
    #[inline]
    pub const fn memory_mb(&self) -> u64 {
        self.values[ResourceType::Memory.index()]
    }

    /// Virtual cores.
    #[inline]
    pub const fn vcores(&self) -> u64 {
        self.values[ResourceType::Vcores.index()]
    }

    /// The amount of one type.
    #[inline]
    pub const fn get(&self, ty: ResourceType) -> u64 {
        self.values[ty.index()]
    }

    /// The full vector, in `ResourceType::ALL` order.
    #[inline]
    pub const fn values(&self) -> [u64; N_RESOURCE_TYPES] {
        self.values
    }

    /// A copy with one type replaced.
    #[inline]
    #[must_use]
    pub const fn with(mut self, ty: ResourceType, value: u64) -> Resource {
        self.values[ty.index()] = value;
        self
    }

    /// Sets one type.
    #[inline]
    pub fn set(&mut self, ty: ResourceType, value: u64) {
        self.values[ty.index()] = value;
    }

    /// Applies `f` to every component.
    #[inline]
    #[must_use]
    pub fn map(self, mut f: impl FnMut(ResourceType, u64) -> u64) -> Resource {
        let mut res = self;
        for ty in ResourceType::ALL {
            res.values[ty.index()] = f(ty, self.values[ty.index()]);
        }
        res
    }

    /// Combines two resources component by component.
    #[inline]
    #[must_use]
    pub fn zip(self, other: Resource, mut f: impl FnMut(u64, u64) -> u64) -> Resource {
        let mut res = self;
        for i in 0..N_RESOURCE_TYPES {
            res.values[i] = f(self.values[i], other.values[i]);
        }
        res
    }

    /// Component-wise sum, saturating at `u64::MAX`.
    #[inline]
    #[must_use]
    pub fn saturating_add(self, other: Resource) -> Resource {
        self.zip(other, u64::saturating_add)
    }

    /// Component-wise difference, saturating at zero.
    #[inline]
    #[must_use]
    pub fn saturating_sub(self, other: Resource) -> Resource {
        self.zip(other, u64::saturating_sub)
    }

    /// Multiplies every component by `n`, saturating.
    #[inline]
    #[must_use]
    pub fn saturating_mul(self, n: u64) -> Resource {
        self.map(|_, v| v.saturating_mul(n))
    }

    /// Component-wise minimum.
    #[inline]
    #[must_use]
    pub fn component_min(self, other: Resource) -> Resource {
        self.zip(other, u64::min)
    }

    /// Component-wise maximum.
    #[inline]
    #[must_use]
    pub fn component_max(self, other: Resource) -> Resource {
        self.zip(other, u64::max)
    }

    /// True when every component is at most `other`'s (Hadoop's `fitsIn`).
    #[inline]
    pub fn fits_in(&self, other: &Resource) -> bool {
        self.values
            .iter()
            .zip(other.values.iter())
            .all(|(a, b)| a <= b)
    }

    /// True when every component is zero.
    #[inline]
    pub fn is_zero(&self) -> bool {
        self.values.iter().all(|v| *v == 0)
    }

    /// True when some component is non-zero.
    #[inline]
    pub fn any_positive(&self) -> bool {
        !self.is_zero()
    }

    /// True when every component is unbounded.
    #[inline]
    pub fn is_unbounded(&self) -> bool {
        self.values.iter().all(|v| *v == u64::MAX)
    }

    /// True when some component of `self` is larger than `other`'s.
    #[inline]
    pub fn exceeds_any(&self, other: &Resource) -> bool {
        !self.fits_in(other)
    }

    /// The share of `cluster` this amount represents for one type (0 when the cluster has none).
    #[inline]
    pub fn share_of(&self, ty: ResourceType, cluster: &Resource) -> f64 {
        ratio(self.get(ty), cluster.get(ty))
    }

    /// The dominant share: the largest per-type share of `cluster` (DRF).
    #[inline]
    pub fn dominant_share(&self, cluster: &Resource) -> f64 {
        ResourceType::ALL
            .iter()
            .map(|ty| self.share_of(*ty, cluster))
            .fold(0.0, f64::max)
    }

    /// Hadoop's `DominantResourceCalculator.compare`: each side's shares of
    /// `cluster`, largest first, compared in turn.
    pub fn compare_shares(&self, other: &Resource, cluster: &Resource) -> Ordering {
        if self == other {
            return Ordering::Equal;
        }
        let shares = |r: &Resource| {
            let mut s = [0.0; N_RESOURCE_TYPES];
            for ty in ResourceType::ALL {
                s[ty.index()] = r.share_of(ty, cluster);
            }
            s
        };
        compare_share_vectors(shares(self), shares(other))
    }

    /// Scales every component by `factor`, truncating (Hadoop's `multiplyAndRoundDown`).
    #[inline]
    #[must_use]
    pub fn scale_down(self, factor: f64) -> Resource {
        self.map(|_, v| scale_trunc(v, factor))
    }

    /// Scales every component by `factor`, rounding up (Hadoop's `multiplyAndRoundUp`).
    #[inline]
    #[must_use]
    pub fn scale_up(self, factor: f64) -> Resource {
        self.map(|_, v| {
            if v == u64::MAX {
                return v;
            }
            let x = (v as f64 * factor).ceil();
            if x <= 0.0 { 0 } else { x as u64 }
        })
    }

    /// How many whole copies of `unit` fit in `self` (the minimum over the types `unit` asks for).
    #[inline]
    pub fn times_fits(&self, unit: &Resource) -> u64 {
        let mut res = u64::MAX;
        for i in 0..N_RESOURCE_TYPES {
            if let Some(n) = self.values[i].checked_div(unit.values[i]) {
                res = res.min(n);
            }
        }
        res
    }
}

/// `a / b` as a float, with an empty denominator giving 0 (nothing to share)
/// unless `a` is positive (then infinity, as Hadoop's double division does).
pub fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        if a == 0 { 0.0 } else { f64::INFINITY }
    } else {
        a as f64 / b as f64
    }
}

/// Orders two vectors of shares as Hadoop's `DominantResourceCalculator`
/// does: each sorted from the largest share down, then compared element by
/// element. For callers whose shares are not a `Resource`'s (signed
/// deficits, say); others use [`Resource::compare_shares`].
pub fn compare_share_vectors(
    mut a: [f64; N_RESOURCE_TYPES],
    mut b: [f64; N_RESOURCE_TYPES],
) -> Ordering {
    a.sort_by(|x, y| y.total_cmp(x));
    b.sort_by(|x, y| y.total_cmp(x));
    a.iter()
        .zip(&b)
        .map(|(x, y)| x.total_cmp(y))
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal)
}

fn scale_trunc(v: u64, factor: f64) -> u64 {
    if v == u64::MAX {
        return v;
    }
    let x = v as f64 * factor;
    if x <= 0.0 { 0 } else { x as u64 }
}

impl Add for Resource {
    type Output = Resource;
    #[inline]
    fn add(self, rhs: Resource) -> Resource {
        self.saturating_add(rhs)
    }
}

impl AddAssign for Resource {
    #[inline]
    fn add_assign(&mut self, rhs: Resource) {
        *self = self.saturating_add(rhs);
    }
}

impl Sub for Resource {
    type Output = Resource;
    #[inline]
    fn sub(self, rhs: Resource) -> Resource {
        self.saturating_sub(rhs)
    }
}

impl SubAssign for Resource {
    #[inline]
    fn sub_assign(&mut self, rhs: Resource) {
        *self = self.saturating_sub(rhs);
    }
}

impl std::iter::Sum for Resource {
    fn sum<I: Iterator<Item = Resource>>(iter: I) -> Resource {
        iter.fold(Resource::ZERO, Resource::saturating_add)
    }
}

impl fmt::Debug for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// YARN's textual form, `<memory:1024, vCores:2>`; an unbounded component prints as `∞`.
impl fmt::Display for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<memory:")?;
        write_amount(f, self.memory_mb())?;
        f.write_str(", vCores:")?;
        write_amount(f, self.vcores())?;
        f.write_str(">")
    }
}

fn write_amount(f: &mut fmt::Formatter<'_>, v: u64) -> fmt::Result {
    if v == u64::MAX {
        f.write_str("∞")
    } else {
        write!(f, "{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn arithmetic_saturates() {
        let a = Resource::new(1024, 2);
        let b = Resource::new(2048, 1);
        assert_eq!(a - b, Resource::new(0, 1));
        assert_eq!(a + b, Resource::new(3072, 3));
        assert_eq!(Resource::UNBOUNDED + a, Resource::UNBOUNDED);
        assert_eq!(a.component_min(b), Resource::new(1024, 1));
        assert_eq!(a.component_max(b), Resource::new(2048, 2));
    }

    #[test]
    fn shares_compare_largest_first() {
        let cluster = Resource::new(1000, 10);
        // 50% memory, 10% vcores against 20% memory, 50% vcores: the largest
        // shares tie, so the second largest (20% against 10%) decides.
        let a = Resource::new(500, 1);
        let b = Resource::new(200, 5);
        assert_eq!(a.compare_shares(&b, &cluster), Ordering::Less);
        assert_eq!(b.compare_shares(&a, &cluster), Ordering::Greater);
        assert_eq!(a.compare_shares(&a, &cluster), Ordering::Equal);
        // Vectors in any order compare as their sorted selves.
        assert_eq!(
            compare_share_vectors([0.1, 0.5], [0.5, 0.1]),
            Ordering::Equal
        );
        assert_eq!(
            compare_share_vectors([0.6, 0.0], [0.5, 0.5]),
            Ordering::Greater
        );
    }

    #[test]
    fn fits_and_shares() {
        let cluster = Resource::new(10240, 10);
        let a = Resource::new(1024, 5);
        assert!(a.fits_in(&cluster));
        assert!(!cluster.fits_in(&a));
        assert_eq!(a.dominant_share(&cluster), 0.5);
        assert_eq!(Resource::ZERO.dominant_share(&Resource::ZERO), 0.0);
        assert_eq!(
            Resource::new(4096, 3).times_fits(&Resource::new(1024, 1)),
            3
        );
        assert_eq!(
            Resource::new(4096, 3).times_fits(&Resource::new(1024, 0)),
            4
        );
    }

    #[test]
    fn scaling_truncates_or_rounds_up() {
        assert_eq!(
            Resource::new(10240, 4).scale_down(0.109),
            Resource::new(1116, 0)
        );
        assert_eq!(
            Resource::new(10240, 4).scale_down(0.506),
            Resource::new(5181, 2)
        );
        assert_eq!(Resource::new(1000, 3).scale_up(0.5), Resource::new(500, 2));
        assert_eq!(Resource::UNBOUNDED.scale_down(0.5), Resource::UNBOUNDED);
    }

    #[test]
    fn display_matches_yarn() {
        assert_eq!(
            Resource::new(1024, 2).to_string(),
            "<memory:1024, vCores:2>"
        );
        assert_eq!(Resource::UNBOUNDED.to_string(), "<memory:∞, vCores:∞>");
    }

    proptest! {
        #[test]
        fn add_then_sub_restores(a in 0u64..1 << 40, b in 0u64..1 << 40, c in 0u64..1 << 40, d in 0u64..1 << 40) {
            let x = Resource::new(a, b);
            let y = Resource::new(c, d);
            prop_assert_eq!((x + y) - y, x);
            prop_assert!(x.fits_in(&(x + y)));
            prop_assert!(x.component_min(y).fits_in(&x));
        }
    }
}
