package io.jhca.mlx5.ring;

import java.util.ArrayList;
import java.util.List;
import java.util.function.LongFunction;

import io.jhca.doorbell.DoorbellRecord;
import io.jhca.memory.DmaRegion;

/**
 * Doorbell records, handed out in 64-byte slots of 4 KiB DMA pages as rdma-core's dbrec.c does (one cache line each,
 * so the device's reads of one queue's record never share a line with another's writes). A slot starts zeroed.
 */
public final class DbrPool implements AutoCloseable {

    static final int PAGE = 4096;
    static final int SLOT = 64;
    private static final int SLOTS_PER_PAGE = PAGE / SLOT;

    /** One record: its place in host memory, the IOVA the device reads it at, a flyweight over it. */
    public static final class Slot {
        private final Page page;
        private final int index;
        private final DoorbellRecord record = new DoorbellRecord();

        private Slot(Page page, int index) {
            this.page = page;
            this.index = index;
            record.wrap(page.region.buffer(), index * SLOT);
        }

        public DoorbellRecord record() {
            return record;
        }

        /** What goes into qpc.dbr_addr / cqc.dbr_addr. */
        public long iova() {
            return page.region.iova((long) index * SLOT);
        }
    }

    private static final class Page {
        final DmaRegion region;
        final boolean[] used = new boolean[SLOTS_PER_PAGE];
        int inUse;

        Page(DmaRegion region) {
            this.region = region;
        }
    }

    private final LongFunction<DmaRegion> allocator;
    private final List<Page> pages = new ArrayList<>();

    /** @param allocator DMA memory of the function ({@code Mlx5Function::allocateDma}) */
    public DbrPool(LongFunction<DmaRegion> allocator) {
        this.allocator = allocator;
    }

    public synchronized Slot allocate() {
        for (Page p : pages) {
            if (p.inUse < SLOTS_PER_PAGE) {
                return take(p);
            }
        }
        Page p = new Page(allocator.apply(PAGE));
        pages.add(p);
        return take(p);
    }

    private static Slot take(Page p) {
        for (int i = 0; i < SLOTS_PER_PAGE; i++) {
            if (!p.used[i]) {
                p.used[i] = true;
                p.inUse++;
                p.region.buffer().setMemory(i * SLOT, SLOT, (byte) 0);
                return new Slot(p, i);
            }
        }
        throw new AssertionError("page has no free slot");
    }

    /** Returns a slot; the device must no longer read it (its queue is destroyed). */
    public synchronized void free(Slot s) {
        if (s.page.used[s.index]) {
            s.page.used[s.index] = false;
            s.page.inUse--;
        }
    }

    /** Records in use. */
    public synchronized int inUse() {
        int n = 0;
        for (Page p : pages) {
            n += p.inUse;
        }
        return n;
    }

    @Override
    public synchronized void close() {
        for (Page p : pages) {
            p.region.close();
        }
        pages.clear();
    }
}
