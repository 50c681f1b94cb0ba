n = int(input())
print(2 * n, flush=True)
