//! Settings audit: rules that check OS/BIOS settings against a workload profile (being written).
