//! Placement verification: ask the kernel where pages really are
//! (`move_pages(2)` with a null node list) and judge the answer.

use std::collections::BTreeMap;
use std::os::raw::{c_int, c_void};

use serde::{Deserialize, Serialize};
use topo::NodeSet;

use crate::error::{PlaceError, Result};
use crate::sys;

/// The default share of pages that must be where they were asked.
pub const DEFAULT_THRESHOLD: f64 = 0.99;

/// Where the sampled pages of a range are.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PageNodes {
    /// Base pages in the range.
    pub total_pages: u64,
    /// Pages asked about (all of them, or an even sample).
    pub sampled_pages: u64,
    /// Sampled pages per node.
    pub per_node: BTreeMap<u32, u64>,
    /// Sampled pages not present (never touched, or swapped out): -ENOENT.
    pub not_present: u64,
    /// Sampled pages the kernel would not report (-EFAULT: e.g. the shared
    /// zero page after a read-only touch, or an unmapped address).
    pub faulted: u64,
    /// Other negative statuses, by errno.
    pub other_errors: BTreeMap<i32, u64>,
}

impl PageNodes {
    /// Share of sampled pages on nodes of `set` (pages not present count as
    /// not on the set).
    pub fn fraction_on(&self, set: &NodeSet) -> f64 {
        if self.sampled_pages == 0 {
            return 0.0;
        }
        let on: u64 = self.per_node.iter().filter(|(n, _)| set.contains(**n)).map(|(_, c)| c).sum();
        on as f64 / self.sampled_pages as f64
    }

    /// Share of sampled pages on each node.
    pub fn fractions(&self) -> BTreeMap<u32, f64> {
        let d = self.sampled_pages.max(1) as f64;
        self.per_node.iter().map(|(&n, &c)| (n, c as f64 / d)).collect()
    }

    /// Sampled pages that are present on some node.
    pub fn present(&self) -> u64 {
        self.per_node.values().sum()
    }

    fn record(&mut self, status: c_int) {
        if status >= 0 {
            *self.per_node.entry(status as u32).or_insert(0) += 1;
        } else if status == -libc::ENOENT {
            self.not_present += 1;
        } else if status == -libc::EFAULT {
            self.faulted += 1;
        } else {
            *self.other_errors.entry(-status).or_insert(0) += 1;
        }
    }
}

/// Asks the kernel which node holds each page of `ptr..ptr+len`.
///
/// When the range has more than `max_samples` base pages, one page is
/// picked at a pseudo-random offset inside each of `max_samples` equal
/// strata (deterministic seed), so that a regular stride cannot alias with
/// an interleave pattern. `max_samples == 0` means every page.
pub fn page_nodes(ptr: *const u8, len: usize, max_samples: usize) -> Result<PageNodes> {
    let page = sys::page_size();
    let start = (ptr as usize) / page * page;
    let end = (ptr as usize).saturating_add(len);
    let total = (end - start).div_ceil(page);
    let mut out = PageNodes { total_pages: total as u64, ..Default::default() };
    if total == 0 {
        return Ok(out);
    }
    let indices = sample_indices(total, max_samples);
    const CHUNK: usize = 4096;
    let mut addrs: Vec<*mut c_void> = Vec::with_capacity(CHUNK.min(indices.len()));
    let mut status: Vec<c_int> = Vec::with_capacity(CHUNK.min(indices.len()));
    for chunk in indices.chunks(CHUNK) {
        addrs.clear();
        addrs.extend(chunk.iter().map(|&i| (start + i * page) as *mut c_void));
        status.clear();
        status.resize(chunk.len(), 0);
        if sys::query_pages(&addrs, &mut status) < 0 {
            return Err(PlaceError::last_os(
                "move_pages",
                format!("query {} pages at {:p}", chunk.len(), ptr),
            ));
        }
        for &s in &status {
            out.record(s);
        }
        out.sampled_pages += chunk.len() as u64;
    }
    Ok(out)
}

/// Page indices to ask about: all of `0..total` when `max == 0` or
/// `total <= max`, else one per stratum.
fn sample_indices(total: usize, max: usize) -> Vec<usize> {
    if max == 0 || total <= max {
        return (0..total).collect();
    }
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..max)
        .map(|k| {
            let lo = k * total / max;
            let hi = ((k + 1) * total / max).max(lo + 1);
            lo + (splitmix64(&mut state) % (hi - lo) as u64) as usize
        })
        .collect()
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

use results::placement::{PlacementCheck, SpreadCheck};

/// Checks that at least `threshold` of the sampled pages are on `expected`.
pub fn check(pages: &PageNodes, expected: &NodeSet, threshold: f64) -> PlacementCheck {
    let fraction = pages.fraction_on(expected);
    PlacementCheck {
        expected: expected.clone(),
        fraction,
        per_node: pages.fractions(),
        sampled_pages: pages.sampled_pages,
        total_pages: pages.total_pages,
        not_present_pages: pages.not_present,
        threshold,
        ok: pages.sampled_pages > 0 && fraction >= threshold,
        spread: None,
    }
}

/// Checks an interleave: pages on `expected` (as in [`check`]) and each
/// node's share within `tolerance` of `1 / expected.len()`.
pub fn check_interleave(
    pages: &PageNodes,
    expected: &NodeSet,
    threshold: f64,
    tolerance: f64,
) -> PlacementCheck {
    let n = expected.len().max(1) as f64;
    let weights = expected.iter().map(|id| (id, 1.0 / n)).collect();
    check_spread(pages, &weights, threshold, tolerance)
}

/// Checks a weighted spread: `weights` maps each expected node to a weight
/// (any positive scale, e.g. the weighted-interleave sysfs weights); each
/// node's share must be within `tolerance` of its normalised weight.
pub fn check_spread(
    pages: &PageNodes,
    weights: &BTreeMap<u32, f64>,
    threshold: f64,
    tolerance: f64,
) -> PlacementCheck {
    let expected: NodeSet = weights.keys().copied().collect();
    let mut c = check(pages, &expected, threshold);
    let sum: f64 = weights.values().sum();
    let expected_share: BTreeMap<u32, f64> =
        weights.iter().map(|(&n, &w)| (n, if sum > 0.0 { w / sum } else { 0.0 })).collect();
    let max_deviation = expected_share
        .iter()
        .map(|(n, share)| (c.per_node.get(n).copied().unwrap_or(0.0) - share).abs())
        .fold(0.0, f64::max);
    let ok = c.ok && max_deviation <= tolerance;
    c.spread = Some(SpreadCheck { expected_share, max_deviation, tolerance, ok });
    c.ok = ok;
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffer::Buffer;
    use crate::policy::{Existing, MemPolicy};
    use results::pages::PageKind;

    fn nodes(per: &[(u32, u64)], not_present: u64) -> PageNodes {
        let per_node: BTreeMap<u32, u64> = per.iter().copied().collect();
        let sampled = per_node.values().sum::<u64>() + not_present;
        PageNodes {
            total_pages: sampled,
            sampled_pages: sampled,
            per_node,
            not_present,
            ..Default::default()
        }
    }

    fn set(s: &str) -> NodeSet {
        NodeSet::parse_list(s).unwrap()
    }

    #[test]
    fn fractions_and_threshold() {
        let p = nodes(&[(0, 990), (1, 10)], 0);
        let c = check(&p, &set("0"), DEFAULT_THRESHOLD);
        assert!(c.ok);
        assert!((c.fraction - 0.99).abs() < 1e-12);
        assert!((c.per_node[&1] - 0.01).abs() < 1e-12);
        let p = nodes(&[(0, 989), (1, 11)], 0);
        assert!(!check(&p, &set("0"), DEFAULT_THRESHOLD).ok);
        assert!(check(&p, &set("0-1"), DEFAULT_THRESHOLD).ok);
        // Pages not present count against the check.
        let p = nodes(&[(0, 900)], 100);
        let c = check(&p, &set("0"), DEFAULT_THRESHOLD);
        assert!(!c.ok && (c.fraction - 0.9).abs() < 1e-12 && c.not_present_pages == 100);
        // Nothing sampled is never ok.
        assert!(!check(&PageNodes::default(), &set("0"), 0.0).ok);
    }

    #[test]
    fn interleave_spread_is_judged() {
        let even = nodes(&[(0, 500), (1, 500)], 0);
        assert!(check_interleave(&even, &set("0-1"), 0.99, 0.05).ok);
        let skew = nodes(&[(0, 700), (1, 300)], 0);
        let c = check_interleave(&skew, &set("0-1"), 0.99, 0.05);
        assert!(!c.ok);
        let s = c.spread.unwrap();
        assert!((s.max_deviation - 0.2).abs() < 1e-12 && !s.ok);
        // Weighted 3:1 expects 75/25.
        let w: BTreeMap<u32, f64> = [(0, 3.0), (1, 1.0)].into_iter().collect();
        let p = nodes(&[(0, 750), (1, 250)], 0);
        assert!(check_spread(&p, &w, 0.99, 0.02).ok);
        assert!(!check_spread(&even, &w, 0.99, 0.02).ok);
    }

    #[test]
    fn sampling_is_stratified_and_in_range() {
        assert_eq!(sample_indices(5, 0), vec![0, 1, 2, 3, 4]);
        assert_eq!(sample_indices(5, 10), vec![0, 1, 2, 3, 4]);
        let s = sample_indices(1000, 100);
        assert_eq!(s.len(), 100);
        for (k, &i) in s.iter().enumerate() {
            assert!(i >= k * 10 && i < (k + 1) * 10, "{k} {i}");
        }
        // Not a fixed stride: both parities appear, so a 2-node interleave
        // is not aliased onto one node.
        assert!(s.iter().any(|i| i % 2 == 0) && s.iter().any(|i| i % 2 == 1));
    }

    #[test]
    fn untouched_pages_are_not_present_and_touched_ones_are_on_node_zero() {
        let mut b = Buffer::alloc(64 * sys::page_size(), PageKind::NoThp).unwrap();
        let p = b.page_nodes(0).unwrap();
        assert_eq!((p.sampled_pages, p.not_present, p.present()), (64, 64, 0));
        b.touch();
        let p = b.page_nodes(16).unwrap();
        assert_eq!((p.sampled_pages, p.present()), (16, 16));
        assert!(check(&p, &set("0"), DEFAULT_THRESHOLD).ok);
        assert!(!check(&p, &set("1"), DEFAULT_THRESHOLD).ok);
    }

    #[test]
    fn bound_and_interleaved_buffers_land_on_node_zero() {
        for policy in [MemPolicy::Bind(set("0")), MemPolicy::Interleave(set("0"))] {
            let mut b = Buffer::alloc(256 * sys::page_size(), PageKind::NoThp).unwrap();
            b.bind(&policy).unwrap();
            assert_eq!(crate::policy::policy_at(b.as_ptr()).unwrap(), policy);
            b.touch();
            let c = check_interleave(&b.page_nodes(0).unwrap(), &set("0"), DEFAULT_THRESHOLD, 0.01);
            assert!(c.ok, "{policy}: {c:?}");
            assert_eq!(c.sampled_pages, 256);
        }
    }

    /// Every policy a measurement sets is the one the kernel reports for
    /// every page of the buffer (`get_mempolicy(MPOL_F_ADDR)`), first and
    /// last byte alike: on a one-node machine this, not where the pages
    /// land, tells a bound buffer from an unbound one.
    #[test]
    fn every_policy_is_read_back_over_the_whole_buffer() {
        let root = topo::SysRoot::live();
        let support = crate::policy::policy_support(&root);
        let mut policies = vec![
            MemPolicy::Bind(set("0")),
            MemPolicy::Interleave(set("0")),
            MemPolicy::Preferred(0),
            MemPolicy::Local,
        ];
        if support.weighted_interleave {
            policies.push(MemPolicy::WeightedInterleave(set("0")));
        }
        if support.preferred_many {
            policies.push(MemPolicy::PreferredMany(set("0")));
        }
        let page = sys::page_size();
        for policy in policies {
            // 3 pages and a bit: the mapping is 4 pages
            let b = Buffer::alloc(3 * page + 100, PageKind::NoThp).unwrap();
            assert_eq!(crate::policy::policy_at(b.as_ptr()).unwrap(), MemPolicy::Default);
            b.bind(&policy).unwrap();
            for off in [0, page, 3 * page + 99, 4 * page - 1] {
                let at = b.as_ptr().wrapping_add(off);
                assert_eq!(crate::policy::policy_at(at).unwrap(), policy, "{policy} at +{off}");
            }
            // and back to no policy of its own
            b.bind(&MemPolicy::Default).unwrap();
            assert_eq!(crate::policy::policy_at(b.as_ptr()).unwrap(), MemPolicy::Default);
        }
    }

    #[test]
    fn a_range_policy_covers_its_pages_and_no_other() {
        let page = sys::page_size();
        let b = Buffer::alloc(4 * page, PageKind::NoThp).unwrap();
        let mid = b.as_ptr().wrapping_add(page) as *mut u8;
        // SAFETY: pages 1 and 2 of our own buffer.
        unsafe {
            crate::policy::bind_range(mid, 2 * page, &MemPolicy::Bind(set("0")), Existing::Leave)
        }
        .unwrap();
        let at = |k: usize| crate::policy::policy_at(b.as_ptr().wrapping_add(k * page)).unwrap();
        assert_eq!(
            [at(0), at(1), at(2), at(3)],
            [
                MemPolicy::Default,
                MemPolicy::Bind(set("0")),
                MemPolicy::Bind(set("0")),
                MemPolicy::Default
            ]
        );
        // a start inside a page is refused before the system call
        // SAFETY: inside our own buffer (refused anyway).
        let e = unsafe {
            crate::policy::bind_range(mid.wrapping_add(8), page, &MemPolicy::Local, Existing::Move)
        }
        .unwrap_err();
        assert!(matches!(e, PlaceError::InvalidArgument(_)), "{e}");
    }

    #[test]
    fn a_policy_the_kernel_refuses_is_an_error_never_a_silent_miss() {
        let b = Buffer::alloc(4 * sys::page_size(), PageKind::NoThp).unwrap();
        let e = b.bind(&MemPolicy::Bind(set("1000"))).unwrap_err();
        assert!(e.to_string().contains("mbind"), "{e}");
        assert_eq!(crate::policy::policy_at(b.as_ptr()).unwrap(), MemPolicy::Default);
        // an address nothing is mapped at has no policy to read
        assert!(crate::policy::policy_at(8 as *const u8).is_err());
    }

    #[test]
    fn every_status_move_pages_gives_is_counted_where_it_belongs() {
        let mut p = PageNodes::default();
        for s in
            [0, 0, 3, -libc::ENOENT, -libc::EFAULT, -libc::EACCES, -libc::EACCES, -libc::ENOMEM]
        {
            p.record(s);
        }
        assert_eq!(p.per_node, [(0, 2), (3, 1)].into_iter().collect());
        assert_eq!((p.not_present, p.faulted), (1, 1));
        assert_eq!(
            p.other_errors,
            [(libc::EACCES, 2), (libc::ENOMEM, 1)].into_iter().collect(),
            "by errno"
        );
    }

    #[test]
    fn a_spread_of_zero_weights_expects_no_share() {
        let w: BTreeMap<u32, f64> = [(0, 0.0)].into_iter().collect();
        let c = check_spread(&nodes(&[(0, 4)], 0), &w, 0.99, 0.05);
        let s = c.spread.unwrap();
        assert_eq!(s.expected_share[&0], 0.0);
        assert_eq!(s.max_deviation, 1.0);
        assert!(!c.ok);
    }

    #[test]
    fn shares_are_counted_on_the_sampled_pages() {
        let p = nodes(&[(0, 3), (2, 1)], 4);
        assert_eq!(p.present(), 4);
        assert_eq!(p.fraction_on(&set("0")), 0.375);
        assert_eq!(p.fraction_on(&set("0,2")), 0.5);
        assert_eq!(p.fraction_on(&set("1")), 0.0);
        assert_eq!(p.fractions(), [(0, 0.375), (2, 0.125)].into_iter().collect());
        assert_eq!(PageNodes::default().fraction_on(&set("0")), 0.0);
        // the threshold is a floor: reaching it is enough
        let c = check(&nodes(&[(0, 3), (1, 1)], 0), &set("0"), 0.75);
        assert!(c.ok && c.fraction == 0.75);
        assert!(!check(&nodes(&[(0, 3), (1, 1)], 0), &set("0"), 0.76).ok);
        // a spread exactly at its tolerance passes
        let w: BTreeMap<u32, f64> = [(0, 1.0), (1, 1.0)].into_iter().collect();
        let c = check_spread(&nodes(&[(0, 3), (1, 1)], 0), &w, 0.99, 0.25);
        assert!(c.ok, "{c:?}");
        assert_eq!(c.spread.as_ref().unwrap().max_deviation, 0.25);
        assert!(!check_spread(&nodes(&[(0, 3), (1, 1)], 0), &w, 0.99, 0.24).ok);
    }

    #[test]
    fn weighted_interleave_and_preferred_many_work_or_say_why_not() {
        let root = topo::SysRoot::live();
        let support = crate::policy::policy_support(&root);
        for (policy, supported) in [
            (MemPolicy::WeightedInterleave(set("0")), support.weighted_interleave),
            (MemPolicy::PreferredMany(set("0")), support.preferred_many),
        ] {
            let mut b = Buffer::alloc(64 * sys::page_size(), PageKind::NoThp).unwrap();
            match b.bind(&policy) {
                Ok(()) => {
                    assert!(supported, "{policy} worked but was judged unsupported");
                    b.touch();
                    let c = check(&b.page_nodes(0).unwrap(), &set("0"), DEFAULT_THRESHOLD);
                    assert!(c.ok && c.sampled_pages == 64, "{policy}: {c:?}");
                }
                Err(e) => {
                    assert!(!supported, "{policy}: {e}");
                    assert!(matches!(e, PlaceError::Unsupported { .. }), "{e}");
                }
            }
        }
    }

    #[test]
    fn weights_of_weighted_interleave_are_read_when_present() {
        let root = topo::SysRoot::live();
        match crate::policy::weighted_interleave_weights(&root).unwrap() {
            Some(w) => assert!(w.get(&0).is_some_and(|&w| w >= 1), "{w:?}"),
            None => assert!(!crate::policy::supports_weighted_interleave(&root)),
        }
    }

    #[test]
    fn moving_existing_pages_with_mbind_keeps_them_on_the_set() {
        // Touch first under the default policy, then bind with MOVE|STRICT:
        // pages already on node 0 satisfy the policy, nothing fails.
        let mut b = Buffer::alloc(32 * sys::page_size(), PageKind::NoThp).unwrap();
        b.touch();
        b.bind(&MemPolicy::Bind(set("0"))).unwrap();
        assert!(check(&b.page_nodes(0).unwrap(), &set("0"), 1.0).ok);
    }

    #[test]
    fn a_read_only_touch_is_reported_separately_from_present_pages() {
        // Reading untouched anonymous memory maps the shared zero page,
        // which move_pages does not count as a page on a node.
        let b = Buffer::alloc(16 * sys::page_size(), PageKind::NoThp).unwrap();
        let sum: u64 = b.as_slice::<u64>().iter().step_by(512).copied().sum();
        assert_eq!(sum, 0);
        let p = b.page_nodes(0).unwrap();
        assert_eq!(p.present(), 0, "{p:?}");
        assert_eq!(p.faulted + p.not_present, 16, "{p:?}");
        assert!(!check(&p, &set("0"), DEFAULT_THRESHOLD).ok);
    }
}
