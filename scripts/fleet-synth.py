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

`--varied` makes a fleet with everything `fleet` judges, for checking
deploy/sql against `numaprobe fleet` (docs/fleet.md): several models (one
of 2 hosts, without peers; one whose hosts measure the same figures, a MAD
of 0), slow and borderline hosts, settings drifted (ties without a
majority among them), runs of any age up to stale and some from the
future, newer failed, incomplete and exec runs, hosts with only failed or
only exec runs, renamed machines, clones with one host name, hosts
recorded before the machine identity, two labels, and `--unmeasured-out
FILE`: an --unmeasured list naming some of them (by name, by machine id,
never seen, a clone's shared name). Ages are from `--now` (RFC 3339,
default: now). `--per-file K` writes K runs per export file (import takes
one file per transaction), `--compact` without indentation.
"""
import argparse
import copy
import datetime
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
    ap.add_argument("--varied", action="store_true", help="a fleet with every case fleet judges")
    ap.add_argument("--now", help="--varied: ages from this time (RFC 3339; default now)")
    ap.add_argument("--unmeasured-out", help="--varied: write an --unmeasured list here")
    ap.add_argument("--per-file", type=int, default=1, help="runs per export file")
    ap.add_argument("--compact", action="store_true", help="JSON without indentation")
    a = ap.parse_args()
    if a.varied:
        return varied(a)
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


def rfc3339(ms):
    t = datetime.datetime.fromtimestamp(ms // 1000, datetime.timezone.utc)
    return t.strftime("%Y-%m-%dT%H:%M:%S") + ".%03dZ" % (ms % 1000)


class Writer:
    """Export files of `per_file` runs each, in order."""

    def __init__(self, a, base):
        self.a, self.base, self.runs, self.n = a, base, [], 0
        os.makedirs(a.out, exist_ok=True)

    def add(self, run):
        self.runs.append(run)
        if len(self.runs) >= self.a.per_file:
            self.flush()

    def flush(self):
        if not self.runs:
            return
        doc = {"format": self.base["format"], "version": self.base["version"],
               "exported": self.base["exported"], "runs": self.runs}
        with open(os.path.join(self.a.out, f"part-{self.n:06d}.json"), "w") as out:
            if self.a.compact:
                # dumps, not dump: the C encoder (dump to a stream is Python's).
                out.write(json.dumps(doc, separators=(",", ":")))
            else:
                json.dump(doc, out, indent=2)
        self.n += 1
        self.runs = []


# (cpu model, packages, GiB of MemTotal, share of the hosts)
MODELS = [
    ("Intel(R) Xeon(R) Silver 4314 CPU @ 2.40GHz", 2, 256, 0.70),
    ("AMD EPYC 7543 32-Core Processor", 2, 512, 0.20),
    ("AMD EPYC 9654 96-Core Processor", 1, 768, 0.10),
]


def varied(a):
    """A fleet with every case `numaprobe fleet` judges (see the module's
    text), deterministic for a seed."""
    with open(a.base) as f:
        base = json.load(f)
    # Each run is parsed anew from the base's text: faster than a deep copy.
    run0_text = json.dumps(base["runs"][0])
    rng = random.Random(a.seed)
    if a.now:
        now = datetime.datetime.fromisoformat(a.now.replace("Z", "+00:00"))
    else:
        now = datetime.datetime.now(datetime.timezone.utc)
    now_ms = int(now.timestamp() * 1000)
    day = 86_400_000
    w = Writer(a, base)
    unmeasured = ["# hosts the orchestrator could not measure (scripts/fleet-synth.py --varied)"]

    def new_uuid():
        return str(uuid.UUID(int=rng.getrandbits(128), version=4))

    def make(host, machine_id, model, started_ms, factor=(1.0, 1.0), noise=0.01, quantum=None,
             config=None, status="complete", message=None, keep=None, label="fleet"):
        r = json.loads(run0_text)
        r["uuid"] = new_uuid()
        r["source_id"] = 1
        r["label"] = label
        r["started"] = rfc3339(started_ms)
        r["finished"] = rfc3339(started_ms + 18 * 60_000) if status != "running" else None
        r["status"] = status
        r["message"] = message
        cpu, packages, gib, _ = model
        info = r["machine"]["info"]
        info["hostname"] = host
        info["cpu_model"] = cpu
        info["packages"] = packages
        info["mem_total_bytes"] = gib << 30
        if machine_id is None:
            info.pop("machine_id", None)
            info.pop("machine_id_source", None)
        else:
            info["machine_id"] = machine_id
            info["machine_id_source"] = "dmi_product_uuid"
        r["machine"]["fingerprint"] = f"{rng.getrandbits(64):016x}"
        r["machine"]["description"] = f"{host}: {cpu}, {packages} packages, {gib} GiB"
        bw, lat = factor
        n = 1.0 + rng.uniform(-noise, noise)
        for res in r["results"]:
            p = res["payload"]
            scale(p, bw * n, lat * n)
            if quantum:
                for k, v in list(p.items()):
                    if isinstance(v, float) and (k.endswith("_gbs") or k.endswith("_ns")):
                        p[k] = round(v / quantum) * quantum
        if keep is not None:
            r["results"] = [x for x in r["results"] if keep(x)]
        cfg = r["config"]
        cfg["bios_version"] = "2.1.4"
        cfg["memory_speed_mts"] = 3200
        cfg["cmdline_options"] = {"numa_balancing": "0", "transparent_hugepage": "madvise"}
        for k, v in (config or {}).items():
            if isinstance(v, dict):
                cfg.setdefault(k, {}).update(v)
            else:
                cfg[k] = v
        # The base's config_hash is kept: import files a run whose settings
        # differ under their own hash (with a warning), found at once;
        # a hash of its own here would make import look through every run
        # for others under it (runs.config_hash has no index).
        w.add(r)
        if machine_id is not None:
            ids.append((host, machine_id))
        return r

    def mid():
        return f"{rng.getrandbits(64):016x}"

    clone_names = []
    ids = []  # (host name, machine id) of every run written
    for i in range(a.hosts):
        host = f"host-{i:06d}"
        x = rng.random()
        model = MODELS[0] if x < MODELS[0][3] else MODELS[1] if x < MODELS[0][3] + MODELS[1][3] else MODELS[2]
        machine_id = None if rng.random() < 0.01 else mid()
        age = rng.uniform(0.02, 7.5) * day
        if rng.random() < 0.03:
            age = rng.uniform(8.01, 40) * day  # stale at the default --max-age 8d
        if rng.random() < 0.004:
            age = -rng.uniform(1, 3) * day  # a clock ahead (days: still ahead when fleet runs)
        started = now_ms - int(age)
        f = (1.0, 1.0)
        y = rng.random()
        if y < 0.004:
            f = (0.85, 1.0)  # slow bandwidth
        elif y < 0.008:
            f = (1.0, 1.25)  # slow latency
        elif y < 0.012:
            f = (0.96, 1.0)  # 4% down: under the threshold
        elif y < 0.016:
            f = (0.93, 1.0)  # 7% down: over 5%, not over 10%
        config = {}
        if rng.random() < 0.01:
            config["thp"] = "always"
        if rng.random() < 0.005:
            config["cmdline_options"] = {"numa_balancing": "1"}
        if rng.random() < 0.003:
            config["bios_version"] = "2.0.9"
        label = "acceptance" if rng.random() < 0.1 else "fleet"
        # The cases of a host's history.
        z = rng.random()
        if z < 0.01:  # only failed runs: incomplete, nothing complete
            make(host, machine_id, model, started, status="failed", message="bw: cannot allocate 8 GiB on node 0",
                 keep=lambda r: r["kind"] == "bw", label=label)
            continue
        if z < 0.015:  # only exec runs: skipped
            make(host, machine_id, model, started, keep=lambda r: r["kind"] == "exec", label=label)
            continue
        if z < 0.02:  # renamed: an older run under another name
            make(f"old-{host}", machine_id, model, started - 3 * day, factor=f, config=config, label=label)
        make(host, machine_id, model, started, factor=f, config=config, label=label)
        if z < 0.03:  # a newer failed measurement: incomplete, the older one not compared
            make(host, machine_id, model, started + 3_600_000, status="failed",
                 message="lat: the measuring lock is held by pid 4242", keep=lambda r: False, label=label)
        elif z < 0.04:  # a newer interrupted one that saved some results
            make(host, machine_id, model, started + 3_600_000, status="incomplete",
                 message="interrupted (SIGTERM)", keep=lambda r: r["kind"] == "bw", label=label)
        elif z < 0.06:  # a newer exec run, complete or failed: passed over
            st = "complete" if z < 0.055 else "failed"
            make(host, machine_id, model, started + 1_800_000, status=st,
                 message=None if st == "complete" else "the program exited with status 1",
                 keep=lambda r: r["kind"] == "exec", label=label)
        elif z < 0.062:  # a newer run of the other label
            make(host, machine_id, model, started + 60_000, factor=f, config=config,
                 label="acceptance" if label == "fleet" else "fleet")
        elif z < 0.064:  # a newer run at the very same time: the later id is the latest
            make(host, machine_id, model, started, factor=(0.8, 1.0), config=config, label=label)
        if rng.random() < 0.003 and machine_id is not None:
            # A clone: another machine with this host name.
            make(host, mid(), model, started - 600_000, config=config, label=label)
            clone_names.append(host)
    # A model of 2 hosts (peers missing), and one whose hosts measure the
    # same figures (a MAD of 0: the threshold alone decides), an odd count
    # of them, one of them 6% slow; a tie in a setting (no majority) in it.
    lone = ("Intel(R) Xeon(R) Gold 6338 CPU @ 2.00GHz", 2, 512, 0)
    for j in range(2):
        make(f"pair-{j}", mid(), lone, now_ms - day, factor=(1.0 if j else 0.5, 1.0))
    same = ("Ampere(R) Altra(R) Processor Q80-30", 1, 256, 0)
    for j in range(7):
        make(f"same-{j}", mid(), same, now_ms - day, noise=0.0, quantum=0.5,
             factor=(0.94 if j == 3 else 1.0, 1.0),
             config={"governor": "performance" if j % 2 else "powersave"} if j < 6 else {"governor": "ondemand"})
    # An even count of hosts whose medians interpolate: 4 hosts.
    even = ("Intel(R) Xeon(R) Platinum 8480+", 2, 1024, 0)
    for j in range(4):
        make(f"even-{j}", mid(), even, now_ms - day, noise=0.0, factor=(1.0 + 0.01 * j, 1.0 - 0.01 * j))
    w.flush()
    if a.unmeasured_out:
        names = [f"host-{i:06d}" for i in range(0, a.hosts, max(1, a.hosts // 10))]
        for n in names[:3]:
            unmeasured.append(f"{n}\ttimed out after 3600 s: waiting for the lock")
        unmeasured.append("never-seen-01\tunreachable: ssh: connect to host never-seen-01 port 22: Connection refused")
        unmeasured.append("  # an indented comment")
        unmeasured.append("")
        unmeasured.append(f"{names[3] if len(names) > 3 else 'host-x'}\t")
        unmeasured.append(f"not-this-name\trun exit status 2\tffff00000000abcd")
        for c in clone_names[:2]:
            unmeasured.append(f"{c}\tunreachable")  # a name two machines share: neither is taken out
        if len(ids) > 8:
            # By machine id, under another name than its runs'; and a clone by its id.
            unmeasured.append(f"renamed-by-the-orchestrator\trun exit status 1\t{ids[len(ids) // 2][1]}")
        for c in clone_names[2:3]:
            cid = [m for h, m in ids if h == c][-1]
            unmeasured.append(f"{c}\trun exit status 2\t{cid}")
        with open(a.unmeasured_out, "w") as out:
            out.write("\n".join(unmeasured) + "\r\n")
    print(json.dumps({"now": rfc3339(now_ms), "files": w.n, "clones": len(clone_names)}))


if __name__ == "__main__":
    main()
