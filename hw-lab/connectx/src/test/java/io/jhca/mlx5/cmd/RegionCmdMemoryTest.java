package io.jhca.mlx5.cmd;

import io.jhca.connectx.DeviceDma;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;

import io.jhca.memory.DmaRegion;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/** The bump allocator over a DmaRegion, and a full command round trip through it. */
class RegionCmdMemoryTest {

    /**
     * A region over a direct buffer whose 4 KiB pages map to IOVAs {@code base + page * pageStride}: stride 4096 is
     * a contiguous mapping, anything else scatters pages the way a page-granular translation can. It is also the
     * device's view of that memory.
     */
    private static final class FakeRegion implements DmaRegion, DeviceDma {
        final UnsafeBuffer all;
        final long base;
        final long pageStride;

        FakeRegion(int length, long base, long pageStride) {
            ByteBuffer bb = ByteBuffer.allocateDirect(length + 4096);
            long addr = new UnsafeBuffer(bb).addressOffset();
            this.all = new UnsafeBuffer(bb, (int) (-addr & 4095), length);
            this.base = base;
            this.pageStride = pageStride;
        }

        @Override public long address() { return all.addressOffset(); }
        @Override public long length() { return all.capacity(); }
        @Override public long pageSize() { return 4096; }
        @Override public long iova(long offset) { return base + (offset >>> 12) * pageStride + (offset & 4095); }
        @Override public UnsafeBuffer buffer() { return all; }
        @Override
        public UnsafeBuffer buffer(long offset, int length) {
            return new UnsafeBuffer(all, (int) offset, length);
        }
        @Override public DmaRegion slice(long offset, long length) { throw new UnsupportedOperationException(); }
        @Override public boolean isClosed() { return false; }
        @Override public void retain() { }
        @Override public void release() { }
        @Override public void close() { }

        @Override
        public boolean wrap(UnsafeBuffer view, long iova, int length) {
            if (pageStride != 4096 || iova < base || iova + length > base + all.capacity()) {
                return false;
            }
            view.wrap(all, (int) (iova - base), length);
            return true;
        }
    }

    @Test
    void alignsOnTheDeviceAddress() {
        // region IOVAs start 0x200 into a page: the first 1 KiB aligned IOVA is 0x200 bytes in
        FakeRegion r = new FakeRegion(64 * 1024, 0x5000_0200L, 4096);
        RegionCmdMemory m = new RegionCmdMemory(r);
        DmaBlock a = m.allocate(Mailbox.SIZE, Mailbox.ALIGNMENT);
        assertEquals(0x5000_0400L, a.iova());
        DmaBlock b = m.allocate(Mailbox.SIZE, Mailbox.ALIGNMENT);
        assertEquals(0x5000_0800L, b.iova());
        DmaBlock page = m.allocate(4096, 4096);
        assertEquals(0, page.iova() & 4095);
        assertThrows(IllegalStateException.class, () -> m.allocate(64 * 1024, 8));
    }

    @Test
    void refusesBlocksThatAreNotContiguousForTheDevice() {
        FakeRegion r = new FakeRegion(64 * 1024, 0x6000_0000L, 3 * 4096);
        RegionCmdMemory m = new RegionCmdMemory(r);
        m.allocate(3000, 8);
        assertThrows(IllegalStateException.class, () -> m.allocate(2000, 8), "would straddle two scattered pages");
    }

    @Test
    void commandRoundTripThroughARegion() {
        FakeRegion r = new FakeRegion(64 * 1024, 0x7000_0000L, 4096);
        try (FakeFirmware fw = new FakeFirmware(r, 5, 6)) {
            CmdQueue q = CmdQueue.open(new InitSegment(fw), new RegionCmdMemory(r));
            assertEquals(0x7000_0000L, q.queueIova());
            UnsafeBuffer in = new UnsafeBuffer(new byte[QpLayouts.CREATE_QP_IN.sizeBytes(200)]);
            Struct s = new Struct().wrap(QpLayouts.CREATE_QP_IN, in, 0, in.capacity()).clear()
                    .set("opcode", CmdOpcode.CREATE_QP).set("qpc.pd", 5);
            for (int i = 0; i < 200; i++) {
                s.setElement("pas", i, 0x1000L * (i + 1));
            }
            UnsafeBuffer out = new UnsafeBuffer(new byte[16]);
            q.execute(s, new Struct().wrap(QpLayouts.CREATE_QP_OUT, out, 0));
            assertEquals(0x100, QpLayouts.CREATE_QP_OUT.get(out, 0, "qpn"));
            byte[] sent = new byte[in.capacity()];
            in.getBytes(0, sent);
            assertArrayEquals(sent, fw.seen.get(0).input());
            assertTrue(fw.seen.get(0).inLength() > 512 * 3);
        }
    }
}
