#!/usr/bin/env python3
"""CPU time by process, while a command runs: where `make test` spends it.

Usage: scripts/cpu-by-process.py OUT -- COMMAND...
  e.g. scripts/cpu-by-process.py /tmp/cpu.txt -- make test

Samples /proc/*/stat every 0.3 s, keeps each process's last user+system
time (less what it had used before COMMAND started), and writes the totals by command (JVMs told apart: DynamoDB Local,
kotlinc; test binaries as gotest:NAME) to OUT, largest first. Processes
shorter than a sample are missed; the sampling itself costs a few percent
of one core. It exits with COMMAND's status.
"""
import collections
import os
import subprocess
import sys
import threading
import time


def key(pid, comm):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            args = " ".join(a.decode(errors="replace") for a in f.read().split(b"\0") if a)
    except OSError:
        args = ""
    if comm == "java":
        if "DynamoDBLocal" in args:
            return "java:dynamodb"
        if "kotlin" in args.lower():
            return "java:kotlinc"
        return "java:other"
    if comm.endswith(".test"):
        return "gotest:" + comm
    return comm


def sample(seen, stop):
    first = True
    while not stop.is_set():
        for pid in os.listdir("/proc"):
            if not pid.isdigit():
                continue
            try:
                with open(f"/proc/{pid}/stat") as f:
                    st = f.read()
            except OSError:
                continue
            r = st.rfind(")")
            comm, fields = st[st.find("(") + 1:r], st[r + 2:].split()
            ticks = int(fields[11]) + int(fields[12])
            if pid not in seen or seen[pid][0] != comm:
                # What a process had used before the command started is
                # not the command's.
                seen[pid] = [comm, ticks, key(pid, comm), ticks if first else 0]
            else:
                seen[pid][1] = ticks
        first = False
        time.sleep(0.3)


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        sys.exit(__doc__)
    out, cmd = sys.argv[1], sys.argv[3:]
    seen, stop = {}, threading.Event()
    t = threading.Thread(target=sample, args=(seen, stop))
    t.start()
    try:
        code = subprocess.call(cmd)
    finally:
        stop.set()
        t.join()
    hz = os.sysconf("SC_CLK_TCK")
    totals = collections.Counter()
    for _, ticks, k, before in list(seen.values()):
        totals[k] += ticks - before
    with open(out, "w") as f:
        for k, ticks in totals.most_common(40):
            f.write(f"{ticks / hz:8.1f} s  {k}\n")
    sys.exit(code)


if __name__ == "__main__":
    main()
