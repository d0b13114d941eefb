package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Random;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import io.jhca.verbs.Access;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WrOpcode;

/**
 * An MR over a page list, as a device model registers its memory keys: addresses of the key's own space (here far
 * from anything this process maps), bytes on host pages in another order. Peers' WRITE, READ and atomics and the
 * device's own SEND and receive copy through the list, page by page, to exactly the right host bytes.
 */
class PageListRegionTest {

    private static final int PAGE = 4096;
    /** A key address no process maps: only the page list makes it reachable. */
    private static final long KEY_VA = 0x7a00_0000_0800L;
    private static final int SPAN = 3 * PAGE;
    /** Page i of the span is host page ORDER[i] of the backing memory. */
    private static final int[] ORDER = {3, 0, 2, 1};

    private static long[] pages(DmaRegion backing) {
        long[] p = new long[ORDER.length];
        for (int i = 0; i < p.length; i++) {
            p[i] = backing.address() + (long) ORDER[i] * PAGE;
        }
        return p;
    }

    /** Offset in the backing memory of key address {@code va}. */
    private static int backingOffset(long va) {
        long off = va - (KEY_VA & -PAGE);
        return ORDER[(int) (off / PAGE)] * PAGE + (int) (off % PAGE);
    }

    private static byte[] backingBytes(UnsafeBuffer backing, long va, int len) {
        byte[] out = new byte[len];
        for (int i = 0; i < len; i++) {
            out[i] = backing.getByte(backingOffset(va + i));
        }
        return out;
    }

    @Test
    void everyRemoteAndLocalAccessLandsOnTheListedPages() {
        long seed = System.nanoTime();
        System.out.println("PageListRegionTest seed " + seed);
        Random random = new Random(seed);
        try (Rig rig = Rig.rc(ProgressMode.CALLER, 1 << 16, Mtu.MTU_1024);
             DmaRegion backingMem = DmaMemory.allocate(ORDER.length * PAGE)) {
            UnsafeBuffer backing = backingMem.buffer();
            PageListRegion region = new PageListRegion(KEY_VA, SPAN, 12, pages(backingMem));
            int access = Access.mask(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC);
            MemoryRegion mr = RxeKeys.register(rig.pdA, region, 0, SPAN, access, 0x00000a11);
            assertEquals(KEY_VA, mr.address());
            UnsafeBuffer b = rig.memB.buffer();

            // B writes 5000 bytes across three pages of the key
            byte[] payload = new byte[5000];
            random.nextBytes(payload);
            b.putBytes(0, payload);
            long target = KEY_VA + 0x100;
            rig.qpB.postSend(new SendWr().wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .sge(rig.mrB, 0, payload.length).rdma(target, mr.rkey()));
            rig.expect(rig.cqB, 1, WcStatus.SUCCESS);
            assertArrayEquals(payload, backingBytes(backing, target, payload.length), "seed " + seed);

            // B reads it back from the key
            rig.qpB.postSend(new SendWr().wrId(2).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
                    .sge(rig.mrB, 8192, payload.length).rdma(target, mr.rkey()));
            rig.expect(rig.cqB, 2, WcStatus.SUCCESS);
            byte[] read = new byte[payload.length];
            b.getBytes(8192, read);
            assertArrayEquals(payload, read, "seed " + seed);

            // atomics on the last word of the span's second page
            long word = (KEY_VA & -PAGE) + 2L * PAGE - 8;
            long old = random.nextLong();
            backing.putLong(backingOffset(word), old);
            rig.qpB.postSend(new SendWr().wrId(3).opcode(WrOpcode.ATOMIC_FETCH_AND_ADD).sendFlags(SendFlags.SIGNALED)
                    .sge(rig.mrB, 16384, 8).atomic(word, mr.rkey(), 5, 0));
            rig.expect(rig.cqB, 3, WcStatus.SUCCESS);
            assertEquals(old, b.getLong(16384));
            assertEquals(old + 5, backing.getLong(backingOffset(word)));
            rig.qpB.postSend(new SendWr().wrId(4).opcode(WrOpcode.ATOMIC_CMP_AND_SWP).sendFlags(SendFlags.SIGNALED)
                    .sge(rig.mrB, 16384, 8).atomic(word, mr.rkey(), old + 5, 77));
            rig.expect(rig.cqB, 4, WcStatus.SUCCESS);
            assertEquals(77, backing.getLong(backingOffset(word)));

            // A receives into the key (scatter) and sends from it (gather)
            random.nextBytes(payload);
            b.putBytes(0, payload);
            long recvAt = KEY_VA + 0xf00;
            rig.qpA.postRecv(new RecvWr().wrId(5).sge(mr, recvAt - KEY_VA, payload.length));
            rig.qpB.postSend(new SendWr().wrId(6).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
                    .sge(rig.mrB, 0, payload.length));
            rig.expect(rig.cqB, 6, WcStatus.SUCCESS);
            rig.expect(rig.cqA, 5, WcStatus.SUCCESS);
            assertArrayEquals(payload, backingBytes(backing, recvAt, payload.length), "seed " + seed);
            rig.qpB.postRecv(new RecvWr().wrId(7).sge(rig.mrB, 24576, payload.length));
            rig.qpA.postSend(new SendWr().wrId(8).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
                    .sge(mr, recvAt - KEY_VA, payload.length));
            rig.expect(rig.cqA, 8, WcStatus.SUCCESS);
            rig.expect(rig.cqB, 7, WcStatus.SUCCESS);
            b.getBytes(24576, read);
            assertArrayEquals(payload, read, "seed " + seed);

            // one byte past the span is refused, and nothing is touched
            rig.qpB.postSend(new SendWr().wrId(9).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .sge(rig.mrB, 0, 2).rdma(KEY_VA + SPAN - 1, mr.rkey()));
            rig.expect(rig.cqB, 9, WcStatus.REM_ACCESS_ERR);
            mr.close();
            region.close();
        }
    }

    @Test
    void malformedListsAreRefused() {
        long[] four = {0x10000, 0x20000, 0x30000, 0x40000};
        assertThrows(IllegalArgumentException.class, () -> new PageListRegion(KEY_VA, SPAN, 12, new long[3]),
                "a span from 0x800 of three pages touches four");
        assertThrows(IllegalArgumentException.class, () -> new PageListRegion(KEY_VA, SPAN, 12, new long[] {0x10000, 0,
                0x30000, 0x40000}));
        assertThrows(IllegalArgumentException.class, () -> new PageListRegion(KEY_VA, SPAN, 12, new long[] {0x10000,
                0x20800, 0x30000, 0x40000}));
        assertThrows(IllegalArgumentException.class, () -> new PageListRegion(KEY_VA, SPAN, 11, four));
        assertThrows(IllegalArgumentException.class, () -> new PageListRegion(KEY_VA, 0, 12, new long[0]));
        assertThrows(IllegalArgumentException.class, () -> new PageListRegion(-4096, 8192, 12, new long[] {0x1000,
                0x2000}), "wraps around the address space");
        PageListRegion r = new PageListRegion(KEY_VA, SPAN, 12, four);
        assertEquals(0x20000 + 0x10, r.hostAddress((KEY_VA & -PAGE) + PAGE + 0x10));
        assertEquals(0x800, r.contiguousBytes(KEY_VA, 100_000));
        assertThrows(UnsupportedOperationException.class, r::buffer);
        assertThrows(IndexOutOfBoundsException.class, () -> r.iova(SPAN));
    }
}
