p, x = map(int, input().split())
print(x + 1)
