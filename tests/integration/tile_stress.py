#!/usr/bin/env python3
"""tile_stress.py TESSERA ROUNDS BOUND — one processor of two slowed to 5%
mid-run (cpu+cpu@0.05/0.3) must still finish within BOUND x the ideal.

The ideal comes from the same rounds, on the cores the machine actually
gave: one processor alone takes T1 for the work W (rate a = W/T1), two
unslowed ones T2 (the second adds b = W/T2 - a, which is a on a quiet
machine and less on a loaded one), and the slowed mix then does
a*T + b*0.3 + 0.05*b*(T - 0.3) = W.  On a quiet machine (b = a) that is
T = (T1 - 0.285) / 1.05.  Rounds alternate (one processor, two, the mix) and
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


def ideal_seconds(t1, t2, slow=0.05, at=0.3):
    """The slowed mix's ideal time for W = 1 (see above)."""
    a = 1.0 / t1
    b = max(1.0 / t2 - a, 0.0)
    return (1.0 - b * at * (1.0 - slow)) / (a + slow * b)


def main():
    tessera, rounds, bound = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    with tempfile.TemporaryDirectory() as tmp:
        stats = os.path.join(tmp, "s.json")
        one, two, mix = [], [], []
        for _ in range(rounds):
            one.append(seconds(tessera, "cpu", stats))
            two.append(seconds(tessera, "cpu+cpu", stats))
            mix.append(seconds(tessera, "cpu+cpu@0.05/0.3", stats))
    t1, t2, tm = min(one), min(two), min(mix)
    ideal = ideal_seconds(t1, t2)
    print(f"   one processor {t1:.3f} s; two {t2:.3f} s; slowed mix {tm:.3f} s; "
          f"ideal {ideal:.3f} s; ratio {tm / ideal:.2f} (bound {bound})")
    return 0 if tm <= bound * ideal else 1


if __name__ == "__main__":
    sys.exit(main())
