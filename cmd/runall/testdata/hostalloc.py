#!/usr/bin/env python3
"""Takes real host memory the way a trial does: grows to --mib MiB over --over seconds,
writing every page so that the kernel charges it, holds it --hold seconds, then exits 0.

It prints one line per step ("host memory: 128 MiB") and "holding N MiB" once it holds
all of it, so that a test can wait for that line."""
import argparse
import sys
import time

PAGE = 4096
STEP = 16 << 20  # grow 16 MiB at a time


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--mib", type=int, required=True, help="MiB to take")
    ap.add_argument("--over", type=float, default=2.0, help="seconds to grow over")
    ap.add_argument("--hold", type=float, default=2.0, help="seconds to hold it")
    a = ap.parse_args()
    want = a.mib << 20
    steps = max(1, want // STEP)
    held = []
    total = 0
    for i in range(steps):
        n = want - total if i == steps - 1 else STEP
        b = bytearray(n)
        b[0::PAGE] = b"\x01" * len(range(0, n, PAGE))  # every page written: charged
        held.append(b)
        total += n
        print("host memory: %d MiB" % (total >> 20), flush=True)
        if a.over > 0 and i < steps - 1:
            time.sleep(a.over / steps)
    print("holding %d MiB" % (total >> 20), flush=True)
    time.sleep(a.hold)
    return 0


if __name__ == "__main__":
    sys.exit(main())
