//! What the audit's tests share.

/// numaprobe's commands and options, as console gives them
/// (`console::audit::TERMS`, which this crate cannot import: console
/// depends on audit).
pub const TERMS: audit::Terms = audit::Terms {
    counters: "--counters",
    lat: "numaprobe lat",
    run: "numaprobe run",
    audit: "numaprobe audit",
    export_hwloc: "numaprobe export --format hwloc RUN -o topo.xml",
    peak_gbs: "--peak-gbs",
};
