//! place (being written).
