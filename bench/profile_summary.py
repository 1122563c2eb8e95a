#!/usr/bin/env python3
"""Sums a `kiln bench --profile` per-layer table by layer type and tactic: how many layers, their
summed mean time and its share, largest first, and the summed median host time of their launches
(where a layer-by-layer enqueue's host cost goes). Where a network's time goes at a glance.
usage: profile_summary.py PROFILE_LOG [--top N]"""

import re
import sys
from collections import defaultdict

ROW = re.compile(r"^\s*(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)%(?:\s+([0-9.]+))?")


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    top = int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 20
    groups = defaultdict(lambda: [0, 0.0, 0.0])
    total = host = 0.0
    with open(sys.argv[1]) as f:
        for line in f:
            m = ROW.match(line)
            if not m:
                continue
            key = (m.group(3), m.group(4))
            groups[key][0] += 1
            groups[key][1] += float(m.group(5))
            total += float(m.group(5))
            if m.group(9):  # tables from before the host column have none
                groups[key][2] += float(m.group(9))
                host += float(m.group(9))
    if not groups:
        print(f"{sys.argv[1]}: no per-layer table", file=sys.stderr)
        return 1
    print(f"{'type':20} {'tactic':28} {'layers':>6} {'ms':>9} {'share':>6} {'host ms':>9}")
    for (kind, tactic), (n, ms, h) in sorted(groups.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"{kind:20} {tactic:28} {n:6d} {ms:9.3f} {100 * ms / total:5.1f}% {h:9.4f}")
    print(f"{'all':20} {'':28} {sum(g[0] for g in groups.values()):6d} {total:9.3f} {'':6} {host:9.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
