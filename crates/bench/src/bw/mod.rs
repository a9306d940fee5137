//! Bandwidth experiments (being written).
