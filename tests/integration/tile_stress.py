#!/usr/bin/env python3
"""tile_stress.py TESSERA ROUNDS BOUND — one processor of two slowed to 5%
mid-run (cpu+cpu@0.05/0.3) must still finish within BOUND x the ideal.

The ideal comes from the same rounds: with one processor alone taking T1 for
the work W (rate r = W/T1), the mix does r*T + r*0.3 + 0.05*r*(T - 0.3), so
T = (T1 - 0.285) / 1.05.  Rounds alternate (one processor, then the mix) and
the best of each is used, because the machine is shared.  Exit 0 or 1.
"""
import json
import os
import subprocess
import sys
import tempfile


def seconds(tessera, procs, stats):
    subprocess.run([tessera, "run", "blackscholes", "--quiet", "--options", "2000000",
                    "--iterations", "60", "--processors", procs, "--stats", stats], check=True)
    return json.load(open(stats))["seconds"]


def main():
    tessera, rounds, bound = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    with tempfile.TemporaryDirectory() as tmp:
        stats = os.path.join(tmp, "s.json")
        one, mix = [], []
        for _ in range(rounds):
            one.append(seconds(tessera, "cpu", stats))
            mix.append(seconds(tessera, "cpu+cpu@0.05/0.3", stats))
    t1, tm = min(one), min(mix)
    ideal = (t1 - 0.285) / 1.05
    print(f"   one processor {t1:.3f} s; slowed mix {tm:.3f} s; ideal {ideal:.3f} s; "
          f"ratio {tm / ideal:.2f} (bound {bound})")
    return 0 if tm <= bound * ideal else 1


if __name__ == "__main__":
    sys.exit(main())
