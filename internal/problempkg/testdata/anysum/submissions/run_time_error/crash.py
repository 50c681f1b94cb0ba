n = int(input())
if n > 100:
    raise SystemExit(3)
print(1, n - 1)
