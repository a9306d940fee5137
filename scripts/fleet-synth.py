#!/usr/bin/env python3
"""Writes exports of N synthetic hosts for the fleet report and its benchmark.

Each host is a copy of a real run's export (`--base`: every result, the
full configuration and topology; by default the baseline run of
crates/report/tests/fixtures/synthetic-export.json) under its own host
name, machine identity, machine fingerprint and run UUID, its figures moved
by up to +-1% of noise (seeded, so the same every time).
`--slow HOST=FACTOR` scales one host's bandwidth by FACTOR (0.85: 15% slow)
and its latency by 1/FACTOR; `--drift HOST=KEY=VALUE` changes one setting
of its configuration document (e.g. thp=always).

    scripts/fleet-synth.py --hosts 1000 --out /tmp/fleet --slow host-0007=0.85 --drift host-0042=thp=always
"""
import argparse
import copy
import json
import os
import random
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_BASE = os.path.join(HERE, "..", "crates", "report", "tests", "fixtures", "synthetic-export.json")


def scale(payload, bw, lat):
    for k, v in list(payload.items()):
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            if k.endswith("_gbs"):
                payload[k] = round(v * bw, 3)
            elif k.endswith("_ns"):
                payload[k] = round(v * lat, 3)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--hosts", type=int, default=10)
    ap.add_argument("--out", required=True)
    ap.add_argument("--base", default=DEFAULT_BASE, help="an export whose first run is copied")
    ap.add_argument("--slow", action="append", default=[], metavar="HOST=FACTOR")
    ap.add_argument("--drift", action="append", default=[], metavar="HOST=KEY=VALUE")
    ap.add_argument("--seed", type=int, default=16)
    a = ap.parse_args()
    with open(a.base) as f:
        base = json.load(f)
    run0 = base["runs"][0]
    slow = {h: float(x) for h, x in (s.split("=", 1) for s in a.slow)}
    drift = {}
    for d in a.drift:
        h, kv = d.split("=", 1)
        k, v = kv.split("=", 1)
        drift.setdefault(h, {})[k] = v
    rng = random.Random(a.seed)
    os.makedirs(a.out, exist_ok=True)
    for i in range(a.hosts):
        host = f"host-{i:04d}"
        r = copy.deepcopy(run0)
        r["uuid"] = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        r["source_id"] = 1
        r["label"] = "fleet"
        r["machine"]["fingerprint"] = f"{rng.getrandbits(64):016x}"
        r["machine"]["info"]["hostname"] = host
        r["machine"]["info"]["machine_id"] = f"{rng.getrandbits(64):016x}"
        r["machine"]["info"]["machine_id_source"] = "dmi_product_uuid"
        r["machine"]["description"] = host + ": " + r["machine"]["description"].split(": ", 1)[-1]
        f = slow.get(host, 1.0)
        noise = 1.0 + rng.uniform(-0.01, 0.01)
        for res in r["results"]:
            scale(res["payload"], f * noise, noise / f)
        for k, v in drift.get(host, {}).items():
            r["config"][k] = v
        doc = {"format": base["format"], "version": base["version"], "exported": base["exported"], "runs": [r]}
        with open(os.path.join(a.out, f"{host}.json"), "w") as out:
            # As `numaprobe export` writes it (indented): the size and the
            # parsing work of a real export.
            json.dump(doc, out, indent=2)


if __name__ == "__main__":
    main()
