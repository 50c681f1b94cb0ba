import sys
lines = sys.stdin.read().split("\n")
assert lines[-1] == ""
lines = lines[:-1]
t = int(lines[0])
assert str(t) == lines[0] and 1 <= t <= 100 and len(lines) == t + 1
for line in lines[1:]:
    a, b = line.split(" ")
    for v in (a, b):
        assert str(int(v)) == v and 1 <= int(v) <= 2 * 10**9
