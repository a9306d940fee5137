//! store (being written).
