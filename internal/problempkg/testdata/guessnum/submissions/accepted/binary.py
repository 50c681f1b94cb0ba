lo, hi = 1, 1000
while lo < hi:
    mid = (lo + hi) // 2
    print("?", mid, flush=True)
    r = input()
    if r == "correct":
        lo = hi = mid
    elif r == "lower":
        hi = mid - 1
    else:
        lo = mid + 1
print("!", lo, flush=True)
