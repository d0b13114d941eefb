package io.jhca.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HugePagesTest {

    private static final long HUGE = 2L << 20;
    private static final Path NR_HUGEPAGES = Path.of("/proc/sys/vm/nr_hugepages");
    private static final Path NR_OVERCOMMIT = Path.of("/proc/sys/vm/nr_overcommit_hugepages");

    private static String skip(final String reason) {
        System.out.println("SKIPPED: " + reason);
        return reason;
    }

    /** A request one 2 MiB page larger than what is free, so mmap(MAP_HUGETLB) must fail (nr_hugepages 0 here). */
    private static long moreThanFree() throws IOException {
        Assumptions.assumeTrue(Files.readString(NR_OVERCOMMIT).trim().equals("0"),
            () -> skip("vm.nr_overcommit_hugepages > 0: the kernel would create surplus huge pages on demand"));
        Assumptions.assumeTrue(ProcSelf.meminfo("Hugepagesize") == 2048,
            () -> skip("default huge page size is not 2048 kB; HugePages_Free does not count 2 MiB pages"));
        return (ProcSelf.meminfo("HugePages_Free") + 1) * HUGE;
    }

    @Test
    void noFreeHugePagesIsAHelpfulError() throws IOException {
        final long bytes = moreThanFree();
        final HugePagesUnavailableException e = assertThrows(HugePagesUnavailableException.class,
            () -> DmaMemory.allocate(DmaOptions.of(bytes).hugePages(true)));
        final String m = e.getMessage();
        for (final String expected : List.of("HugePages_Free", "Hugepagesize 2048 kB", "/proc/sys/vm/nr_hugepages",
            "needs " + bytes / HUGE + " page(s)", "fallbackToSmallPages(true)")) {
            assertTrue(m.contains(expected), "message lacks '" + expected + "': " + m);
        }
        assertTrue(e instanceof DmaMemoryException);
    }

    @Test
    void fallbackUsesSmallPagesWhenAskedTo() throws IOException {
        final long bytes = moreThanFree();
        Assumptions.assumeTrue(bytes <= 4 * HUGE, () -> skip("many huge pages free; a small-page fallback of "
            + bytes + " bytes would be too much locked memory for a unit test"));
        try (DmaRegion region = DmaMemory.allocate(DmaOptions.of(bytes).hugePages(true).fallbackToSmallPages(true))) {
            assertEquals(4096, region.pageSize());
            assertEquals(bytes, region.length());
            assertEquals("4 kB", ProcSelf.smapsField(ProcSelf.smaps(region.address()), "KernelPageSize"));
            region.buffer().putLong((int) bytes - 8, -1L);
            assertEquals(-1L, region.buffer().getLong((int) bytes - 8));
        }
    }

    @Test
    void reservedHugePagesBackA2MiBRegion() throws IOException {
        Assumptions.assumeTrue(ProcSelf.isRoot(), () -> skip("reserving huge pages via " + NR_HUGEPAGES + " needs root"));
        try (Reservation reservation = Reservation.of(2)) {
            Assumptions.assumeTrue(reservation.reserved() >= 2,
                () -> skip("the kernel could reserve only " + reservation.reserved() + " of 2 huge pages"));
            try (DmaRegion region = DmaMemory.allocate(DmaOptions.of(HUGE).hugePages(true))) {
                assertHugeRegion(region, HUGE, HUGE);
                final List<String> smaps = ProcSelf.smaps(region.address());
                assertTrue(smaps.get(0).contains(" rw-p "), smaps.get(0));
                final List<String> flags = List.of(ProcSelf.smapsField(smaps, "VmFlags").split("\\s+"));
                assertTrue(flags.contains("ht") && flags.contains("dc"), "VmFlags " + flags);
            }
            // One byte past a huge page takes two of them.
            try (DmaRegion region = DmaMemory.allocate(DmaOptions.of(HUGE + 1).hugePages(true))) {
                assertHugeRegion(region, HUGE + 1, 2 * HUGE);
            }
        }
    }

    @Test
    void aHugePageGoesBackAtCloseEvenWhileAViewIsHeld() throws IOException {
        Assumptions.assumeTrue(ProcSelf.isRoot(), () -> skip("reserving huge pages via " + NR_HUGEPAGES + " needs root"));
        try (Reservation reservation = Reservation.of(1)) {
            Assumptions.assumeTrue(reservation.reserved() >= 1, () -> skip("the kernel could not reserve a huge page"));
            final long free = ProcSelf.meminfo("HugePages_Free");
            final DmaRegion region = DmaMemory.allocate(DmaOptions.of(HUGE).hugePages(true));
            final UnsafeBuffer view = region.buffer(0, 4096);
            view.putLong(0, 1);
            assertEquals(free - 1, ProcSelf.meminfo("HugePages_Free"));
            region.close();
            // the view keeps the address range mapped (fresh small pages), not the huge page
            assertEquals(free, ProcSelf.meminfo("HugePages_Free"), "the huge page is free again after close");
            assertThrows(IndexOutOfBoundsException.class, () -> view.getLong(0));
        }
    }

    @Test
    void hugetlbfsMountBacksARegion(@TempDir final Path mount) throws Exception {
        Assumptions.assumeTrue(ProcSelf.isRoot(), () -> skip("mounting hugetlbfs and reserving huge pages need root"));
        final Process p = new ProcessBuilder("mount", "-t", "hugetlbfs", "-o", "pagesize=2M", "none", mount.toString())
            .redirectErrorStream(true).start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        Assumptions.assumeTrue(p.exitValue() == 0, () -> skip("cannot mount hugetlbfs here: " + out.trim()));
        try {
            final long bytes = moreThanFree();
            final HugePagesUnavailableException e = assertThrows(HugePagesUnavailableException.class,
                () -> DmaMemory.allocate(DmaOptions.of(bytes).hugetlbfs(mount)));
            assertTrue(e.getMessage().contains("on hugetlbfs " + mount), e.getMessage());
            assertEmpty(mount);
            try (Reservation reservation = Reservation.of(1)) {
                Assumptions.assumeTrue(reservation.reserved() >= 1, () -> skip("the kernel could not reserve a huge page"));
                try (DmaRegion region = DmaMemory.allocate(DmaOptions.of(4096).hugetlbfs(mount))) {
                    assertHugeRegion(region, 4096, HUGE);
                    final String header = ProcSelf.smaps(region.address()).get(0);
                    assertTrue(header.contains(" rw-s ") && header.contains(mount.toString()) && header.endsWith("(deleted)"),
                        "shared mapping of an unlinked file on the mount: " + header);
                    assertEmpty(mount);
                }
            }
        } finally {
            new ProcessBuilder("umount", mount.toString()).inheritIO().start().waitFor(30, TimeUnit.SECONDS);
        }
    }

    @Test
    void hugetlbfsOptionRejectsOtherFileSystems(@TempDir final Path dir) {
        final DmaMemoryException e = assertThrows(DmaMemoryException.class,
            () -> DmaMemory.allocate(DmaOptions.of(4096).hugetlbfs(dir)));
        assertTrue(e.getMessage().contains("not hugetlbfs"), e.getMessage());
    }

    private static void assertEmpty(final Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(List.of(), files.toList(), "backing files are unlinked at once");
        }
    }

    private static void assertHugeRegion(final DmaRegion region, final long length, final long mapped) throws IOException {
        assertEquals(HUGE, region.pageSize());
        assertEquals(length, region.length());
        assertEquals(mapped, ((MappedRegion) region).mappedLength());
        assertEquals(0, region.address() % HUGE, "2 MiB aligned: 0x" + Long.toHexString(region.address()));
        assertEquals("2048 kB", ProcSelf.smapsField(ProcSelf.smaps(region.address()), "KernelPageSize"));
        final UnsafeBuffer buffer = region.buffer();
        for (int off = 0; off + 4 <= length; off += 4096) {
            buffer.putInt(off, off);
        }
        for (int off = 0; off + 4 <= length; off += 4096) {
            assertEquals(off, buffer.getInt(off));
        }
        assertFalse(region.isClosed());
    }

    /** Raises nr_hugepages by n for the test and puts the old value back on close. */
    private static final class Reservation implements AutoCloseable {
        private final String old;
        private final long reserved;

        private Reservation(final String old, final long reserved) {
            this.old = old;
            this.reserved = reserved;
        }

        static Reservation of(final int n) throws IOException {
            final String old = Files.readString(NR_HUGEPAGES).trim();
            final long before = Long.parseLong(old);
            Files.writeString(NR_HUGEPAGES, Long.toString(before + n));
            final long now = Long.parseLong(Files.readString(NR_HUGEPAGES).trim());
            return new Reservation(old, now - before);
        }

        long reserved() {
            return reserved;
        }

        @Override
        public void close() throws IOException {
            Files.writeString(NR_HUGEPAGES, old);
        }
    }
}
