#!/usr/bin/env python3
# The secret number, 1 <= x <= 1000, on a line of its own.
import re
import sys

data = sys.stdin.read()
m = re.fullmatch(r"([1-9][0-9]{0,3})\n", data)
sys.exit(42 if m and 1 <= int(m.group(1)) <= 1000 else 43)
