package io.jhca.memory;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.List;
import java.util.function.Consumer;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

class RegionLifecycleTest {

    /** Every accessor of the interface, each one a call on a region. */
    private static List<Consumer<DmaRegion>> accessors() {
        return List.of(
            DmaRegion::address, DmaRegion::length, DmaRegion::pageSize, r -> r.iova(0), DmaRegion::buffer,
            r -> r.buffer(0, 8), r -> r.slice(0, 8), DmaRegion::retain, DmaRegion::release);
    }

    private static void assertClosedEverywhere(final DmaRegion region, final String kind) {
        for (final Consumer<DmaRegion> accessor : accessors()) {
            final IllegalStateException e = assertThrows(IllegalStateException.class, () -> accessor.accept(region));
            assertTrue(e.getMessage().startsWith("DMA " + kind + " closed"), e.getMessage());
        }
        assertTrue(region.isClosed());
    }

    @Test
    void everyAccessorThrowsAfterClose() throws IOException {
        final DmaRegion region = DmaMemory.allocate(4096);
        final long address = region.address();
        assertFalse(region.isClosed());
        region.close();
        assertClosedEverywhere(region, "region");
        // munmap really happened: the kernel no longer lists the mapping.
        assertFalse(ProcSelf.mapped(address), "mapping at 0x" + Long.toHexString(address) + " still in /proc/self/maps");
    }

    @Test
    void bufferHandedOutBeforeCloseFailsBoundsCheckAfterwards() {
        final DmaRegion region = DmaMemory.allocate(4096);
        final UnsafeBuffer buffer = region.buffer();
        buffer.putInt(0, 42);
        region.close();
        // Not a JVM crash on unmapped memory: the shared view was rewrapped to nothing.
        assertEquals(0, buffer.capacity());
        assertThrows(IndexOutOfBoundsException.class, () -> buffer.getInt(0));
    }

    @Test
    void doubleCloseIsHarmless() {
        final DmaRegion region = DmaMemory.allocate(4096);
        region.close();
        assertDoesNotThrow((Executable) region::close);
        assertTrue(region.isClosed());
    }

    @Test
    void closeWhileRetainedIsRefusedWithTheCount() {
        final DmaRegion region = DmaMemory.allocate(4096);
        region.retain();
        region.retain();
        IllegalStateException e = assertThrows(IllegalStateException.class, region::close);
        assertTrue(e.getMessage().contains("retained 2 time(s)"), e.getMessage());
        assertFalse(region.isClosed());
        region.buffer().putLong(0, 7); // still mapped and usable
        region.release();
        e = assertThrows(IllegalStateException.class, region::close);
        assertTrue(e.getMessage().contains("retained 1 time(s)"), e.getMessage());
        region.release();
        region.close();
        assertTrue(region.isClosed());
    }

    @Test
    void releaseWithoutRetainIsAnError() {
        try (DmaRegion region = DmaMemory.allocate(4096)) {
            final IllegalStateException e = assertThrows(IllegalStateException.class, region::release);
            assertTrue(e.getMessage().contains("without a matching retain"), e.getMessage());
        }
    }

    @Test
    void bufferAndSliceRangesAreCheckedAtCreation() {
        try (DmaRegion region = DmaMemory.allocate(1000)) {
            assertEquals(1000, region.buffer(0, 1000).capacity());
            assertEquals(region.address() + 999, region.buffer(999, 1).addressOffset());
            assertEquals(0, region.buffer(1000, 0).capacity());
            final long[][] bad = {
                {-1, 1}, {0, -1}, {0, 1001}, {1, 1000}, {1000, 1}, {Long.MAX_VALUE, 1}, {1, Long.MAX_VALUE},
                {Long.MIN_VALUE, 2}, {500, Long.MAX_VALUE - 100},
            };
            for (final long[] b : bad) {
                final IndexOutOfBoundsException e =
                    assertThrows(IndexOutOfBoundsException.class, () -> region.slice(b[0], b[1]), b[0] + "," + b[1]);
                assertTrue(e.getMessage().contains("offset " + b[0]) && e.getMessage().contains("1000 bytes"), e.getMessage());
                if (b[1] >= Integer.MIN_VALUE && b[1] <= Integer.MAX_VALUE) {
                    assertThrows(IndexOutOfBoundsException.class, () -> region.buffer(b[0], (int) b[1]), b[0] + "," + b[1]);
                }
            }
            assertThrows(IndexOutOfBoundsException.class, () -> region.buffer(Long.MAX_VALUE, Integer.MAX_VALUE));
            // A failed slice leaves no open-slice count behind: close still works afterwards.
        }
    }

    @Test
    void sliceSeesParentMemoryAtItsOffset() {
        try (DmaRegion region = DmaMemory.allocate(8192)) {
            final DmaRegion slice = region.slice(4096 + 16, 64);
            assertEquals(region.address() + 4096 + 16, slice.address());
            assertEquals(64, slice.length());
            assertEquals(region.pageSize(), slice.pageSize());
            assertEquals(region.iova(4096 + 16 + 5), slice.iova(5));
            slice.buffer().putLong(8, 0x1122334455667788L);
            assertEquals(0x1122334455667788L, region.buffer().getLong(4096 + 16 + 8));
            assertTrue(slice.buffer() == slice.buffer());
            assertThrows(IndexOutOfBoundsException.class, () -> slice.slice(60, 5));
            assertThrows(IndexOutOfBoundsException.class, () -> slice.iova(64));
            slice.close();
        }
    }

    @Test
    void parentCloseIsRefusedWhileASliceIsOpen() {
        final DmaRegion region = DmaMemory.allocate(4096);
        final DmaRegion a = region.slice(0, 100);
        final DmaRegion b = region.slice(100, 100);
        IllegalStateException e = assertThrows(IllegalStateException.class, region::close);
        assertTrue(e.getMessage().contains("2 slice(s)"), e.getMessage());
        a.close();
        a.close(); // double close of a slice does not count twice
        e = assertThrows(IllegalStateException.class, region::close);
        assertTrue(e.getMessage().contains("1 slice(s)"), e.getMessage());
        assertFalse(region.isClosed());
        b.close();
        region.close();
        assertTrue(region.isClosed());
        assertClosedEverywhere(a, "slice");
    }

    @Test
    void closingASliceLeavesTheParentUsable() {
        try (DmaRegion region = DmaMemory.allocate(4096)) {
            final DmaRegion slice = region.slice(8, 8);
            final UnsafeBuffer sliceBuffer = slice.buffer();
            slice.close();
            assertClosedEverywhere(slice, "slice");
            assertThrows(IndexOutOfBoundsException.class, () -> sliceBuffer.getByte(0));
            region.buffer().putLong(8, 1);
            assertEquals(1, region.buffer().getLong(8));
        }
    }

    @Test
    void retainingASliceRetainsTheParent() {
        final DmaRegion region = DmaMemory.allocate(4096);
        final DmaRegion slice = region.slice(0, 512);
        slice.retain();
        assertEquals(1, ((AbstractDmaRegion) region).retainCount());
        assertEquals(1, ((AbstractDmaRegion) slice).retainCount());
        IllegalStateException e = assertThrows(IllegalStateException.class, slice::close);
        assertTrue(e.getMessage().contains("retained 1 time(s)"), e.getMessage());
        e = assertThrows(IllegalStateException.class, region::close);
        assertTrue(e.getMessage().contains("retained 1 time(s)"), e.getMessage());
        slice.release();
        assertEquals(0, ((AbstractDmaRegion) region).retainCount());
        slice.close();
        region.close();
        assertTrue(region.isClosed() && slice.isClosed());
    }

    @Test
    void sliceOfASliceChainsToTheRoot() {
        final DmaRegion region = DmaMemory.allocate(4096);
        final DmaRegion outer = region.slice(1000, 1000);
        final DmaRegion inner = outer.slice(10, 20);
        assertEquals(region.address() + 1010, inner.address());
        inner.retain();
        assertEquals(1, ((AbstractDmaRegion) region).retainCount());
        assertEquals(1, ((AbstractDmaRegion) outer).retainCount());
        inner.release();
        assertThrows(IllegalStateException.class, outer::close); // inner still open
        inner.close();
        outer.close();
        region.close();
    }

    @Test
    void failedSliceCreationDoesNotLeakAnOpenSlice() {
        final DmaRegion region = DmaMemory.allocate(4096);
        assertThrows(IndexOutOfBoundsException.class, () -> region.slice(4000, 100));
        region.close();
        assertTrue(region.isClosed());
    }

    @Test
    void concurrentRetainReleaseKeepsAnExactCount() throws InterruptedException {
        try (DmaRegion region = DmaMemory.allocate(4096)) {
            final Thread[] threads = new Thread[4];
            for (int t = 0; t < threads.length; t++) {
                threads[t] = new Thread(() -> {
                    for (int i = 0; i < 20_000; i++) {
                        region.retain();
                        region.release();
                    }
                    region.retain();
                });
                threads[t].start();
            }
            for (final Thread thread : threads) {
                thread.join();
            }
            assertEquals(threads.length, ((AbstractDmaRegion) region).retainCount());
            for (int t = 0; t < threads.length; t++) {
                region.release();
            }
        }
    }
}
