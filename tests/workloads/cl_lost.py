#!/usr/bin/python3
"""Processes that end without the capture library's exit, through pyopencl
(Debian python3-pyopencl), for tests/integration/test_opencl_lost.c:

  cl_lost.py pool TASKS K  a multiprocessing Pool of 2 workers; each task
                           launches K tiny kernels, reads the buffer back and
                           finishes; leaving `with Pool()` terminates the
                           workers (SIGTERM). Prints "enqueued N".
  cl_lost.py abort K       K kernels and a read, finish(), print
                           "enqueued N", then os.abort() at once.
  cl_lost.py drain N M [abort]
                           M kernels on an out-of-order queue, held by a
                           user event, while N kernels each with a finish()
                           run on an in-order queue; then the event is set,
                           the out-of-order queue finished, "enqueued N"
                           printed, and with `abort` os.abort() at once.
  cl_lost.py busy FILE     10 kernels, a read and finish() in a loop (2 ms
                           apart, at most 120 s), writing the number enqueued
                           so far into FILE after each round, until a signal
                           ends it.

N counts every command the script enqueued (kernels and reads): the test
compares it with what the profiler timed plus what it says it could not."""
import multiprocessing
import os
import resource
import sys
import time

import numpy as np
import pyopencl as cl

SRC = "__kernel void tick(__global int *a) { a[get_global_id(0)] += 1; }"
N = 64
_state = {}


def _setup():
    if not _state:
        ctx = cl.create_some_context(interactive=False)
        q = cl.CommandQueue(ctx)
        prg = cl.Program(ctx, SRC).build()
        buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, N * 4)
        _state.update(ctx=ctx, q=q, knl=prg.tick, buf=buf)
    return _state


def _round(k):
    s = _setup()
    for _ in range(k):
        s["knl"](s["q"], (N,), None, s["buf"])
    out = np.empty(N, dtype=np.int32)
    cl.enqueue_copy(s["q"], out, s["buf"])
    s["q"].finish()
    return k + 1


def _task(args):
    return _round(args)


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode == "pool":
        tasks, k = int(sys.argv[2]), int(sys.argv[3])
        with multiprocessing.get_context("fork").Pool(2) as p:
            total = sum(p.map(_task, [k] * tasks, chunksize=1))
        print("enqueued %d" % total, flush=True)
        return 0
    if mode == "abort":
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        total = _round(int(sys.argv[2]))
        print("enqueued %d" % total, flush=True)
        os.abort()
    if mode == "drain":
        n, m = int(sys.argv[2]), int(sys.argv[3])
        if sys.argv[4:] == ["abort"]:
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        s = _setup()
        ooo = cl.CommandQueue(s["ctx"], properties=cl.command_queue_properties.OUT_OF_ORDER_EXEC_MODE_ENABLE)
        gate = cl.UserEvent(s["ctx"])
        for _ in range(m):
            s["knl"](ooo, (1,), None, s["buf"], wait_for=[gate])
        for _ in range(n):
            s["knl"](s["q"], (1,), None, s["buf"])
            s["q"].finish()
        gate.set_status(cl.command_execution_status.COMPLETE)
        ooo.finish()
        print("enqueued %d" % (n + m), flush=True)
        if sys.argv[4:] == ["abort"]:
            os.abort()
        return 0
    if mode == "busy":
        fd = os.open(sys.argv[2], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        total, end = 0, time.monotonic() + 120
        while time.monotonic() < end:
            total += _round(10)
            os.pwrite(fd, b"%-20d\n" % total, 0)
            time.sleep(0.002)  # busy, but not more than a loaded collector stores
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
