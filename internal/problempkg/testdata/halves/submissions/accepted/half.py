p, x = map(int, input().split())
print(x // 2 if p == 1 else x + 1)
