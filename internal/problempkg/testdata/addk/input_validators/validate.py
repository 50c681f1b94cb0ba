# Accepts one integer n, 0 <= n <= {{max_n}} (the bound comes both from
# the constant and from test_group.yaml's argument): exit 42, else 43.
import re
import sys

if len(sys.argv) < 2 or int(sys.argv[1]) != {{max_n}}:
    sys.exit(43)
line = sys.stdin.readline()
if not re.fullmatch(r"(0|[1-9][0-9]*)\n", line) or int(line) > {{max_n}} or sys.stdin.read():
    sys.exit(43)
sys.exit(42)
