//! A team of pinned worker threads started together on a barrier (being written).
