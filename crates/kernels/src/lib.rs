//! Memory kernels: STREAM and read/write loops per instruction set, and the
//! pointer chase and the loaded-latency load generator. No I/O, no allocation policy: callers hand in slices.
//!
//! The bandwidth side is split in two:
//! - [`arch`]: one module per instruction set (scalar reference; SSE2, AVX2,
//!   AVX-512 on x86-64; NEON and SVE on aarch64), each behind a type that
//!   can only be built after run-time detection, all implementing
//!   [`arch::Ops`];
//! - [`stream`]: the kernels users pick ([`Kernel`]), STREAM's byte
//!   counting, the arrays they work on and STREAM-style validation.

pub mod arch;
pub mod chase;
pub mod counting;
pub mod load;
pub mod stream;

pub use arch::{select, Isa, KernelError, Ops};
pub use stream::{Arrays, Expected, Kernel, Stores, ValidationError, SCALAR};
