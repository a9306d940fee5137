//! What the audit's tests share.

/// numaprobe's commands and options, as console gives them
/// (`console::audit::TERMS`, which this crate cannot import: console
/// depends on audit), and report's words for a distances contradiction,
/// as console gives them too.
pub const TERMS: audit::Terms = audit::Terms {
    counters: "--counters",
    lat: "numaprobe lat",
    run: "numaprobe run",
    audit: "numaprobe audit",
    export_hwloc: "numaprobe export --format hwloc RUN -o topo.xml",
    peak_gbs: "--peak-gbs",
    contradiction: report::distances::contradiction,
};
