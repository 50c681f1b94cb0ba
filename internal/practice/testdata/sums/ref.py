import sys
d = sys.stdin.read().split()
for i in range(int(d[0])):
    print(int(d[1 + 2*i]) + int(d[2 + 2*i]))
