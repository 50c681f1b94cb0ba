# Prints the first number: wrong on every test of more than one number.
input()
print(input().split()[0])
