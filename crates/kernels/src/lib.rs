//! Memory kernels: STREAM and read/write loops per instruction set, and the
//! pointer chase. No I/O, no allocation policy: callers hand in slices.

pub mod chase;
