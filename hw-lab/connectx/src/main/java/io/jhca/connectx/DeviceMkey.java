package io.jhca.connectx;

import io.jhca.verbs.MemoryRegion;

/**
 * A memory key in MTT mode: {@code [start, start + length)} of the key's address space mapped, page by page, to the
 * DMA pages its translation table names, wherever each lies in host memory (a guest's pages are scattered over its
 * RAM). It is registered on the rxe side under the same key value as a page list ({@code io.jhca.rxe.PageListRegion}),
 * so peers and the driver's SGEs name the key's addresses and the transport resolves them page by page, as hardware
 * resolves them through the MTT. key = mkey_index &lt;&lt; 8 | mkey_7_0 (mlx5_ifc mkc).
 */
final class DeviceMkey {

    final int index;
    final int key;
    final DevicePd pd;
    final long start;
    final long length;
    /** log2 of the key's page size (mkc.log_page_size). */
    final int pageShift;
    /** Host address of each page the key touches, from the page holding {@code start}. */
    final long[] hostPages;
    final boolean localWrite;
    final boolean remoteRead;
    final boolean remoteWrite;
    final boolean atomic;
    MemoryRegion rxeMr;
    /**
     * A memory window's key (CREATE_MKEY free, umr_en, KLM mode): its state lives in the rxe window mirrored under
     * the same key; null for a memory region's key.
     */
    io.jhca.verbs.MemoryWindow rxeMw;
    /** For a window: the region key its last bind named (a bind is undone when that key is destroyed). */
    DeviceMkey lastBind;
    /** False once its memory was unmapped under it: every later use is a protection error. */
    boolean valid = true;

    DeviceMkey(int index, int key, DevicePd pd, long start, long length, int pageShift, long[] hostPages,
            boolean localWrite, boolean remoteRead, boolean remoteWrite, boolean atomic) {
        this.index = index;
        this.key = key;
        this.pd = pd;
        this.start = start;
        this.length = length;
        this.pageShift = pageShift;
        this.hostPages = hostPages;
        this.localWrite = localWrite;
        this.remoteRead = remoteRead;
        this.remoteWrite = remoteWrite;
        this.atomic = atomic;
    }

    boolean isWindow() {
        return rxeMw != null;
    }

    /** Whether {@code [va, va + len)} lies in the key (overflow-safe, unsigned length). */
    boolean contains(long va, long len) {
        if (len < 0 || Long.compareUnsigned(va, start) < 0) {
            return false;
        }
        long off = va - start;
        return Long.compareUnsigned(off, length) <= 0 && len <= length - off;
    }

    /** Whether any of the key's pages overlaps host memory {@code [from, from + len)}. */
    boolean overlapsHost(long from, long len) {
        long page = 1L << pageShift;
        for (long h : hostPages) {
            if (h < from + len && from < h + page) {
                return true;
            }
        }
        return false;
    }
}
