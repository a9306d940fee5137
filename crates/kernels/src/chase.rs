//! Dependent pointer-chase kernels (being written).
