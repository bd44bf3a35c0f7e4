#!/usr/bin/env python3
"""examples_ref.py — independent answers for the walkthrough programs of
examples/ (tests/install/examples.sh compares their output with these):

  examples_ref.py sssp NV DEG          "reached R sum S" of Dijkstra's distances
  examples_ref.py heat N T             "center C sum S" of 2-D heat after T ticks
  examples_ref.py mandelbrot W H       "sum S inside I" of the iteration counts

Python floats are IEEE doubles, so the heat sums match C's bit for bit when
the operations come in the same order; the Mandelbrot floats are rounded to
binary32 after every operation (one rounding from the exact double result
is the binary32 result for +, - and *).
"""
import heapq
import struct
import sys


def lcg(state):
    state = (state * 6364136223846793005 + 1442695040888963407) % (1 << 64)
    return state, state >> 33


def sssp(nv, deg):
    adj, s = [], 42
    for _ in range(nv):
        edges = []
        for _ in range(deg):
            s, u = lcg(s)
            s, w = lcg(s)
            edges.append((u % nv, 1 + w % 100))
        adj.append(edges)
    dist = {0: 0}
    heap = [(0, 0)]
    while heap:
        d, v = heapq.heappop(heap)
        if d > dist[v]:
            continue
        for u, w in adj[v]:
            if d + w < dist.get(u, 1 << 62):
                dist[u] = d + w
                heapq.heappush(heap, (d + w, u))
    return "reached %d sum %d" % (len(dist), sum(dist.values()))


def heat(n, ticks):
    u = [[0.0] * n for _ in range(n)]
    for c in range(n):
        u[0][c] = 1.0
    for _ in range(ticks):
        v = [row[:] for row in u]
        for r in range(1, n - 1):
            for c in range(1, n - 1):
                v[r][c] = u[r][c] + 0.2 * (((u[r - 1][c] + u[r + 1][c]) +
                                            (u[r][c - 1] + u[r][c + 1])) - 4.0 * u[r][c])
        u = v
    total = 0.0
    for row in u:
        for x in row:
            total += x
    return "center %.17g sum %.17g" % (u[n // 2][n // 2], total)


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def mandelbrot(w, h):
    x0, y0, dx, dy = f32(-2.0), f32(-1.25), f32(3.0 / f32(w)), f32(2.5 / f32(h))
    total = inside = 0
    for r in range(h):
        cy = f32(y0 + f32(f32(r) * dy))
        for c in range(w):
            cx = f32(x0 + f32(f32(c) * dx))
            x = y = x2 = y2 = 0.0
            k = 0
            while f32(x2 + y2) <= 4.0 and k < 200:
                y = f32(f32(f32(2.0 * x) * y) + cy)
                x = f32(f32(x2 - y2) + cx)
                x2, y2 = f32(x * x), f32(y * y)
                k += 1
            total += k
            inside += k == 200
    return "sum %d inside %d" % (total, inside)


if __name__ == "__main__":
    what, a, b = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    print({"sssp": sssp, "heat": heat, "mandelbrot": mandelbrot}[what](a, b))
