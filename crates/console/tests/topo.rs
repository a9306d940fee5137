//! `topo`'s text of the synthetic runs in report's
//! `tests/fixtures/synthetic-export.json` (made by
//! `fixtures/make_synthetic.py` there).

#[path = "../../report/tests/support/synthetic.rs"]
mod synthetic;

use synthetic::runs;

/// `topo` names node memory and system memory, and says why they differ
/// when the nodes hold less than the system (a VM's memory plugged in as
/// it is used): the baseline's Xeon topology with `/proc/meminfo` at 1000
/// GiB beside its nodes' 256 GiB.
#[test]
fn topo_names_node_and_system_memory_and_explains_a_shortfall() {
    use console::TableStyle;
    let mut t = runs()[0].topology.get().expect("the fixture records its topology").clone();
    let nodes: u64 = t.nodes.iter().map(|n| n.mem_total_bytes).sum();
    let mem = |total: u64| topo::model::SystemMemory {
        total_bytes: total,
        free_bytes: None,
        available_bytes: Some(total / 2),
        default_hugepage_bytes: None,
        hugepages: vec![],
    };
    t.system_memory = Some(mem(nodes));
    let text = console::topo::render(&t, TableStyle::Plain);
    assert!(text.contains("256.0 GiB node memory;"), "{text}");
    assert!(text.contains("system memory (/proc/meminfo) 256.0 GiB total"), "{text}");
    assert!(text.contains("node memory") && !text.contains("of the system's"), "{text}");
    t.system_memory = Some(mem(1000 << 30));
    let text = console::topo::render(&t, TableStyle::Plain);
    assert!(text.contains("256.0 GiB node memory of 1000.0 GiB system memory"), "{text}");
    assert!(
        text.contains("node memory 256.0 GiB of the system's 1000.0 GiB: memory the kernel counts but no NUMA node shows yet"),
        "{text}"
    );
}
