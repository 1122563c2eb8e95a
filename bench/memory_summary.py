#!/usr/bin/env python3
"""Where a plan's context memory goes, from `kiln inspect PLAN` JSON: the activation arena as
planned, the context (a static plan's built-in steps take their workspace in the arena's holes),
the liveness floor of the plan's step order (the most bytes that are live at once, tensors
that share arena bytes, such as in-place outputs, counted once), the step where that peak falls and
what is live there, and the steps whose tactics ask for the most workspace.
usage: memory_summary.py INSPECT_JSON [--top N]"""

import json
import sys

MIB = 2**20


def live_ranges(plan):
    """Each activation's (first writer, last reader) step, keyed by name, with its arena bytes."""
    ranges = {}
    for s, step in enumerate(plan["layers"]):
        for t in step["inputs"] + step["outputs"]:
            if t["kind"] != "activation":
                continue
            lo, hi = ranges.get(t["name"], (s, s, t))[:2]
            ranges[t["name"]] = (min(lo, s), max(hi, s), t)
    return ranges


def union_bytes(intervals):
    total, end = 0, -1
    for lo, hi in sorted(intervals):
        if hi <= end:
            continue
        total += hi - max(lo, end)
        end = hi
    return total


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    top = int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 8
    with open(sys.argv[1]) as f:
        plan = json.load(f)
    mem = plan["memory"]
    steps = plan["layers"]
    ranges = live_ranges(plan)
    live_at = []
    for s in range(len(steps)):
        live = [t for lo, hi, t in ranges.values() if lo <= s <= hi]
        spans = [(t["arena_offset"], t["arena_offset"] + t["bytes"]) for t in live]
        live_at.append((union_bytes(spans), live))
    peak_step = max(range(len(steps)), key=lambda s: live_at[s][0]) if steps else 0
    print(f"arena planned  {mem['planned_activation_bytes'] / MIB:9.1f} MiB "
          f"(every tensor its own slot: {mem['naive_activation_bytes'] / MIB:.1f} MiB)")
    print(f"workspace      {mem['workspace_bytes'] / MIB:9.1f} MiB (the largest step's)")
    apart = mem["planned_activation_bytes"] + mem["workspace_bytes"]
    context = mem.get("context_bytes", apart)
    print(f"context        {context / MIB:9.1f} MiB (arena and workspace apart: {apart / MIB:.1f} MiB)")
    if not steps:
        return 0
    floor, live = live_at[peak_step]
    print(f"liveness floor {floor / MIB:9.1f} MiB at step {peak_step} "
          f"({steps[peak_step]['name']}), live there:")
    for t in sorted(live, key=lambda t: -t["bytes"]):
        print(f"    {t['bytes'] / MIB:8.1f} MiB  {t['name']} {t['dims']} {t['type']} {t['format']}")
    print(f"steps by workspace (top {top}), with the activations live there:")
    by_ws = sorted(range(len(steps)), key=lambda s: -steps[s]["workspace_bytes"])[:top]
    for s in by_ws:
        st = steps[s]
        print(f"  {st['workspace_bytes'] / MIB:8.1f} MiB  step {s:3d} {st['name']} "
              f"{st['type']} {st['tactic']}  live {live_at[s][0] / MIB:.1f} MiB")
    combined = max(live_at[s][0] + steps[s]["workspace_bytes"] for s in range(len(steps)))
    print(f"floor with each step's workspace beside its live set: {combined / MIB:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
