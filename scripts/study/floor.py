# floor.py IN N OUT. One run per side with a floor from enough runs: 39 copies of real run 1 with
# +-1% noise on every *_gbs and *_ns field (identical settings, label "same"),
# then one run at +20% bandwidth (label "+20%", other settings) and one at +5%.
import json, gzip, uuid, copy, math, sys
doc = json.load(gzip.open(sys.argv[1]))
t = sorted(doc['runs'], key=lambda r: r['started'])[0]
def scale(v, fb, fl):
    if isinstance(v, dict):
        return {k: (x * fb if k.endswith('_gbs') else x * fl if k.endswith('_ns') else x)
                if isinstance(x, (int, float)) and not isinstance(x, bool) else scale(x, fb, fl) for k, x in v.items()}
    if isinstance(v, list):
        return [scale(x, fb, fl) for x in v]
    return v
runs = []
def add(label, cfg, thp, fb, fl, i):
    r = copy.deepcopy(t)
    r['uuid'] = str(uuid.uuid4()); r['label'] = label
    r['config'] = dict(r['config']); r['config']['thp_enabled'] = thp; r['config']['fingerprint'] = cfg
    r['config_hash'] = cfg
    r['started'] = '2026-11-25T%02d:%02d:00.000Z' % (i // 60, i % 60)
    r['finished'] = '2026-11-25T%02d:%02d:30.000Z' % (i // 60, i % 60)
    r['results'] = [dict(x, payload=scale(x['payload'], fb, fl)) for x in r['results']]
    runs.append(r)
for i in range(int(sys.argv[2])):
    n = 1 + 0.01 * math.sin(2.4 * i)
    add('same', 'aaaa0000000000a1', 'madvise', n, n, i)
add('+20%', 'bbbb0000000000b2', 'always', 1.20, 1.0, 100)
add('+5%', 'cccc0000000000c3', 'never', 1.05, 1.0, 101)
doc['runs'] = runs
json.dump(doc, open(sys.argv[3], 'w'))
