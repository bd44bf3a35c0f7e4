#!/bin/bash
# fish_long.sh (long tier) — fish.sh with the full cross product: every
# algorithm configuration x workers 1/2/3/4 x jitter (none, cloud with two
# seeds, modern) x with and without --repart-every, bitwise equal to the
# sequential baseline; longer reference runs; more mpirun layouts.
FISH_TIER=long exec bash "$(dirname "$0")/fish.sh"
