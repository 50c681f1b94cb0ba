#!/usr/bin/env python3
# Pass 1 gets "1 n" and must print some a with 0 <= a <= n; pass 2 gets
# "2 a" and must print a + 1.
import sys

in_path, _, feedback = sys.argv[1], sys.argv[2], sys.argv[3]


def reject(msg):
    with open(feedback + "judgemessage.txt", "a") as f:
        f.write(msg + "\n")
    sys.exit(43)


p, x = map(int, open(in_path).read().split())
tokens = sys.stdin.read().split()
if len(tokens) != 1 or not tokens[0].lstrip("-").isdigit():
    reject(f"pass {p}: expected one integer")
y = int(tokens[0])
if p == 1:
    if not 0 <= y <= x:
        reject(f"pass 1: {y} is not between 0 and {x}")
    with open(feedback + "nextpass.in", "w") as f:
        f.write(f"2 {y}\n")
elif y != x + 1:
    reject(f"pass 2: {y} is not {x + 1}")
sys.exit(42)
