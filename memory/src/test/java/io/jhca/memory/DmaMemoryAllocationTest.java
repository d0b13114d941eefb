package io.jhca.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class DmaMemoryAllocationTest {

    private static final long PAGE = 4096;

    @ParameterizedTest
    @ValueSource(longs = {1, 4095, 4096, 3 << 20})
    void allocatesAlignedZeroedWritableMemory(final long bytes) throws IOException {
        try (DmaRegion region = DmaMemory.allocate(bytes)) {
            assertEquals(bytes, region.length());
            assertEquals(PAGE, region.pageSize());
            assertEquals(0, region.address() % region.pageSize(), "page aligned");
            final long mapped = ((MappedRegion) region).mappedLength();
            assertEquals((bytes + PAGE - 1) / PAGE * PAGE, mapped);
            // The kernel's view: one mapping of exactly the rounded length at that address, 4 kB pages.
            final var smaps = ProcSelf.smaps(region.address());
            assertTrue(smaps.get(0).startsWith(ProcSelf.range(region.address(), mapped) + " rw-p "), smaps.get(0));
            assertEquals("4 kB", ProcSelf.smapsField(smaps, "KernelPageSize"));

            final UnsafeBuffer buffer = region.buffer();
            assertEquals(bytes, buffer.capacity());
            assertEquals(region.address(), buffer.addressOffset());
            for (int i = 0; i < bytes; i++) {
                assertEquals(0, buffer.getByte(i), "anonymous memory starts zeroed");
            }
            // Stamp every page (and the last byte) with its own value, then read all of it back.
            for (long off = 0; off < bytes; off += PAGE) {
                buffer.putByte((int) off, (byte) (off / PAGE + 1));
            }
            buffer.putByte((int) bytes - 1, (byte) 0x5A);
            for (long off = 0; off < bytes; off += PAGE) {
                final byte expected = off == bytes - 1 ? 0x5A : (byte) (off / PAGE + 1);
                assertEquals(expected, buffer.getByte((int) off), "page at " + off);
            }
            assertEquals(0x5A, buffer.getByte((int) bytes - 1));
            // Every byte of every page round-trips.
            for (int i = 0; i < bytes; i++) {
                buffer.putByte(i, (byte) (i * 31 + 7));
            }
            for (int i = 0; i < bytes; i++) {
                assertEquals((byte) (i * 31 + 7), buffer.getByte(i));
            }
            assertThrows(IndexOutOfBoundsException.class, () -> buffer.getByte((int) bytes), "buffer ends at length()");
        }
    }

    @Test
    void bufferIsOneInstancePerRegion() {
        try (DmaRegion region = DmaMemory.allocate(8192)) {
            assertTrue(region.buffer() == region.buffer());
        }
    }

    @Test
    void regionsDoNotOverlap() {
        try (DmaRegion a = DmaMemory.allocate(4096); DmaRegion b = DmaMemory.allocate(4096)) {
            assertTrue(a.address() + 4096 <= b.address() || b.address() + 4096 <= a.address());
            a.buffer().setMemory(0, 4096, (byte) 1);
            b.buffer().setMemory(0, 4096, (byte) 2);
            assertEquals(1, a.buffer().getByte(4095));
            assertEquals(2, b.buffer().getByte(0));
        }
    }

    @Test
    void rejectsNonPositiveAndAbsurdLengths() {
        assertThrows(IllegalArgumentException.class, () -> DmaMemory.allocate(0));
        assertThrows(IllegalArgumentException.class, () -> DmaMemory.allocate(-1));
        assertThrows(IllegalArgumentException.class, () -> DmaMemory.allocate(Long.MAX_VALUE));
    }

    @Test
    void impossibleRequestFailsWithErrno() throws IOException {
        // With overcommit "always" (1) the kernel would accept the mapping and try to populate it.
        Assumptions.assumeFalse(Files.readString(Path.of("/proc/sys/vm/overcommit_memory")).trim().equals("1"),
            "vm.overcommit_memory=1 would let a 64 TiB mapping through");
        // 2^46 bytes (64 TiB) cannot be populated on any test machine: mmap itself refuses.
        final DmaMemoryException e = assertThrows(DmaMemoryException.class, () -> DmaMemory.allocate(1L << 46));
        assertTrue(e.getMessage().contains("ENOMEM"), e.getMessage());
    }

    @Test
    void iovaIsIdentityByDefaultAndBoundsChecked() {
        try (DmaRegion region = DmaMemory.allocate(100)) {
            assertEquals(region.address(), region.iova(0));
            assertEquals(region.address() + 99, region.iova(99));
            assertThrows(IndexOutOfBoundsException.class, () -> region.iova(100));
            assertThrows(IndexOutOfBoundsException.class, () -> region.iova(-1));
        }
    }

    @Test
    void toStringNamesAddressLengthAndTranslator() {
        final DmaRegion region = DmaMemory.allocate(10);
        final String open = region.toString();
        assertTrue(open.contains(Long.toHexString(region.address())) && open.contains("+10") && open.contains("identity"), open);
        region.close();
        assertTrue(region.toString().contains("closed"));
        assertFalse(open.contains("closed"));
    }
}
