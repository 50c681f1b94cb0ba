print(int(input()) + {{k}})
