import math
r = float(input())
# The right answer, then output the problem does not ask for.
print(math.pi * r * r, 0)
