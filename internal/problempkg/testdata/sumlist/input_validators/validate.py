#!/usr/bin/env python3
# n (1 <= n <= 1000), then n integers 1 <= a_i <= 10^9 on one line.
import re
import sys

lines = sys.stdin.read().split("\n")
ok = len(lines) == 3 and lines[2] == "" and re.fullmatch(r"[1-9][0-9]*", lines[0])
if ok:
    n = int(lines[0])
    xs = lines[1].split(" ")
    ok = 1 <= n <= 1000 and len(xs) == n and all(re.fullmatch(r"[1-9][0-9]*", x) and int(x) <= 10**9 for x in xs)
sys.exit(42 if ok else 43)
