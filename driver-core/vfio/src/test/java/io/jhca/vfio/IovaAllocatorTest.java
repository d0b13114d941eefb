package io.jhca.vfio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

/** The IOVA allocator: alignment, staying inside the ranges, reuse after free, exhaustion, double free. */
class IovaAllocatorTest {

    private static final long PAGE = 4096;

    @Test
    void firstFitFromTheLowestRangeAlignedToPages() {
        final IovaAllocator a = new IovaAllocator(IommuInfo.LEGACY_RANGES, PAGE);
        assertEquals(0x10000L, a.allocate(1));
        assertEquals(0x11000L, a.allocate(PAGE));
        assertEquals(0x12000L, a.allocate(PAGE + 1)); // two pages
        assertEquals(0x14000L, a.allocate(1));
    }

    @Test
    void alignmentIsHonouredAndTheGapStaysFree() {
        final IovaAllocator a = new IovaAllocator(List.of(new IovaRange(0x1000, 0x7fffff)), PAGE);
        assertEquals(0x1000L, a.allocate(PAGE));
        assertEquals(0x200000L, a.allocate(2 << 20, 2 << 20));
        assertEquals(0x2000L, a.allocate(PAGE)); // the gap below the aligned block is used next
        assertEquals(List.of(new IovaRange(0x3000, 0x1fffff), new IovaRange(0x400000, 0x7fffff)), a.freeRanges());
    }

    @Test
    void rangesAreTrimmedToWholePagesAndNeverLeft() {
        final IovaAllocator a = new IovaAllocator(List.of(new IovaRange(0x1001, 0x3ffe)), PAGE);
        assertEquals(List.of(new IovaRange(0x2000, 0x2fff)), a.freeRanges());
        assertEquals(0x2000L, a.allocate(PAGE));
        final VfioException e = assertThrows(VfioException.class, () -> a.allocate(PAGE));
        assertTrue(e.getMessage().contains("no free IOVA block of 0x1000"), e.getMessage());
    }

    @Test
    void skipsTheMsiWindowBetweenTheLegacyRanges() {
        final IovaAllocator a = new IovaAllocator(IommuInfo.LEGACY_RANGES, PAGE);
        final long below = 0xFEE00000L - 0x10000L; // all of the first range
        assertEquals(0x10000L, a.allocate(below));
        assertEquals(0xFEF00000L, a.allocate(PAGE)); // not 0xFEE00000: the MSI window is not IOVA space
    }

    @Test
    void aBlockLargerThanAnyRangeIsRefusedEvenIfTheTotalWouldFit() {
        final IovaAllocator a = new IovaAllocator(List.of(new IovaRange(0x0, 0xffff), new IovaRange(0x20000, 0x2ffff)), PAGE);
        assertEquals(0x20000L, a.freeBytes());
        assertThrows(VfioException.class, () -> a.allocate(0x18000));
        assertEquals(0x20000L, a.freeBytes(), "a refused allocation takes nothing");
    }

    @Test
    void freedBlocksMergeAndAreReused() {
        final IovaAllocator a = new IovaAllocator(List.of(new IovaRange(0x10000, 0x1ffff)), PAGE);
        final long x = a.allocate(PAGE);
        final long y = a.allocate(PAGE);
        final long z = a.allocate(PAGE);
        a.free(y, PAGE);
        assertEquals(y, a.allocate(PAGE), "the hole is reused first");
        a.free(x, PAGE);
        a.free(y, PAGE);
        a.free(z, PAGE);
        assertEquals(List.of(new IovaRange(0x10000, 0x1ffff)), a.freeRanges(), "everything merged back into one range");
    }

    @Test
    void doubleFreeIsRefused() {
        final IovaAllocator a = new IovaAllocator(List.of(new IovaRange(0x10000, 0x1ffff)), PAGE);
        final long x = a.allocate(2 * PAGE);
        a.free(x, 2 * PAGE);
        assertThrows(IllegalStateException.class, () -> a.free(x + PAGE, PAGE));
        assertThrows(IllegalStateException.class, () -> a.free(0x1f000, PAGE), "never allocated");
    }

    @Test
    void reserveTakesExactBlocksInsideTheRangesOnly() {
        final IovaAllocator a = new IovaAllocator(List.of(new IovaRange(0x10000, 0x1ffff)), PAGE);
        a.reserve(0x14000, 2 * PAGE);
        assertThrows(VfioException.class, () -> a.reserve(0x15000, PAGE), "already taken");
        assertThrows(VfioException.class, () -> a.reserve(0x1f000, 2 * PAGE), "runs past the range");
        assertThrows(VfioException.class, () -> a.reserve(0x8000, PAGE), "below the range");
        assertEquals(0x10000L, a.allocate(4 * PAGE));
        assertEquals(0x16000L, a.allocate(PAGE), "allocation goes around the reserved block");
    }

    @Test
    void fullSixtyFourBitRangeDoesNotWrap() {
        final IovaAllocator a = new IovaAllocator(List.of(new IovaRange(0, -1L)), PAGE);
        final long top = Long.MAX_VALUE - 0xfff;
        a.reserve(top, PAGE);
        assertThrows(VfioException.class, () -> a.reserve(top, PAGE));
        assertEquals(0L, a.allocate(PAGE));
    }

    @Test
    void badArgumentsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new IovaAllocator(List.of(), 3000));
        final IovaAllocator a = new IovaAllocator(List.of(new IovaRange(0x10000, 0x1ffff)), PAGE);
        assertThrows(IllegalArgumentException.class, () -> a.allocate(0));
        assertThrows(IllegalArgumentException.class, () -> a.allocate(PAGE, 3 * PAGE));
        assertThrows(IllegalArgumentException.class, () -> new IovaRange(2, 1));
    }

    /** Random allocate/free against a model: blocks never overlap, stay in range, are aligned; all frees merge back. */
    @Test
    void randomAllocateFreeKeepsEveryInvariant() {
        final long seed = Long.getLong("jhca.test.seed", System.nanoTime());
        System.out.println("IovaAllocatorTest seed " + seed + " (replay with -Djhca.test.seed=" + seed + ")");
        final Random rnd = new Random(seed);
        final List<IovaRange> ranges = List.of(new IovaRange(0x10000, 0x8ffffff), new IovaRange(0x10000000, 0x10ffffff));
        final IovaAllocator a = new IovaAllocator(ranges, PAGE);
        final long total = a.freeBytes();
        final TreeMap<Long, Long> live = new TreeMap<>();
        for (int i = 0; i < 5000; i++) {
            if (live.isEmpty() || rnd.nextInt(3) != 0) {
                final long size = (1 + rnd.nextInt(64)) * PAGE - rnd.nextInt((int) PAGE);
                final long align = PAGE << rnd.nextInt(10);
                final long iova;
                try {
                    iova = a.allocate(size, align);
                } catch (final VfioException exhausted) {
                    continue;
                }
                final long len = (size + PAGE - 1) & -PAGE;
                assertEquals(0, iova % align, "seed " + seed + ": alignment of 0x" + Long.toHexString(iova));
                assertTrue(ranges.stream().anyMatch(r -> iova >= r.start() && iova + len - 1 <= r.end()),
                    "seed " + seed + ": block outside the ranges");
                final var below = live.floorEntry(iova + len - 1);
                assertTrue(below == null || below.getKey() + below.getValue() <= iova, "seed " + seed + ": overlap");
                live.put(iova, len);
            } else {
                final List<Long> keys = new ArrayList<>(live.keySet());
                final long k = keys.get(rnd.nextInt(keys.size()));
                a.free(k, live.remove(k));
            }
            final long used = live.values().stream().mapToLong(Long::longValue).sum();
            assertEquals(total - used, a.freeBytes(), "seed " + seed + ": free bytes");
        }
        live.forEach(a::free);
        assertEquals(List.of(new IovaRange(0x10000, 0x8ffffff), new IovaRange(0x10000000, 0x10ffffff)), a.freeRanges(),
            "seed " + seed);
    }
}
