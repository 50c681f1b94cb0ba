#!/usr/bin/env python3
# The input is one real number 0 < r <= 100000 on a line of its own.
import re
import sys

data = sys.stdin.read()
if not re.fullmatch(r"(0|[1-9][0-9]*)(\.[0-9]+)?\n", data):
    sys.exit(43)
r = float(data)
if not 0 < r <= 100000:
    sys.exit(43)
sys.exit(42)
