#!/usr/bin/env python3
"""Usage: make-tree.py DIR COUNT SIZE_KIB

The many-objects benchmarks' tree (bench-many.sh, bench-copy-services.sh): COUNT files of
SIZE_KIB random bytes in 100 directories (DIR/d00 .. d99, files f0000000 ...), so that a
listing has nested names and pages of mixed directories, as a user's data does."""
import os
import sys

root, count, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) * 1024
for i in range(count):
    d = os.path.join(root, f"d{i % 100:02}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"f{i:07}"), "wb") as f:
        f.write(os.urandom(size))
