# known.py IN OUT. Known effects on this machine's real run-to-run noise: the 12 real runs of
# identical settings (crates/analysis/tests/data/repeat), split alternately into
# a base half (runs 1,3,5,...) and a new half (runs 2,4,6,...); the new half's
# *_gbs fields are scaled by the effect. Groups of n = 3..6 runs per side,
# each group its own configuration fingerprint.
import json, gzip, uuid, copy, sys
doc = json.load(gzip.open(sys.argv[1]))
real = sorted(doc['runs'], key=lambda r: r['started'])
assert len(real) == 12
def scale(v, f):
    if isinstance(v, dict):
        return {k: (x * f if k.endswith('_gbs') and isinstance(x, (int, float)) else scale(x, f)) for k, x in v.items()}
    if isinstance(v, list):
        return [scale(x, f) for x in v]
    return v
runs = []
minute = 0
for eff in (1.05, 1.20):
    for n in (3, 4, 5, 6):
        for side, idx, f in (('base', range(0, 12, 2), 1.0), ('new', range(1, 12, 2), eff)):
            label = 'n%d %s %+d%%' % (n, side, round((eff - 1) * 100))
            cfg = '%04x%012x' % (int(eff * 100), n * 10 + (side == 'new'))
            for i in list(idx)[:n]:
                r = copy.deepcopy(real[i])
                r['uuid'] = str(uuid.uuid4()); r['label'] = label
                r['config'] = dict(r['config']); r['config']['fingerprint'] = cfg
                r['config']['thp_enabled'] = 'always' if side == 'new' else 'madvise'
                r['config_hash'] = cfg
                minute += 1
                r['started'] = '2026-11-24T%02d:%02d:00.000Z' % (minute // 60, minute % 60)
                r['finished'] = '2026-11-24T%02d:%02d:30.000Z' % (minute // 60, minute % 60)
                r['results'] = [dict(x, payload=scale(x['payload'], f)) for x in r['results']]
                runs.append(r)
doc['runs'] = runs
json.dump(doc, open(sys.argv[2], 'w'))
print(len(runs), 'runs')
