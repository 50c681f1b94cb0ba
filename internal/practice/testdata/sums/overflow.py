import sys
d = sys.stdin.read().split()
for i in range(int(d[0])):
    s = int(d[1 + 2*i]) + int(d[2 + 2*i])
    if s >= 2**31:
        s -= 2**32
    print(s)
