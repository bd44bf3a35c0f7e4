#!/usr/bin/env python3
"""ref_blackscholes.py — an independent check of `tessera run blackscholes`.

  ref_blackscholes.py INPUT OUTPUT [--riskfree R] [--volatility V]

Prices every option of INPUT (records of 3 little-endian float32: price,
strike, years) in double precision with the exact normal CDF (erfc) and
compares with OUTPUT (records of 2 float32: call, put).  The SDK formula's
polynomial CDF is within 7.5e-8 of the exact one and the kernel works in
single precision, so prices agree within 2e-4 + 1e-5 * price.  NaN inputs
must give NaN prices.  Exit 0 when all agree, 1 with the first mismatch.
"""
import math
import struct
import sys


def price(s, x, t, r, v):
    d1 = (math.log(s / x) + (r + 0.5 * v * v) * t) / (v * math.sqrt(t))
    d2 = d1 - v * math.sqrt(t)
    cnd = lambda d: 0.5 * math.erfc(-d / math.sqrt(2.0))
    e = math.exp(-r * t)
    return s * cnd(d1) - x * e * cnd(d2), x * e * (1 - cnd(d2)) - s * (1 - cnd(d1))


def main():
    args = sys.argv[1:]
    r, v = 0.02, 0.30
    if "--riskfree" in args:
        r = float(args[args.index("--riskfree") + 1])
    if "--volatility" in args:
        v = float(args[args.index("--volatility") + 1])
    data = open(args[0], "rb").read()
    out = open(args[1], "rb").read()
    n = len(data) // 12
    if len(out) != 8 * n:
        print(f"output has {len(out)} bytes, expected {8 * n}")
        return 1
    ins = struct.unpack(f"<{3 * n}f", data)
    outs = struct.unpack(f"<{2 * n}f", out)
    for i in range(n):
        s, x, t = ins[3 * i:3 * i + 3]
        got = outs[2 * i:2 * i + 2]
        if any(map(math.isnan, (s, x, t))):
            if not all(map(math.isnan, got)):
                print(f"option {i}: NaN input priced {got}")
                return 1
            continue
        want = price(s, x, t, r, v)
        for g, w in zip(got, want):
            if not abs(g - w) <= 2e-4 + 1e-5 * abs(w):
                print(f"option {i} ({s}, {x}, {t}): got {got}, want {want}")
                return 1
    print(f"{n} options agree with the double-precision reference")
    return 0


if __name__ == "__main__":
    sys.exit(main())
