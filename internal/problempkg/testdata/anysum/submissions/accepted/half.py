n = int(input())
print(n // 2, n - n // 2)
