//! SSE2: two doubles per vector (the x86-64 baseline, still detected).

super::simd_variant!(
    /// SSE2 kernels (128-bit vectors).
    Sse2, crate::arch::Isa::Sse2, "sse2",
    detect = std::arch::is_x86_feature_detected!("sse2"), 2, __m128d,
    loadu = _mm_loadu_pd, store = _mm_store_pd, stream = _mm_stream_pd,
    add = _mm_add_pd, mul = _mm_mul_pd, set1 = _mm_set1_pd, zero = _mm_setzero_pd
);
