//! AVX-512 (foundation): eight doubles per vector, a cache line per store.

super::simd_variant!(
    /// AVX-512F kernels (512-bit vectors).
    Avx512, crate::arch::Isa::Avx512, "avx512f",
    detect = std::arch::is_x86_feature_detected!("avx512f"), 8, __m512d,
    loadu = _mm512_loadu_pd, store = _mm512_store_pd, stream = _mm512_stream_pd,
    add = _mm512_add_pd, mul = _mm512_mul_pd, set1 = _mm512_set1_pd, zero = _mm512_setzero_pd
);
