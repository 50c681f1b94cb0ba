#!/usr/bin/env python3
import re
import sys

data = sys.stdin.read()
m = re.fullmatch(r"1 (0|[1-9][0-9]{0,6})\n", data)
sys.exit(42 if m and int(m.group(1)) <= 1000000 else 43)
