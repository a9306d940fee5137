//! Sets of CPU or node ids, in the kernel's cpulist (`0-3,8`) and cpumask
//! (`00000000,0000ff0f`) syntaxes.

use std::collections::BTreeSet;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A sorted set of small non-negative ids (CPUs or NUMA nodes).
///
/// It serialises as a cpulist string (`"0-3,8"`), the form users read in
/// `lscpu` and `numactl --hardware`.
#[derive(Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct IdSet(BTreeSet<u32>);

/// A set of CPU ids.
pub type CpuSet = IdSet;
/// A set of NUMA node ids.
pub type NodeSet = IdSet;

/// The largest id a list may name; anything above is surely a typo and
/// would make bit masks enormous.
pub const MAX_ID: u32 = 1 << 16;

/// Why a cpulist or cpumask could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdSetError {
    #[error("'{0}' is not a number")]
    NotANumber(String),
    #[error("range '{0}' runs backwards")]
    Backwards(String),
    #[error("id {0} is larger than the maximum {MAX_ID}")]
    TooLarge(u64),
    #[error("stride in '{0}' must be a positive number")]
    BadStride(String),
    #[error("'{0}' is not a hexadecimal cpumask word")]
    BadMask(String),
}

impl IdSet {
    pub fn new() -> Self {
        IdSet(BTreeSet::new())
    }

    /// Parses the kernel's cpulist syntax: `0-3,8,10-14:2` (the `:stride`
    /// form appears in `isolcpus=`), with surrounding whitespace and an empty
    /// string (the empty set) accepted.
    pub fn parse_list(s: &str) -> Result<Self, IdSetError> {
        let mut set = BTreeSet::new();
        let s = s.trim();
        if s.is_empty() {
            return Ok(IdSet(set));
        }
        for part in s.split(',') {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            let (range, stride) = match part.split_once(':') {
                Some((r, st)) => {
                    let stride: u32 = st
                        .trim()
                        .parse()
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or_else(|| IdSetError::BadStride(part.to_string()))?;
                    (r, stride)
                }
                None => (part, 1),
            };
            match range.split_once('-') {
                Some((a, b)) => {
                    let a = parse_id(a)?;
                    let b = parse_id(b)?;
                    if b < a {
                        return Err(IdSetError::Backwards(part.to_string()));
                    }
                    set.extend((a..=b).step_by(stride as usize));
                }
                None => {
                    set.insert(parse_id(range)?);
                }
            }
        }
        Ok(IdSet(set))
    }

    /// Parses the kernel's cpumask syntax: comma-separated 32-bit hex words,
    /// most significant first (`/sys/devices/system/node/node0/cpumap`).
    pub fn parse_mask(s: &str) -> Result<Self, IdSetError> {
        let mut set = BTreeSet::new();
        let words: Vec<&str> = s.trim().split(',').collect();
        for (i, word) in words.iter().rev().enumerate() {
            let word = word.trim().trim_start_matches("0x");
            if word.is_empty() {
                continue;
            }
            let v =
                u64::from_str_radix(word, 16).map_err(|_| IdSetError::BadMask(word.to_string()))?;
            if v > u32::MAX as u64 {
                return Err(IdSetError::BadMask(word.to_string()));
            }
            for bit in 0..32 {
                if v & (1 << bit) != 0 {
                    let id = i as u64 * 32 + bit;
                    if id > MAX_ID as u64 {
                        return Err(IdSetError::TooLarge(id));
                    }
                    set.insert(id as u32);
                }
            }
        }
        Ok(IdSet(set))
    }

    pub fn insert(&mut self, id: u32) -> bool {
        self.0.insert(id)
    }
    pub fn remove(&mut self, id: u32) -> bool {
        self.0.remove(&id)
    }
    pub fn contains(&self, id: u32) -> bool {
        self.0.contains(&id)
    }
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = u32> + '_ {
        self.0.iter().copied()
    }
    pub fn first(&self) -> Option<u32> {
        self.0.first().copied()
    }
    pub fn last(&self) -> Option<u32> {
        self.0.last().copied()
    }
    pub fn union(&self, other: &IdSet) -> IdSet {
        IdSet(self.0.union(&other.0).copied().collect())
    }
    pub fn intersection(&self, other: &IdSet) -> IdSet {
        IdSet(self.0.intersection(&other.0).copied().collect())
    }
    pub fn difference(&self, other: &IdSet) -> IdSet {
        IdSet(self.0.difference(&other.0).copied().collect())
    }
    pub fn is_subset(&self, other: &IdSet) -> bool {
        self.0.is_subset(&other.0)
    }
    pub fn is_disjoint(&self, other: &IdSet) -> bool {
        self.0.is_disjoint(&other.0)
    }

    /// The canonical cpulist form: ascending, ranges of three or more ids
    /// collapsed (`0-3,8`), pairs written out (`4,5`) like the kernel does.
    pub fn to_list(&self) -> String {
        let mut out = String::new();
        let mut iter = self.0.iter().copied().peekable();
        while let Some(start) = iter.next() {
            let mut end = start;
            while iter.peek() == Some(&(end + 1)) {
                end = iter.next().unwrap_or(end);
            }
            if !out.is_empty() {
                out.push(',');
            }
            if end == start {
                out.push_str(&start.to_string());
            } else {
                out.push_str(&format!("{start}-{end}"));
            }
        }
        out
    }
}

fn parse_id(s: &str) -> Result<u32, IdSetError> {
    let t = s.trim();
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
        return Err(IdSetError::NotANumber(s.to_string()));
    }
    let v: u64 = t.parse().map_err(|_| IdSetError::TooLarge(u64::MAX))?;
    if v > MAX_ID as u64 {
        return Err(IdSetError::TooLarge(v));
    }
    Ok(v as u32)
}

impl FromStr for IdSet {
    type Err = IdSetError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        IdSet::parse_list(s)
    }
}

impl FromIterator<u32> for IdSet {
    fn from_iter<T: IntoIterator<Item = u32>>(iter: T) -> Self {
        IdSet(iter.into_iter().collect())
    }
}

impl fmt::Display for IdSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_list())
    }
}

impl fmt::Debug for IdSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "IdSet({})", self.to_list())
    }
}

impl Serialize for IdSet {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_list())
    }
}

impl<'de> Deserialize<'de> for IdSet {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        IdSet::parse_list(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn parses_ranges_singles_and_strides() {
        let s = IdSet::parse_list("0-3,8, 10-14:2\n").unwrap();
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![0, 1, 2, 3, 8, 10, 12, 14]);
        assert_eq!(s.to_list(), "0-3,8,10,12,14");
        assert!(IdSet::parse_list("").unwrap().is_empty());
        assert!(IdSet::parse_list("\n").unwrap().is_empty());
    }

    #[test]
    fn pairs_are_written_out_and_runs_collapsed() {
        let s: IdSet = [4, 5, 7, 8, 9].into_iter().collect();
        assert_eq!(s.to_list(), "4-5,7-9");
        let s: IdSet = [1].into_iter().collect();
        assert_eq!(s.to_list(), "1");
    }

    #[test]
    fn rejects_malformed_lists() {
        assert_eq!(IdSet::parse_list("3-1"), Err(IdSetError::Backwards("3-1".into())));
        assert!(matches!(IdSet::parse_list("a"), Err(IdSetError::NotANumber(_))));
        assert!(matches!(IdSet::parse_list("1-"), Err(IdSetError::NotANumber(_))));
        assert!(matches!(IdSet::parse_list("-1"), Err(IdSetError::NotANumber(_))));
        assert!(matches!(IdSet::parse_list("0-4:0"), Err(IdSetError::BadStride(_))));
        assert!(matches!(IdSet::parse_list("99999999999"), Err(IdSetError::TooLarge(_))));
    }

    #[test]
    fn parses_masks_most_significant_word_first() {
        let s = IdSet::parse_mask("00000000,0000ff0f\n").unwrap();
        assert_eq!(s.to_list(), "0-3,8-15");
        let s = IdSet::parse_mask("00000001,00000000").unwrap();
        assert_eq!(s.to_list(), "32");
        assert!(IdSet::parse_mask("zz").is_err());
        assert!(IdSet::parse_mask("").unwrap().is_empty());
    }

    #[test]
    fn serialises_as_a_cpulist_string() {
        let s = IdSet::parse_list("0-2,5").unwrap();
        assert_eq!(serde_json::to_string(&s).unwrap(), "\"0-2,5\"");
        let back: IdSet = serde_json::from_str("\"0-2,5\"").unwrap();
        assert_eq!(back, s);
    }

    proptest! {
        #[test]
        fn list_round_trips(ids in proptest::collection::btree_set(0u32..5000, 0..200)) {
            let set: IdSet = ids.iter().copied().collect();
            let text = set.to_list();
            prop_assert_eq!(IdSet::parse_list(&text).unwrap(), set);
        }

        #[test]
        fn never_panics_on_any_input(s in "\\PC*") {
            let _ = IdSet::parse_list(&s);
            let _ = IdSet::parse_mask(&s);
        }

        #[test]
        fn never_panics_on_list_like_input(s in "[0-9,:\\- ]{0,40}") {
            if let Ok(set) = IdSet::parse_list(&s) {
                prop_assert_eq!(IdSet::parse_list(&set.to_list()).unwrap(), set);
            }
        }
    }
}
