import random, sys
seed, index = int(sys.argv[1]), int(sys.argv[2])
r = random.Random(seed)
hi = 1000 if index < 5 else 2 * 10**9
t = 3 * index
print(t)
for _ in range(t):
    print(r.randint(1, hi), r.randint(1, hi))
