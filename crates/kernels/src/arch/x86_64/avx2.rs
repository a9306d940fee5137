//! AVX2: four doubles per vector. Only AVX instructions are used for
//! doubles, but the variant is named for AVX2, the level it stands for.

super::simd_variant!(
    /// AVX2 kernels (256-bit vectors).
    Avx2, crate::arch::Isa::Avx2, "avx2",
    detect = std::arch::is_x86_feature_detected!("avx2"), 4, __m256d,
    loadu = _mm256_loadu_pd, store = _mm256_store_pd, stream = _mm256_stream_pd,
    add = _mm256_add_pd, mul = _mm256_mul_pd, set1 = _mm256_set1_pd, zero = _mm256_setzero_pd
);
