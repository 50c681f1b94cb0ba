# Treats every pass as the first: right on pass 1, wrong on pass 2.
p, x = map(int, input().split())
print(x // 2)
