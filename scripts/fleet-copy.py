#!/usr/bin/env python3
"""Grows a numaprobe database by copying its hosts inside it, for checking
deploy/sql against `numaprobe fleet` at 100,000 hosts without writing and
importing 100,000 exports (docs/testing.md).

    scripts/fleet-copy.py --copies 9 fleet.db

Each copy k (1..COPIES) of every machine, run and result is a distinct
host: its host name, machine id and machine fingerprint get the suffix
`-cK` (an empty or absent one stays so: a host without a machine id stays
known by its name), its run UUIDs too, and its row ids are offset past
the originals'. Its results, configuration, topology, start times and
statuses are the original's bytes. Copies with an odd K also get `(cK)`
after their CPU model, so they form peer groups of their own (the same
values as the originals' groups: medians, MADs and flags computed afresh
over separate groups); copies with an even K keep the model and join the
originals' groups (groups several times larger, each value held by
several hosts). The script reads no figure and judges nothing: every
verdict of the grown fleet is computed by `fleet` and by the SQL.

The database must be one numaprobe wrote (`import`), not in use. Prints
a JSON line: machines, runs and results after the copy.
"""
import argparse
import json
import sqlite3
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("db")
    ap.add_argument("--copies", type=int, required=True, help="copies of each host to add (1-99)")
    a = ap.parse_args()
    if not 1 <= a.copies <= 99:
        ap.error("--copies: 1 to 99")
    con = sqlite3.connect(a.db, isolation_level=None)
    if con.execute("PRAGMA application_id").fetchone()[0] != 0x4E554D41:
        sys.exit(f"{a.db}: not a numaprobe database")
    # numaprobe keeps its database in WAL mode: copied there, every page
    # would be written twice (the log, then the database) and the log grow
    # as large as the copy. A rollback journal holds only the few pages
    # the copy changes; without syncs, as a test fleet is made again, not
    # repaired, if the machine stops mid-copy. WAL again at the end.
    con.execute("PRAGMA journal_mode = DELETE")
    con.execute("PRAGMA synchronous = OFF")
    # One transaction: the copy is all there or not at all.
    con.execute("BEGIN IMMEDIATE")
    top = {t: con.execute(f"SELECT COALESCE(MAX(id), 0) FROM {t}").fetchone()[0] for t in ("machines", "runs", "results")}
    # A text field of the machine document, suffixed when it holds a value
    # (not null, empty or "unreadable": those stay, and a host without a
    # machine id stays known by its name).
    def suffixed(field, suffix):
        v = f"json_extract(info_json, '$.{field}')"
        return (
            f"CASE WHEN json_type(info_json, '$.{field}') = 'text' AND {v} NOT IN ('', 'unreadable') "
            f"THEN {v} || {suffix} ELSE {v} END"
        )

    info = (
        "json_replace(info_json, "
        f"'$.fingerprint', {suffixed('fingerprint', ':sfx')}, "
        f"'$.hostname', {suffixed('hostname', ':sfx')}, "
        f"'$.machine_id', {suffixed('machine_id', ':sfx')}, "
        f"'$.cpu_model', {suffixed('cpu_model', ':model')})"
    )
    for k in range(1, a.copies + 1):
        p = {
            "sfx": f"-c{k}",
            "model": f" (c{k})" if k % 2 else "",
            "m": k * top["machines"],
            "r": k * top["runs"],
            "x": k * top["results"],
            "mtop": top["machines"],
            "rtop": top["runs"],
            "xtop": top["results"],
        }
        con.execute(
            f"""INSERT INTO machines (id, fingerprint, description, info_json, first_seen)
                SELECT id + :m, fingerprint || :sfx, description, {info}, first_seen
                FROM machines WHERE id <= :mtop""",
            p,
        )
        con.execute(
            """INSERT INTO runs (id, uuid, label, command_line, tool_version, started, finished, status,
                                 message, machine_id, config_hash, config_json, topology_json,
                                 owner_host, owner_boot_id, owner_pid, imported_at)
                SELECT id + :r, uuid || :sfx, label, command_line, tool_version,
                       started, finished, status, message, machine_id + :m, config_hash,
                       config_json, topology_json, owner_host, owner_boot_id, owner_pid, imported_at
                FROM runs WHERE id <= :rtop""",
            p,
        )
        con.execute(
            """INSERT INTO results (id, run_id, seq, recorded, kind, mode, kernel, cpu_node, mem_node,
                                    value, unit, payload_json)
                SELECT id + :x, run_id + :r, seq, recorded, kind, mode, kernel,
                       cpu_node, mem_node, value, unit, payload_json
                FROM results WHERE id <= :xtop""",
            p,
        )
    con.execute("COMMIT")
    con.execute("PRAGMA journal_mode = WAL")
    n = {t: con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("machines", "runs", "results")}
    con.close()
    print(json.dumps(n))


if __name__ == "__main__":
    main()
