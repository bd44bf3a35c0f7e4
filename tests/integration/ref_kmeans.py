#!/usr/bin/env python3
"""Independent sequential k-means (Lloyd) for checking `tessera run kmeans`.

Usage: ref_kmeans.py POINTS K ITERATIONS CENTRES_OUT [ASSIGNMENTS_OUT]

Follows docs/kmeans.md: points file with one point per line ('#' lines are
comments); initial centres are the first K points; each iteration assigns
every point to the nearest centre by squared Euclidean distance (ties to the
lowest index), then moves each centre to the mean of its points (an empty
cluster keeps its centre).  Writes the final centres (%.17g, space
separated) and the assignments of the last iteration (one index per line).
Standard library only.
"""
import sys


def read_points(path):
    points = []
    with open(path) as f:
        for line in f:
            text = line.strip()
            if text.startswith('#'):
                continue
            points.append([float(x) for x in text.split()])
    return points


def nearest(x, centres):
    best, best_dist = 0, float('inf')
    for j, c in enumerate(centres):
        dist = 0.0
        for d in range(len(x)):
            diff = x[d] - c[d]
            dist += diff * diff
        if dist < best_dist:
            best, best_dist = j, dist
    return best


def lloyd(points, k, iterations):
    dim = len(points[0])
    centres = [list(p) for p in points[:k]]
    assign = []
    for _ in range(iterations):
        assign = [nearest(x, centres) for x in points]
        sums = [[0.0] * dim for _ in range(k)]
        counts = [0] * k
        for x, c in zip(points, assign):
            counts[c] += 1
            for d in range(dim):
                sums[c][d] += x[d]
        for j in range(k):
            if counts[j] > 0:
                centres[j] = [s / counts[j] for s in sums[j]]
    return centres, assign


def main(argv):
    if len(argv) not in (5, 6):
        sys.exit(__doc__)
    points = read_points(argv[1])
    k, iterations = int(argv[2]), int(argv[3])
    if k > len(points):
        sys.exit('ref_kmeans: fewer points than K')
    centres, assign = lloyd(points, k, iterations)
    with open(argv[4], 'w') as f:
        for c in centres:
            f.write(' '.join('%.17g' % v for v in c) + '\n')
    if len(argv) == 6:
        with open(argv[5], 'w') as f:
            f.write(''.join('%d\n' % a for a in assign))


if __name__ == '__main__':
    main(sys.argv)
