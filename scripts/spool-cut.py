#!/usr/bin/env python3
"""The first seconds of an agent spool, for the store's byte figures (#40, bench/RESULTS.md w45f).

  spool-cut.py SRC DST SECONDS [--list]
      Copy the spool session directory SRC (DIR/<agent id>-<boot id>, agent/spool.h) to DST (created),
      keeping, in order, every frame up to the last Samples record whose interval ends within
      SECONDS (+0.5 s) of the first Samples record's start (t_ns - interval_ns); later frames are left
      out. Frames are cut at their boundaries (varint length + Envelope), so `agent spool send` reads
      DST's segments as it reads any spool's. --list prints each frame (segment, seq, body field, bytes,
      interval end in s).
  spool-cut.py --keys SRC
      The sample keys (pid, tid, ip, stack_id, kip) of SRC's Samples records: stored and distinct
      (new to the session) so far, every 10 s of the session and at the end.

Reads the wire by hand (proto/profiler.proto: Envelope seq = 1, samples = 15; proto/samples.proto:
Samples t_ns = 2, interval_ns = 3, pid = 9, tid = 10, ip = 11, stack_id = 12, kip = 15), no protobuf
module needed. A test tool: the spool is trusted (a damaged frame raises)."""
import glob
import os
import shutil
import sys


def varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return v, i


def fields(b):
    i = 0
    while i < len(b):
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v, i = b[i:i + 8], i + 8
        elif wt == 2:
            n, i = varint(b, i)
            v, i = b[i:i + n], i + n
        elif wt == 5:
            v, i = b[i:i + 4], i + 4
        else:
            raise ValueError("wire type %d" % wt)
        yield f, wt, v


def frames(path):
    b = open(path, "rb").read()
    i = 0
    while i < len(b):
        n, j = varint(b, i)
        yield b[i:j + n], b[j:j + n]
        i = j + n


def packed(v):
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def records(src):
    """(segment name, raw frame, seq, body field, Samples message or None) in spool order."""
    for sp in sorted(glob.glob(os.path.join(src, "seg-*.spl"))):
        for raw, env in frames(sp):
            seq = body = 0
            msg = None
            for f, _, v in fields(env):
                if f == 1:
                    seq = v
                elif f >= 10:
                    body = f
                    msg = v if f == 15 else None
            yield os.path.basename(sp), raw, seq, body, msg


def times(msg):
    t = iv = 0
    for g, _, w in fields(msg):
        if g == 2:
            t = w
        elif g == 3:
            iv = w
    return t, iv


def cut(src, dst, secs, listing):
    recs = []
    for name, raw, seq, body, msg in records(src):
        t, iv = times(msg) if msg is not None else (None, None)
        recs.append((name, raw, seq, body, t, iv))
    samp = [r for r in recs if r[3] == 15]
    if not samp:
        sys.exit("%s: no Samples record" % src)
    t0 = samp[0][4] - samp[0][5]
    last = max(k for k, r in enumerate(recs) if r[3] == 15 and r[4] - t0 <= secs * 1e9 + 5e8)
    if listing:
        for k, r in enumerate(recs):
            end = "" if r[4] is None else "%.3f" % ((r[4] - t0) / 1e9)
            print(r[0], r[2], r[3], len(r[1]), end, "<-- cut" if k == last else "")
    os.makedirs(dst)
    for m in ("hello.frame", "collector"):
        if os.path.exists(os.path.join(src, m)):
            shutil.copy(os.path.join(src, m), dst)
    out = {}
    for r in recs[:last + 1]:
        out.setdefault(r[0], []).append(r[1])
    for name, fr in out.items():
        with open(os.path.join(dst, name), "wb") as f:
            f.write(b"".join(fr))
    kinds = {}
    for r in recs[:last + 1]:
        kinds[r[3]] = kinds.get(r[3], 0) + 1
    print("kept %d of %d frames (seq %d..%d), %d Samples records, last interval end %.3f s; frames by body field: %s"
          % (last + 1, len(recs), recs[0][2], recs[last][2], kinds.get(15, 0), (recs[last][4] - t0) / 1e9, kinds))


def keys(src):
    seen, stored, t0, nextp = set(), 0, None, 10
    for _, _, _, body, msg in records(src):
        if body != 15:
            continue
        cols = {9: [], 10: [], 11: [], 12: [], 15: []}
        t, iv = times(msg)
        for g, w, x in fields(msg):
            if g in cols:
                cols[g].extend(packed(x) if w == 2 else [x])
        if t0 is None:
            t0 = t - iv
        n = len(cols[9])
        for c in cols:
            if not cols[c]:
                cols[c] = [0] * n
        seen.update(zip(cols[9], cols[10], cols[11], cols[12], cols[15]))
        stored += n
        if (t - t0) / 1e9 >= nextp:
            print("%6.1f s: %d keys stored, %d distinct" % ((t - t0) / 1e9, stored, len(seen)))
            nextp += 10
    print("end: %d keys stored, %d distinct" % (stored, len(seen)))


if __name__ == "__main__":
    a = [x for x in sys.argv[1:] if x != "--list"]
    if len(a) == 2 and a[0] == "--keys":
        keys(a[1])
    elif len(a) == 3:
        cut(a[0], a[1], float(a[2]), "--list" in sys.argv)
    else:
        sys.exit(__doc__)
