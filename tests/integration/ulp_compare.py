#!/usr/bin/env python3
"""ulp_compare.py A B ULPS — two float32 files agree within ULPS units in the
last place (NaN equals NaN); exit 0, or 1 naming the first difference."""
import struct
import sys


def ordered(bits):
    return bits if bits >= 0 else -(bits & 0x7FFFFFFF)


a, b = open(sys.argv[1], "rb").read(), open(sys.argv[2], "rb").read()
limit = int(sys.argv[3])
if len(a) != len(b):
    sys.exit(f"sizes differ: {len(a)} and {len(b)}")
n = len(a) // 4
fa, fb = struct.unpack(f"<{n}f", a), struct.unpack(f"<{n}f", b)
ia, ib = struct.unpack(f"<{n}i", a), struct.unpack(f"<{n}i", b)
worst = 0
for k in range(n):
    if fa[k] != fa[k] and fb[k] != fb[k]:
        continue
    d = abs(ordered(ia[k]) - ordered(ib[k]))
    if d > limit:
        sys.exit(f"value {k}: {fa[k]!r} and {fb[k]!r} differ by {d} ulp (limit {limit})")
    worst = max(worst, d)
print(f"{n} values within {worst} ulp")
