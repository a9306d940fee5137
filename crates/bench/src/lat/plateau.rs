//! Finding the plateaus of a latency-vs-size curve (L1, L2, L3, DRAM).
//!
//! Method: walk the points from the smallest size; a point joins the
//! current run while its latency is within `PLATEAU_TOL` of the run's
//! median, otherwise it starts a new run. Runs of two or more points are
//! plateaus; single points between them are transitions, and neighbouring
//! plateaus at the same latency (within the tolerance) are merged. Each is
//! named after the smallest cache level of the topology that holds its
//! largest working set, or `DRAM` past the last level; when two runs get
//! the same name, the longer one is the plateau.

use results::lat::Plateau;

/// Relative rise that ends a plateau.
pub const PLATEAU_TOL: f64 = 0.20;

/// `points` are `(size_bytes, latency_ns)` sorted by size; `caches` are
/// `(level, size_bytes)` of the measuring CPU's data caches, ascending.
pub fn plateaus(points: &[(u64, f64)], caches: &[(u8, u64)]) -> Vec<Plateau> {
    let mut runs: Vec<Vec<(u64, f64)>> = Vec::new();
    for &(size, ns) in points {
        if !ns.is_finite() {
            continue;
        }
        let join = runs.last().is_some_and(|run| {
            let m = median(run);
            (ns - m).abs() <= PLATEAU_TOL * m
        });
        if join {
            runs.last_mut().expect("checked").push((size, ns));
        } else {
            runs.push(vec![(size, ns)]);
        }
    }
    // Flat runs separated only by noisy points or a short transition, at
    // the same latency, are one plateau (e.g. an L3 that gives no hits:
    // its sizes run at DRAM latency and belong to the DRAM plateau).
    let mut merged: Vec<Vec<(u64, f64)>> = Vec::new();
    for r in runs {
        match merged.last_mut() {
            Some(m) if (median(&r) - median(m)).abs() <= PLATEAU_TOL * median(m) => m.extend(r),
            _ if r.len() < 2 => {} // a lone point: transition or noise
            _ => merged.push(r),
        }
    }
    let found: Vec<Plateau> = merged
        .into_iter()
        .map(|r| {
            let to = r[r.len() - 1].0;
            let level = caches.iter().find(|&&(_, c)| c >= to);
            Plateau {
                label: level.map_or_else(|| "DRAM".to_string(), |&(l, _)| format!("L{l}")),
                from_bytes: r[0].0,
                to_bytes: to,
                latency_ns: median(&r),
                cache_bytes: level.map(|&(_, c)| c),
                points: r.len(),
            }
        })
        .collect();
    // A flat stretch inside a transition can share its label with the real
    // plateau: keep, per label, the run with the most points (the later on
    // a tie), in size order.
    let mut keep: Vec<Plateau> = Vec::new();
    for p in found {
        match keep.iter_mut().find(|k| k.label == p.label) {
            Some(k) if p.points >= k.points => *k = p,
            Some(_) => {}
            None => keep.push(p),
        }
    }
    keep
}

fn median(run: &[(u64, f64)]) -> f64 {
    results::stats::median(&run.iter().map(|p| p.1).collect::<Vec<_>>()).unwrap_or(f64::NAN)
}

/// Sweep sizes: powers of two and the 1.5x points between them, from
/// `min` to `max` bytes inclusive (lmbench's log steps).
pub fn sweep_sizes(min: u64, max: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let mut p = min.next_power_of_two().max(1024);
    while p <= max {
        v.push(p);
        let mid = p + p / 2;
        if mid <= max {
            v.push(mid);
        }
        p *= 2;
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: u64 = 1024;
    const M: u64 = 1024 * 1024;

    #[test]
    fn four_plateaus_of_a_typical_curve() {
        let caches = [(1, 48 * K), (2, 2 * M), (3, 32 * M)];
        let mut pts = Vec::new();
        for s in sweep_sizes(4 * K, 1024 * M) {
            let ns = if s <= 48 * K {
                1.2
            } else if s <= 2 * M {
                3.5
            } else if s <= 32 * M {
                12.0
            } else if s < 128 * M {
                40.0 // transition
            } else {
                95.0
            };
            pts.push((s, ns + (s % 7) as f64 * 0.01));
        }
        let p = plateaus(&pts, &caches);
        let labels: Vec<&str> = p.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(labels, vec!["L1", "L2", "L3", "DRAM"]);
        assert!((p[3].latency_ns - 95.0).abs() < 0.1);
        assert_eq!(p[0].cache_bytes, Some(48 * K));
        assert_eq!(p[3].cache_bytes, None);
        assert_eq!(p[1].from_bytes, 64 * K);
        assert_eq!(p[1].to_bytes, 2 * M);
    }

    #[test]
    fn an_l3_without_hits_joins_the_dram_plateau() {
        // like a busy VM: past L2 everything costs DRAM latency
        let caches = [(1, 32 * K), (2, M), (3, 32 * M)];
        let pts: Vec<(u64, f64)> = sweep_sizes(4 * K, 128 * M)
            .into_iter()
            .enumerate()
            .map(|(i, s)| {
                let ns = if s <= 32 * K {
                    1.0
                } else if s <= 512 * K {
                    4.0
                } else if s <= M {
                    30.0
                } else if i == 22 {
                    400.0 // one sample hit by preemption splits the run
                } else {
                    180.0 + [0.0, 12.0, -10.0, 15.0][i % 4]
                };
                (s, ns)
            })
            .collect();
        let p = plateaus(&pts, &caches);
        let labels: Vec<&str> = p.iter().map(|p| p.label.as_str()).collect();
        assert_eq!(labels, vec!["L1", "L2", "DRAM"], "{p:?} from {pts:?}");
        assert_eq!(p[2].to_bytes, 128 * M);
    }

    #[test]
    fn a_flat_curve_is_one_plateau() {
        let pts: Vec<(u64, f64)> =
            sweep_sizes(4 * K, 64 * K).into_iter().map(|s| (s, 1.0)).collect();
        let p = plateaus(&pts, &[(1, 48 * K), (2, 2 * M)]);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].label, "L2"); // its largest set (64 KiB) is past L1
    }

    #[test]
    fn sizes_are_log_spaced() {
        assert_eq!(sweep_sizes(4 * K, 16 * K), vec![4 * K, 6 * K, 8 * K, 12 * K, 16 * K]);
    }
}
