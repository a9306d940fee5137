//! A/B harness for the x86-64 bandwidth loops (a development tool, not
//! part of numaprobe): runs loop variants over the same arrays, one pass
//! each, alternated within each round (the order reversed every other
//! round), and prints each variant's median GB/s and the median over rounds
//! of its ratio to the first variant. It is how the loop shape of
//! `arch::x86_64` was chosen (docs/bw.md, "Loop shape").
//!
//! ```text
//! cargo build --release -p kernels --example bw_ab
//! NOWARM=1 chrt -f 50 target/release/examples/bw_ab KERNEL PAGES MIB ROUNDS REPS THREADS VARIANTS
//! ```
//! KERNEL: `triad`, `copy` or `store`; PAGES: `4k` or `thp`; MIB per array;
//! REPS timed passes per variant and round (their median, or their best
//! with `BEST=1`); `NOWARM=1` skips the untimed pass before each variant.
//! VARIANTS, comma-separated, each optionally `+stagK` (array j starts
//! j*K bytes later): `cur` (the crate's AVX2 loop), `stagK` (the same),
//! `lk` (likwid-bench's loop shape: aligned loads, one vector per step for
//! triad, four loads then four NT stores for copy), `lku` (that with
//! unaligned loads), `lkh` (`lku` with the crate's scalar head and tail),
//! `gr` (triad: four vectors of each source loaded, then four stores),
//! `pfD` (a prefetcht0 `D` bytes ahead on every line of the load streams),
//! `pgD` (one prefetcht0 `D` bytes ahead per 4 KiB of each load stream).
//! Every variant stores with non-temporal stores.

#[cfg(target_arch = "x86_64")]
mod imp {
    use core::arch::x86_64::*;
    use std::sync::{Arc, Barrier};
    use std::time::Instant;

    extern "C" {
        fn mmap(a: *mut u8, l: usize, p: i32, f: i32, fd: i32, o: i64) -> *mut u8;
        fn madvise(a: *mut u8, l: usize, adv: i32) -> i32;
        fn sched_setaffinity(pid: i32, len: usize, mask: *const u64) -> i32;
    }

    fn alloc(bytes: usize, thp: bool) -> *mut f64 {
        let mib2 = 2 << 20;
        let over = bytes + mib2;
        // SAFETY: anonymous mapping, checked below.
        let p = unsafe { mmap(std::ptr::null_mut(), over, 3, 0x22, -1, 0) };
        assert!(p as isize != -1, "mmap failed");
        let start = (p as usize).next_multiple_of(mib2) as *mut u8;
        // SAFETY: advice on our own mapping.
        unsafe { madvise(start, bytes, if thp { 14 } else { 15 }) };
        start as *mut f64
    }

    fn pin(cpu: usize) {
        let mask: u64 = 1 << cpu;
        // SAFETY: plain syscall on this thread.
        unsafe { sched_setaffinity(0, 8, &mask) };
    }

    #[derive(Clone, Copy)]
    enum V {
        Cur,
        Pf(usize),
        Pg(usize),
        Lk,
        Lku,
        Lkh,
        Gr,
    }

    /// `LOOP[+stagK]`: the loop and the stagger of array j (j*K bytes).
    fn parse(v: &str) -> (V, usize) {
        let (l, st) = match v.split_once("+stag") {
            Some((l, k)) => (l, k.parse().unwrap()),
            None => (v, 0),
        };
        if let Some(k) = l.strip_prefix("stag") {
            return (V::Cur, k.parse().unwrap());
        }
        let v = if l == "cur" {
            V::Cur
        } else if l == "lk" {
            V::Lk
        } else if l == "lku" {
            V::Lku
        } else if l == "lkh" {
            V::Lkh
        } else if l == "gr" {
            V::Gr
        } else if let Some(d) = l.strip_prefix("pg") {
            V::Pg(d.parse().unwrap())
        } else if let Some(d) = l.strip_prefix("pf") {
            V::Pf(d.parse().unwrap())
        } else {
            panic!("variant {v}")
        };
        (v, st)
    }

    #[target_feature(enable = "avx2")]
    unsafe fn triad_pf(dst: *mut f64, a: *const f64, b: *const f64, n: usize, d: usize) {
        let vs = _mm256_set1_pd(3.0);
        let de = d / 8;
        let mut i = 0;
        while i + 16 <= n {
            _mm_prefetch::<_MM_HINT_T0>(a.add(i + de) as *const i8);
            _mm_prefetch::<_MM_HINT_T0>(a.add(i + de + 8) as *const i8);
            _mm_prefetch::<_MM_HINT_T0>(b.add(i + de) as *const i8);
            _mm_prefetch::<_MM_HINT_T0>(b.add(i + de + 8) as *const i8);
            for k in 0..4 {
                let j = i + 4 * k;
                let v = _mm256_add_pd(
                    _mm256_load_pd(a.add(j)),
                    _mm256_mul_pd(vs, _mm256_load_pd(b.add(j))),
                );
                _mm256_stream_pd(dst.add(j), v);
            }
            i += 16;
        }
        _mm_sfence();
    }

    /// Once per 4 KiB of each load stream, a prefetch `d` bytes ahead (the
    /// next page's first line): its TLB walk and first miss start early.
    #[target_feature(enable = "avx2")]
    unsafe fn triad_pg(dst: *mut f64, a: *const f64, b: *const f64, n: usize, d: usize) {
        let vs = _mm256_set1_pd(3.0);
        let de = d / 8;
        let mut i = 0;
        while i + 512 <= n {
            _mm_prefetch::<_MM_HINT_T0>(a.add(i + de) as *const i8);
            _mm_prefetch::<_MM_HINT_T0>(b.add(i + de) as *const i8);
            let end = i + 512;
            while i < end {
                for k in 0..4 {
                    let j = i + 4 * k;
                    let v = _mm256_add_pd(
                        _mm256_load_pd(a.add(j)),
                        _mm256_mul_pd(vs, _mm256_load_pd(b.add(j))),
                    );
                    _mm256_stream_pd(dst.add(j), v);
                }
                i += 16;
            }
        }
        _mm_sfence();
    }

    #[target_feature(enable = "avx2")]
    unsafe fn copy_pg(dst: *mut f64, a: *const f64, n: usize, d: usize) {
        let de = d / 8;
        let mut i = 0;
        while i + 512 <= n {
            _mm_prefetch::<_MM_HINT_T0>(a.add(i + de) as *const i8);
            let end = i + 512;
            while i < end {
                for k in 0..4 {
                    let j = i + 4 * k;
                    _mm256_stream_pd(dst.add(j), _mm256_load_pd(a.add(j)));
                }
                i += 16;
            }
        }
        _mm_sfence();
    }

    /// Four vectors loaded from each source, then computed, then four
    /// stores.
    #[target_feature(enable = "avx2")]
    unsafe fn triad_gr(dst: *mut f64, a: *const f64, b: *const f64, n: usize) {
        let vs = _mm256_set1_pd(3.0);
        let mut i = 0;
        while i + 16 <= n {
            let a0 = _mm256_load_pd(a.add(i));
            let a1 = _mm256_load_pd(a.add(i + 4));
            let a2 = _mm256_load_pd(a.add(i + 8));
            let a3 = _mm256_load_pd(a.add(i + 12));
            let b0 = _mm256_load_pd(b.add(i));
            let b1 = _mm256_load_pd(b.add(i + 4));
            let b2 = _mm256_load_pd(b.add(i + 8));
            let b3 = _mm256_load_pd(b.add(i + 12));
            _mm256_stream_pd(dst.add(i), _mm256_add_pd(a0, _mm256_mul_pd(vs, b0)));
            _mm256_stream_pd(dst.add(i + 4), _mm256_add_pd(a1, _mm256_mul_pd(vs, b1)));
            _mm256_stream_pd(dst.add(i + 8), _mm256_add_pd(a2, _mm256_mul_pd(vs, b2)));
            _mm256_stream_pd(dst.add(i + 12), _mm256_add_pd(a3, _mm256_mul_pd(vs, b3)));
            i += 16;
        }
        _mm_sfence();
    }

    #[target_feature(enable = "avx2")]
    unsafe fn triad_lk(dst: *mut f64, a: *const f64, b: *const f64, n: usize) {
        let vs = _mm256_set1_pd(3.0);
        let mut i = 0;
        while i + 4 <= n {
            let v = _mm256_add_pd(
                _mm256_load_pd(a.add(i)),
                _mm256_mul_pd(vs, _mm256_load_pd(b.add(i))),
            );
            _mm256_stream_pd(dst.add(i), v);
            i += 4;
        }
        _mm_sfence();
    }

    #[target_feature(enable = "avx2")]
    unsafe fn copy_pf(dst: *mut f64, a: *const f64, n: usize, d: usize) {
        let de = d / 8;
        let mut i = 0;
        while i + 16 <= n {
            _mm_prefetch::<_MM_HINT_T0>(a.add(i + de) as *const i8);
            _mm_prefetch::<_MM_HINT_T0>(a.add(i + de + 8) as *const i8);
            for k in 0..4 {
                let j = i + 4 * k;
                _mm256_stream_pd(dst.add(j), _mm256_load_pd(a.add(j)));
            }
            i += 16;
        }
        _mm_sfence();
    }

    #[target_feature(enable = "avx2")]
    unsafe fn copy_lku(dst: *mut f64, a: *const f64, n: usize) {
        let mut i = 0;
        while i + 16 <= n {
            let v0 = _mm256_loadu_pd(a.add(i));
            let v1 = _mm256_loadu_pd(a.add(i + 4));
            let v2 = _mm256_loadu_pd(a.add(i + 8));
            let v3 = _mm256_loadu_pd(a.add(i + 12));
            _mm256_stream_pd(dst.add(i), v0);
            _mm256_stream_pd(dst.add(i + 4), v1);
            _mm256_stream_pd(dst.add(i + 8), v2);
            _mm256_stream_pd(dst.add(i + 12), v3);
            i += 16;
        }
        _mm_sfence();
    }

    /// lku with the crate's head, both store kinds and tail.
    #[target_feature(enable = "avx2")]
    unsafe fn copy_lkh(dst: *mut f64, a: *const f64, n: usize, nt: bool) {
        let mis = (dst as usize) % 64;
        let head = if mis == 0 { 0 } else { ((64 - mis) / 8).min(n) };
        for i in 0..head {
            *dst.add(i) = *a.add(i);
        }
        let mut i = head;
        if nt {
            while i + 16 <= n {
                let v0 = _mm256_loadu_pd(a.add(i));
                let v1 = _mm256_loadu_pd(a.add(i + 4));
                let v2 = _mm256_loadu_pd(a.add(i + 8));
                let v3 = _mm256_loadu_pd(a.add(i + 12));
                _mm256_stream_pd(dst.add(i), v0);
                _mm256_stream_pd(dst.add(i + 4), v1);
                _mm256_stream_pd(dst.add(i + 8), v2);
                _mm256_stream_pd(dst.add(i + 12), v3);
                i += 16;
            }
            _mm_sfence();
        } else {
            while i + 16 <= n {
                let v0 = _mm256_loadu_pd(a.add(i));
                let v1 = _mm256_loadu_pd(a.add(i + 4));
                let v2 = _mm256_loadu_pd(a.add(i + 8));
                let v3 = _mm256_loadu_pd(a.add(i + 12));
                _mm256_store_pd(dst.add(i), v0);
                _mm256_store_pd(dst.add(i + 4), v1);
                _mm256_store_pd(dst.add(i + 8), v2);
                _mm256_store_pd(dst.add(i + 12), v3);
                i += 16;
            }
        }
        for j in i..n {
            *dst.add(j) = *a.add(j);
        }
    }

    #[target_feature(enable = "avx2")]
    unsafe fn copy_lk(dst: *mut f64, a: *const f64, n: usize) {
        let mut i = 0;
        while i + 16 <= n {
            let v0 = _mm256_load_pd(a.add(i));
            let v1 = _mm256_load_pd(a.add(i + 4));
            let v2 = _mm256_load_pd(a.add(i + 8));
            let v3 = _mm256_load_pd(a.add(i + 12));
            _mm256_stream_pd(dst.add(i), v0);
            _mm256_stream_pd(dst.add(i + 4), v1);
            _mm256_stream_pd(dst.add(i + 8), v2);
            _mm256_stream_pd(dst.add(i + 12), v3);
            i += 16;
        }
        _mm_sfence();
    }

    /// One pass of `kernel` with variant `v` over elements [lo, hi) of the
    /// arrays (dst = arrays[0]).
    unsafe fn pass(kernel: &str, (v, st): (V, usize), arrs: &[*mut f64; 3], lo: usize, hi: usize) {
        let ops = kernels::select(Some(kernels::Isa::Avx2)).unwrap();
        let stag = st / 8;
        let p = |j: usize| arrs[j].add(j * stag + lo);
        let n = hi - lo;
        let sl = |j: usize| std::slice::from_raw_parts_mut(p(j), n);
        match (kernel, v) {
            ("triad", V::Cur) => ops.triad(sl(0), sl(1), sl(2), 3.0, true),
            ("triad", V::Pf(d)) => triad_pf(p(0), p(1), p(2), n, d),
            ("triad", V::Pg(d)) => triad_pg(p(0), p(1), p(2), n, d),
            ("copy", V::Pg(d)) => copy_pg(p(0), p(1), n, d),
            ("triad", V::Gr) => triad_gr(p(0), p(1), p(2), n),
            ("copy", V::Gr) => copy_lk(p(0), p(1), n),
            ("triad", V::Lk) => triad_lk(p(0), p(1), p(2), n),
            ("copy", V::Cur) => ops.copy(sl(0), sl(1), true),
            ("copy", V::Pf(d)) => copy_pf(p(0), p(1), n, d),
            ("copy", V::Lkh) => copy_lkh(p(0), p(1), n, true),
            ("copy", V::Lku) => copy_lku(p(0), p(1), n),
            ("copy", V::Lk) => copy_lk(p(0), p(1), n),
            ("store", _) => ops.fill(sl(0), 1.0, true),
            _ => panic!("kernel {kernel}"),
        }
    }

    pub fn main() {
        let a: Vec<String> = std::env::args().collect();
        let kernel = a[1].clone();
        let thp = a[2] == "thp";
        let mib: usize = a[3].parse().unwrap();
        let rounds: usize = a[4].parse().unwrap();
        let reps: usize = a[5].parse().unwrap();
        let threads: usize = a[6].parse().unwrap();
        let best = std::env::var("BEST").is_ok();
        let nowarm = std::env::var("NOWARM").is_ok();
        let names: Vec<String> = a[7].split(',').map(String::from).collect();
        let vs: Vec<(V, usize)> = names.iter().map(|s| parse(s)).collect();
        let n = mib << 17; // elements per array
        let bytes = n * 8 + 8192;
        let arrs: [*mut f64; 3] = [alloc(bytes, thp), alloc(bytes, thp), alloc(bytes, thp)];
        let (streams, bpe) = match kernel.as_str() {
            "triad" => (3, 24.0),
            "copy" => (2, 16.0),
            _ => (1, 8.0),
        };
        let addrs: Vec<usize> = arrs.iter().map(|p| *p as usize).collect();
        let chunk = n / threads / 512 * 512;
        let barrier = Arc::new(Barrier::new(threads));
        let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); vs.len()];
        let mut abs: Vec<Vec<f64>> = vec![Vec::new(); vs.len()];
        // first touch from each thread
        let run = |work: &(dyn Fn(usize) -> f64 + Sync)| -> f64 {
            std::thread::scope(|s| {
                let hs: Vec<_> = (0..threads)
                    .map(|t| {
                        let w = &work;
                        s.spawn(move || w(t))
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).fold(0.0, f64::max)
            })
        };
        run(&|t| {
            pin(t);
            for (j, &p) in addrs.iter().enumerate().take(streams) {
                let p = p as *mut f64;
                // SAFETY: thread t owns its chunk (plus slack for the last).
                let s = unsafe { std::slice::from_raw_parts_mut(p.add(t * chunk), chunk + 2048) };
                s.fill(j as f64 + 1.0);
            }
            0.0
        });
        for r in 0..rounds {
            let mut meds = vec![0.0; vs.len()];
            let order: Vec<usize> =
                if r % 2 == 0 { (0..vs.len()).collect() } else { (0..vs.len()).rev().collect() };
            for &vi in &order {
                let v = vs[vi];
                let secs = run(&|t| {
                    pin(t);
                    let arrs = [addrs[0] as *mut f64, addrs[1] as *mut f64, addrs[2] as *mut f64];
                    if !nowarm {
                        // SAFETY: disjoint chunks per thread, inside the mappings.
                        unsafe { pass(&kernel, v, &arrs, t * chunk, (t + 1) * chunk) };
                    }
                    let mut ts = Vec::new();
                    for _ in 0..reps {
                        barrier.wait();
                        let t0 = Instant::now();
                        // SAFETY: as above.
                        unsafe { pass(&kernel, v, &arrs, t * chunk, (t + 1) * chunk) };
                        barrier.wait();
                        ts.push(t0.elapsed().as_secs_f64());
                    }
                    ts.sort_by(|a, b| a.partial_cmp(b).unwrap());
                    if best {
                        ts[0]
                    } else {
                        ts[ts.len() / 2]
                    }
                });
                meds[vi] = bpe * (chunk * threads) as f64 / secs / 1e9;
            }
            for vi in 0..vs.len() {
                ratios[vi].push(meds[vi] / meds[0]);
                abs[vi].push(meds[vi]);
            }
            let line: Vec<String> =
                names.iter().zip(&meds).map(|(n, m)| format!("{n} {m:.2}")).collect();
            if rounds <= 30 {
                eprintln!("round {r}: {}", line.join("  "));
            }
        }
        let med = |v: &mut Vec<f64>| {
            v.sort_by(|a, b| a.partial_cmp(b).unwrap());
            v[v.len() / 2]
        };
        for vi in 0..vs.len() {
            let r = med(&mut ratios[vi]);
            let m = med(&mut abs[vi]);
            let wins = ratios[vi].iter().filter(|&&x| x > 1.0).count();
            println!(
                "{kernel} {} {threads}t {:<8} median GB/s {m:6.2}  median ratio to {} {r:.3} (> 1 in {wins}/{rounds})",
                if thp { "thp" } else { "4k" },
                names[vi],
                names[0]
            );
        }
    }
}

fn main() {
    #[cfg(target_arch = "x86_64")]
    imp::main();
}
