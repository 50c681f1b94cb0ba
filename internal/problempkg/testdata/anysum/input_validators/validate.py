#!/usr/bin/env python3
# One integer 2 <= n <= 10^9, no leading zeros, then a newline.
import re
import sys

data = sys.stdin.read()
m = re.fullmatch(r"([1-9][0-9]{0,9})\n", data)
sys.exit(42 if m and 2 <= int(m.group(1)) <= 10**9 else 43)
