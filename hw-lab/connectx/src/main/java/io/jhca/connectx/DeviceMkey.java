package io.jhca.connectx;

import io.jhca.verbs.MemoryRegion;

/**
 * A memory key in MTT mode: {@code [start, start + length)} of the key's address space mapped, page by page, to the
 * DMA pages its translation table names. The model requires those pages to be contiguous in host memory (true of
 * any region the driver allocates or maps whole), so the key is one host range, registered on the rxe side under the
 * same key value. key = mkey_index &lt;&lt; 8 | mkey_7_0 (mlx5_ifc mkc).
 */
final class DeviceMkey {

    final int index;
    final int key;
    final DevicePd pd;
    final long start;
    final long length;
    /** Host address of byte {@code start}. */
    final long host;
    final boolean localWrite;
    final boolean remoteRead;
    final boolean remoteWrite;
    final boolean atomic;
    MemoryRegion rxeMr;
    /** False once its memory was unmapped under it: every later use is a protection error. */
    boolean valid = true;

    DeviceMkey(int index, int key, DevicePd pd, long start, long length, long host, boolean localWrite, boolean remoteRead,
            boolean remoteWrite, boolean atomic) {
        this.index = index;
        this.key = key;
        this.pd = pd;
        this.start = start;
        this.length = length;
        this.host = host;
        this.localWrite = localWrite;
        this.remoteRead = remoteRead;
        this.remoteWrite = remoteWrite;
        this.atomic = atomic;
    }

    /** Whether {@code [va, va + len)} lies in the key (overflow-safe, unsigned length). */
    boolean contains(long va, long len) {
        if (len < 0 || Long.compareUnsigned(va, start) < 0) {
            return false;
        }
        long off = va - start;
        return Long.compareUnsigned(off, length) <= 0 && len <= length - off;
    }

    /** The host address of key address {@code va} (checked with {@link #contains} first). */
    long hostOf(long va) {
        return host + (va - start);
    }

    boolean overlapsHost(long from, long len) {
        return host < from + len && from < host + length;
    }
}
