package io.jhca.connectx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.jhca.memory.DmaRegion;

/** The RAM file's layout (IOVA = guest-physical = file offset below the low limit, 4 GiB + offset above) and its edges. */
class GuestRamTest {

    private static final long MIB = 1L << 20;
    private Path file;

    @BeforeEach
    void createFile() throws IOException {
        file = Files.createTempFile("jhca-ram-", "");
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(8 * MIB);
        }
    }

    @AfterEach
    void deleteFile() throws IOException {
        Files.deleteIfExists(file);
    }

    @Test
    void q35LayoutPutsAllOfSmallRamLowAndSplitsLargeRamAtTwoGiB() {
        assertEquals(0xAFFF_F000L, GuestRam.q35LowSize(0xAFFF_F000L));
        assertEquals(0x8000_0000L, GuestRam.q35LowSize(0xB000_0000L), "exactly the limit no longer fits below it");
        assertEquals(0x8000_0000L, GuestRam.q35LowSize(4L << 30));
    }

    @Test
    void iovasMapToFileOffsetsInEachPartAndNowhereElse() {
        try (GuestRam ram = GuestRam.map(file, 6 * MIB)) {
            assertEquals(8 * MIB, ram.size());
            assertEquals(0, ram.iovaOf(0));
            assertEquals(6 * MIB - 1, ram.iovaOf(6 * MIB - 1));
            assertEquals(GuestRam.HIGH_BASE, ram.iovaOf(6 * MIB), "the first byte of the high part sits at 4 GiB");
            assertThrows(IndexOutOfBoundsException.class, () -> ram.iovaOf(8 * MIB));

            assertEquals(6 * MIB - 8, ram.offsetOf(6 * MIB - 8, 8), "last 8 bytes of the low part");
            assertEquals(-1, ram.offsetOf(6 * MIB - 8, 9), "one byte into the hole");
            assertEquals(-1, ram.offsetOf(6 * MIB, 1), "the hole below 4 GiB");
            assertEquals(6 * MIB, ram.offsetOf(GuestRam.HIGH_BASE, 2 * MIB), "the whole high part");
            assertEquals(-1, ram.offsetOf(GuestRam.HIGH_BASE, 2 * MIB + 1), "one byte past the end of RAM");
            assertEquals(-1, ram.offsetOf(GuestRam.HIGH_BASE - 1, 2), "a range straddling 4 GiB");
            assertEquals(-1, ram.offsetOf(-1, 1));
            assertEquals(-1, ram.offsetOf(Long.MAX_VALUE, 2), "no overflow");
            assertEquals(ram.address() + 5, ram.hostAddress(5, 1));
            assertEquals(-1, ram.hostAddress(8 * MIB, 1));
        }
    }

    @Test
    void theModelsIommuWindowsFaultOutsideTheFile() {
        try (GuestRam ram = GuestRam.map(file, 6 * MIB)) {
            Iommu iommu = new Iommu();
            iommu.mapWindow(0, ram.lowSize(), ram.address());
            iommu.mapWindow(GuestRam.HIGH_BASE, ram.size() - ram.lowSize(), ram.address() + ram.lowSize());
            assertEquals(ram.address() + 6 * MIB - 4096, iommu.hostAddress(6 * MIB - 4096, 4096));
            assertEquals(-1, iommu.hostAddress(6 * MIB - 4096, 4097));
            assertEquals(ram.address() + 6 * MIB, iommu.hostAddress(GuestRam.HIGH_BASE, 4096));
            assertEquals(-1, iommu.hostAddress(GuestRam.HIGH_BASE + 2 * MIB - 4095, 4096));
            assertThrows(IllegalArgumentException.class, () -> iommu.mapWindow(4096, 4096, ram.address()),
                    "overlapping windows are refused");
        }
    }

    @Test
    void allocationsAreZeroedPageAlignedReturnedAndCoalesced() {
        try (GuestRam ram = GuestRam.map(file, 6 * MIB)) {
            DmaRegion a = ram.allocate(100, false);
            assertEquals(GuestRam.FIRST_ALLOCATION, a.iova(0), "the first MiB is never handed out (IOVA 0 = none)");
            assertEquals(100, a.length());
            a.buffer().putByte(99, (byte) 7);
            DmaRegion b = ram.allocate(4096, false);
            assertEquals(GuestRam.FIRST_ALLOCATION + 4096, b.iova(0));
            DmaRegion high = ram.allocate(2 * MIB, true);
            assertEquals(GuestRam.HIGH_BASE, high.iova(0));
            assertEquals(GuestRam.HIGH_BASE + 2 * MIB - 1, high.iova(2 * MIB - 1));
            assertThrows(IllegalStateException.class, () -> ram.allocate(1, true), "the high part is full");
            assertThrows(IllegalStateException.class, () -> ram.close(), "open allocations keep the file mapped");
            a.close();
            DmaRegion again = ram.allocate(4096, false);
            assertEquals(GuestRam.FIRST_ALLOCATION, again.iova(0), "a freed block is reused");
            assertEquals(0, again.buffer().getByte(99), "and zeroed");
            again.close();
            b.close();
            DmaRegion big = ram.allocate(5 * MIB, false);
            assertEquals(GuestRam.FIRST_ALLOCATION, big.iova(0), "freed neighbours coalesce");
            big.close();
            high.close();
            assertEquals(0, ram.liveAllocations());
            assertTrue(ram.toString().contains("low part"));
        }
    }

    @Test
    void hostRangesAreInsideExactlyUpToTheLastByte() {
        try (GuestRam ram = GuestRam.map(file, 6 * MIB)) {
            long a = ram.address();
            assertTrue(ram.containsHost(a, 8 * MIB), "the whole mapping");
            assertTrue(ram.containsHost(a + 8 * MIB - 1, 1), "its last byte");
            assertTrue(ram.containsHost(a + 8 * MIB, 0), "an empty range at its end");
            assertFalse(ram.containsHost(a + 8 * MIB - 1, 2), "one byte past it");
            assertFalse(ram.containsHost(a, 8 * MIB + 1));
            assertFalse(ram.containsHost(a - 1, 1), "the byte before it");
            assertFalse(ram.containsHost(a - 1, 2), "a range starting before it");
            assertFalse(ram.containsHost(a + 4096, -1), "a negative length");
            assertFalse(ram.containsHost(a + 8 * MIB + 1, 0), "an empty range past its end");
            assertFalse(ram.containsHost(a + Long.MIN_VALUE, 1), "2^63 away");
        }
    }

    @Test
    void aLowPartLargerThanTheFileIsRefused() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GuestRam.map(file, 9 * MIB));
        assertTrue(e.getMessage().contains("does not fit a RAM file of " + 8 * MIB + " bytes"), e.getMessage());
    }
}
