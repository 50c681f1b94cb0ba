from k import K

print(int(input()) + K)
