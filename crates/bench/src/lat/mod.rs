//! Latency experiments (being written).
