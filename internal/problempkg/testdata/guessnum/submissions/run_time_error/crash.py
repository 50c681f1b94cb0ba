print("? 500", flush=True)
if input() != "correct":
    raise RuntimeError("gave up")
print("! 500", flush=True)
