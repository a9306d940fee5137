# synthetic.py IN OUT. Synthetic groups with known effects, from real run 1 of the repeat data:
# every *_gbs field scaled by the group's factor times a small per-run noise.
import json, gzip, uuid, copy, sys
doc = json.load(gzip.open(sys.argv[1]))
t = doc['runs'][0]
def scale(v, f):
    if isinstance(v, dict):
        return {k: (x * f if k.endswith('_gbs') and isinstance(x, (int, float)) else scale(x, f)) for k, x in v.items()}
    if isinstance(v, list):
        return [scale(x, f) for x in v]
    return v
groups = {
  'base':   ('aaaa000000000001', 'madvise', [1.00, 1.01, 0.99]),
  '+5%':    ('bbbb000000000002', 'always',  [1.05, 1.06, 1.04]),
  '+20%':   ('cccc000000000003', 'never',   [1.20, 1.21, 1.19]),
  'bimodal A': ('dddd000000000004', 'madvise', [1.0, 0.6, 1.0, 0.6]),
  'bimodal B': ('eeee000000000005', 'always', [0.6, 1.0, 0.61, 0.99]),
}
runs = []
minute = 0
for label, (cfg, thp, factors) in groups.items():
    for f in factors:
        r = copy.deepcopy(t)
        r['uuid'] = str(uuid.uuid4()); r['label'] = label
        r['config'] = dict(r['config']); r['config']['thp_enabled'] = thp; r['config']['fingerprint'] = cfg
        r['config_hash'] = cfg
        minute += 1
        r['started'] = '2026-11-23T01:%02d:00.000Z' % minute
        r['finished'] = '2026-11-23T01:%02d:30.000Z' % minute
        r['results'] = [dict(x, payload=scale(x['payload'], f)) for x in r['results']]
        runs.append(r)
doc['runs'] = runs
json.dump(doc, open(sys.argv[2], 'w'))
