#!/usr/bin/env python3
"""Accuracy check of `numaprobe gpu` (a benchmark, not a unit test).

Compares numaprobe's host<->device copy bandwidth with an independent
measurement made through PyTorch, which reaches the same driver through the
CUDA runtime: pinned host memory (torch.empty(pin_memory=True), touched
first), a device buffer of the same size, one untimed warm-up copy, then
REPS copies each timed with CUDA events on the stream that runs it; bidir is
one copy each way on two streams started by one event and joined before the
end event (bytes of both counted). Median of the copies, as numaprobe's.

The two alternate ROUNDS times (numaprobe, then PyTorch) so drifts of the
machine hit both. Prints, per direction and size, each tool's median over
the rounds and the ratio numaprobe / PyTorch. Goal: within 5% at 16 MiB and
above (smaller copies are dominated by launch overhead, which the two
measure the same way only roughly).

usage: scripts/gpu-vs-torch.py NUMAPROBE [SIZES=64K,1M,16M,256M,1G] [REPS=10] [ROUNDS=3] [GPU=0] [NODE=0]
GB/s = 10^9 bytes/s. Needs python3 with torch and a CUDA GPU.
"""
import json
import os
import statistics
import subprocess
import sys


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper()
    if text[-1] in units:
        return int(text[:-1]) * units[text[-1]]
    return int(text)


def node_cpus(node):
    try:
        with open(f"/sys/devices/system/node/node{node}/cpulist") as f:
            spec = f.read().strip()
    except OSError:
        return None
    cpus = set()
    for part in spec.split(","):
        if "-" in part:
            a, b = part.split("-")
            cpus.update(range(int(a), int(b) + 1))
        elif part:
            cpus.add(int(part))
    return cpus


def numaprobe_round(exe, sizes, reps, gpu, node):
    out = subprocess.run(
        [exe, "gpu", "--json", "--quiet", "--gpus", str(gpu), "--nodes", str(node),
         "--sizes", sizes, "--reps", str(reps)],
        check=True, capture_output=True, text=True).stdout
    got = {}
    for p in json.loads(out)["points"]:
        got[(p["direction"], p["size_bytes"])] = p["median_gbs"]
    return got


def torch_round(torch, sizes, reps, gpu):
    dev = torch.device("cuda", gpu)
    got = {}
    s1 = torch.cuda.Stream(dev)
    s2 = torch.cuda.Stream(dev)
    for n in sizes:
        host = torch.empty(n, dtype=torch.uint8, pin_memory=True)
        host.fill_(1)
        host2 = torch.empty(n, dtype=torch.uint8, pin_memory=True)
        host2.fill_(2)
        d = torch.empty(n, dtype=torch.uint8, device=dev)
        d2 = torch.empty(n, dtype=torch.uint8, device=dev)
        for direction in ("h2d", "d2h", "bidir"):
            rates = []
            for i in range(reps + 1):
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                cur = torch.cuda.current_stream(dev)
                start.record(cur)
                if direction == "h2d":
                    d.copy_(host, non_blocking=True)
                    moved = n
                elif direction == "d2h":
                    host.copy_(d, non_blocking=True)
                    moved = n
                else:
                    s1.wait_stream(cur)
                    s2.wait_stream(cur)
                    with torch.cuda.stream(s1):
                        d.copy_(host, non_blocking=True)
                    with torch.cuda.stream(s2):
                        host2.copy_(d2, non_blocking=True)
                    cur.wait_stream(s1)
                    cur.wait_stream(s2)
                    moved = 2 * n
                end.record(cur)
                end.synchronize()
                if i > 0:  # the first copy is the warm-up
                    rates.append(moved / (start.elapsed_time(end) * 1e-3) / 1e9)
            got[(direction, n)] = statistics.median(rates)
        del host, host2, d, d2
        torch.cuda.synchronize(dev)
    return got


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip().split("\n\n")[-2], file=sys.stderr)
        sys.exit(2)
    exe = sys.argv[1]
    sizes_arg = sys.argv[2] if len(sys.argv) > 2 else "64K,1M,16M,256M,1G"
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 10
    rounds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    gpu = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    node = int(sys.argv[6]) if len(sys.argv) > 6 else 0
    sizes = [parse_size(s) for s in sizes_arg.split(",")]

    import torch  # only here, so that --help works without it

    cpus = node_cpus(node)
    if cpus:
        os.sched_setaffinity(0, cpus)  # PyTorch's pinned memory is touched here, on NODE
    np_rounds, tc_rounds = [], []
    for r in range(rounds):
        np_rounds.append(numaprobe_round(exe, sizes_arg, reps, gpu, node))
        tc_rounds.append(torch_round(torch, sizes, reps, gpu))
        print(f"round {r + 1}/{rounds} done", file=sys.stderr)

    print(f"GPU {gpu} ({torch.cuda.get_device_name(gpu)}), host node {node}, "
          f"{reps} timed copies per point, {rounds} alternated rounds; GB/s = 10^9 B/s")
    print(f"{'direction':<9} {'size':>7} {'numaprobe':>10} {'pytorch':>10} {'ratio':>7}  "
          f"{'np spread':>9} {'pt spread':>9}")
    for direction in ("h2d", "d2h", "bidir"):
        for n in sizes:
            a = [g[(direction, n)] for g in np_rounds]
            b = [g[(direction, n)] for g in tc_rounds]
            ma, mb = statistics.median(a), statistics.median(b)
            sa = (max(a) - min(a)) / ma * 100
            sb = (max(b) - min(b)) / mb * 100
            label = f"{n >> 30}G" if n >= 1 << 30 else f"{n >> 20}M" if n >= 1 << 20 else f"{n >> 10}K"
            print(f"{direction:<9} {label:>7} {ma:>10.2f} {mb:>10.2f} {ma / mb:>7.3f}  "
                  f"{sa:>8.1f}% {sb:>8.1f}%")


if __name__ == "__main__":
    main()
