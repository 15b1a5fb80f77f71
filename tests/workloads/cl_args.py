#!/usr/bin/python3
"""Every kind of kernel argument, through pyopencl (Debian python3-pyopencl):
char..ulong, float, double, vectors (8-byte ones among them: the size of a
handle), structs by value, __local sizes, buffers, sub-buffers, images with a
sampler, SVM pointers. Each kernel writes what it received; the script checks
it against what it passed and prints one deterministic line per launch (the
test compares the output with and without the profiler), then "cl_args: ok".
A ulong whose bytes are a live buffer's handle is passed too: a by-value
argument the capture library must not take for the buffer.

Usage: cl_args.py  (exit 0 when every launch returned what was passed)"""
import sys

import numpy as np
import pyopencl as cl

SRC = r"""
typedef struct { int a; float b; } pair_t;             /* 8 bytes: a handle's size */
typedef struct { ulong x; double y; int z; } triple_t; /* 24 bytes with padding */

__kernel void scalars(__global double *out, char c, uchar uc, short s, ushort us, int i, uint ui,
                      long l, ulong ul, float f, double d)
{
    out[0] = c; out[1] = uc; out[2] = s; out[3] = us; out[4] = i; out[5] = ui;
    out[6] = (double)l; out[7] = (double)(ul >> 32); out[8] = (double)(ul & 0xffffffffUL);
    out[9] = f; out[10] = d;
}

__kernel void vectors(__global double *out, int2 i2, float2 f2, uchar8 c8, ushort4 s4, float4 f4,
                      ulong2 l2, double2 d2, char16 c16)
{
    out[0] = i2.x + i2.y; out[1] = f2.x * f2.y; out[2] = c8.s0 + c8.s7; out[3] = s4.x + s4.w;
    out[4] = f4.x + f4.y + f4.z + f4.w; out[5] = (double)(l2.x - l2.y); out[6] = d2.x - d2.y;
    out[7] = c16.s0 + c16.sf;
}

__kernel void structs(__global double *out, pair_t p, triple_t t)
{
    out[0] = p.a; out[1] = p.b; out[2] = (double)(t.x & 0xffffffffUL); out[3] = t.y; out[4] = t.z;
}

__kernel void locals(__global int *out, __local int *scratch, __local double *more, int n)
{
    int g = get_global_id(0), l = get_local_id(0);
    scratch[l] = g * n;
    more[l] = 0.5 * g;
    barrier(CLK_LOCAL_MEM_FENCE);
    out[g] = scratch[get_local_size(0) - 1 - l] + (int)(2 * more[l]);
}

__kernel void scale(__global float *v, float k)
{
    v[get_global_id(0)] *= k;
}

__kernel void handle_bytes(__global ulong *out, ulong v)
{
    out[0] = v;
}

__kernel void image_read(__global float *out, __read_only image2d_t img, sampler_t smp)
{
    int x = get_global_id(0), y = get_global_id(1);
    out[y * get_global_size(0) + x] = read_imagef(img, smp, (int2)(x, y)).x;
}

__kernel void svm_add(__global int *v, int k)
{
    v[get_global_id(0)] += k;
}
"""


def main():
    ctx = cl.create_some_context(interactive=False)
    dev = ctx.devices[0]
    q = cl.CommandQueue(ctx)
    prg = cl.Program(ctx, SRC).build()
    mf = cl.mem_flags
    out = np.zeros(16, dtype=np.float64)
    out_b = cl.Buffer(ctx, mf.READ_WRITE, out.nbytes)
    bad = []

    def check(name, got, want):
        ok = np.allclose(got, want)
        print("%s: %s %s" % (name, " ".join("%g" % x for x in got), "ok" if ok else "WRONG"))
        if not ok:
            bad.append(name)

    # char..ulong, float, double; ulongs with the high bits of heap and stack addresses
    for ul in (0x00007F3A12345678, 0x0000556677889900, 0xFFFFFFFF00000001):
        prg.scalars(q, (1,), None, out_b, np.int8(-5), np.uint8(250), np.int16(-300), np.uint16(60000),
                    np.int32(-70000), np.uint32(4000000000), np.int64(-5000000000), np.uint64(ul),
                    np.float32(1.5), np.float64(2.25))
        cl.enqueue_copy(q, out, out_b)
        check("scalars", out[:11], [-5, 250, -300, 60000, -70000, 4000000000, -5000000000, ul >> 32,
                                    ul & 0xFFFFFFFF, 1.5, 2.25])

    # vectors: 8-byte ones (int2, float2, uchar8, ushort4) and 16-byte ones
    int2 = cl.cltypes.make_int2(7, 0x7F00)
    float2 = cl.cltypes.make_float2(3.0, 0.5)
    uchar8 = cl.cltypes.make_uchar8(1, 2, 3, 4, 5, 6, 7, 200)
    ushort4 = cl.cltypes.make_ushort4(1000, 2, 3, 50000)
    float4 = cl.cltypes.make_float4(1, 2, 3, 4.5)
    ulong2 = cl.cltypes.make_ulong2(0x00007F0000001000, 0x00007F0000000FFF)
    double2 = cl.cltypes.make_double2(10.5, 0.25)
    char16 = cl.cltypes.make_char16(*([-3] + [0] * 14 + [9]))
    for _ in range(2):
        prg.vectors(q, (1,), None, out_b, int2, float2, uchar8, ushort4, float4, ulong2, double2, char16)
        cl.enqueue_copy(q, out, out_b)
        check("vectors", out[:8], [7 + 0x7F00, 1.5, 201, 51000, 10.5, 1, 10.25, 6])

    # structs by value: an 8-byte one and a padded 24-byte one
    pair_t = np.dtype([("a", np.int32), ("b", np.float32)])
    triple_t = np.dtype([("x", np.uint64), ("y", np.float64), ("z", np.int32), ("pad", np.int32)])
    pair = np.array([(0x7F01, 2.5)], dtype=pair_t)[0]
    triple = np.array([(0x00007F0000ABCDEF, -1.25, 42, 0)], dtype=triple_t)[0]
    for _ in range(2):
        prg.structs(q, (1,), None, out_b, pair, triple)
        cl.enqueue_copy(q, out, out_b)
        check("structs", out[:5], [0x7F01, 2.5, 0x00ABCDEF, -1.25, 42])

    # __local sizes
    n, wg = 64, 16
    iout = np.zeros(n, dtype=np.int32)
    iout_b = cl.Buffer(ctx, mf.WRITE_ONLY, iout.nbytes)
    for k in (3, 5):
        prg.locals(q, (n,), (wg,), iout_b, cl.LocalMemory(4 * wg), cl.LocalMemory(8 * wg), np.int32(k))
        cl.enqueue_copy(q, iout, iout_b)
        g = np.arange(n)
        want = (g // wg * wg + wg - 1 - g % wg) * k + g
        ok = np.array_equal(iout, want)
        print("locals %d: sum %d %s" % (k, int(iout.sum()), "ok" if ok else "WRONG"))
        if not ok:
            bad.append("locals")

    # a buffer and its sub-buffers (at the device's base address alignment)
    align = dev.mem_base_addr_align // 8
    v = np.arange(4 * align // 4, dtype=np.float32)
    v_b = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=v)
    half = v.nbytes // 2
    lo, hi = v_b.get_sub_region(0, half), v_b.get_sub_region(half, half)
    prg.scale(q, (v.size // 2,), None, lo, np.float32(2))
    prg.scale(q, (v.size // 2,), None, hi, np.float32(3))
    prg.scale(q, (v.size,), None, v_b, np.float32(0.5))
    res = np.empty_like(v)
    cl.enqueue_copy(q, res, v_b)
    want = v * np.where(np.arange(v.size) < v.size // 2, 2, 3) * 0.5
    check("sub-buffers", [res.sum()], [want.sum()])

    # a by-value ulong whose bytes are a live buffer's handle
    hb = np.zeros(1, dtype=np.uint64)
    hb_b = cl.Buffer(ctx, mf.WRITE_ONLY, hb.nbytes)
    prg.handle_bytes(q, (1,), None, hb_b, np.uint64(v_b.int_ptr))
    cl.enqueue_copy(q, hb, hb_b)
    ok = int(hb[0]) == v_b.int_ptr
    print("handle bytes: %s" % ("ok" if ok else "WRONG"))
    if not ok:
        bad.append("handle bytes")

    # an image read through a sampler
    if dev.image_support:
        w, h = 8, 4
        pix = np.arange(w * h, dtype=np.float32).reshape(h, w)
        img = cl.Image(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, cl.ImageFormat(cl.channel_order.R,
                       cl.channel_type.FLOAT), shape=(w, h), hostbuf=pix)
        smp = cl.Sampler(ctx, False, cl.addressing_mode.CLAMP_TO_EDGE, cl.filter_mode.NEAREST)
        fo = np.zeros(w * h, dtype=np.float32)
        fo_b = cl.Buffer(ctx, mf.WRITE_ONLY, fo.nbytes)
        prg.image_read(q, (w, h), None, fo_b, img, smp)
        cl.enqueue_copy(q, fo, fo_b)
        check("image", [fo.sum()], [pix.sum()])
    else:
        print("image: no image support on this device")

    # SVM pointers (coarse-grained buffers)
    caps = getattr(dev, "svm_capabilities", 0)
    if caps & cl.device_svm_capabilities.COARSE_GRAIN_BUFFER:
        ary = cl.SVM(cl.csvm_empty(ctx, 64, np.int32))
        with ary.map_rw(q) as a:
            a[:] = np.arange(64)
        for k in (1, 2):
            prg.svm_add(q, (64,), None, ary, np.int32(k))
        with ary.map_ro(q) as a:
            total = int(a.sum())
        ok = total == int(np.arange(64).sum()) + 3 * 64
        print("svm: sum %d %s" % (total, "ok" if ok else "WRONG"))
        if not ok:
            bad.append("svm")
    else:
        print("svm: no coarse-grained SVM on this device")

    q.finish()
    if bad:
        print("cl_args: WRONG: %s" % ", ".join(bad))
        return 1
    print("cl_args: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
