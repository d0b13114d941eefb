package io.jhca.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PagemapIovaTest {

    private static final long PRESENT = 1L << 63;
    private static final long SWAPPED = 1L << 62;
    private static final long SOFT_DIRTY = 1L << 55;
    private static final long EXCLUSIVE = 1L << 56;

    /** A fake pagemap: {@code entries[i]} is the entry of page i, in host byte order like the kernel's. */
    private static Path fakePagemap(final Path dir, final long... entries) throws IOException {
        final ByteBuffer bytes = ByteBuffer.allocate(entries.length * 8).order(ByteOrder.nativeOrder());
        for (final long e : entries) {
            bytes.putLong(e);
        }
        final Path file = dir.resolve("pagemap");
        Files.write(file, bytes.array());
        return file;
    }

    @Test
    void translatesPresentEntriesAndKeepsTheInPageOffset(@TempDir final Path dir) throws IOException {
        final long pfn = 0xABCDEL;
        final Path file = fakePagemap(dir, 0, 0, PRESENT | pfn, PRESENT | SOFT_DIRTY | EXCLUSIVE | (pfn + 7));
        try (PagemapIova pagemap = new PagemapIova(file, 4096)) {
            assertEquals(pfn * 4096, pagemap.toIova(0x2000));
            assertEquals(pfn * 4096 + 0x123, pagemap.toIova(0x2123));
            assertEquals(pfn * 4096 + 0xFFF, pagemap.toIova(0x2FFF));
            // flag bits 55..62 are not part of the frame number
            assertEquals((pfn + 7) * 4096 + 1, pagemap.toIova(0x3001));
            assertEquals("pagemap", pagemap.name());
        }
    }

    @Test
    void usesTheGivenBasePageSize(@TempDir final Path dir) throws IOException {
        final Path file = fakePagemap(dir, 0, PRESENT | 0x42);
        try (PagemapIova pagemap = new PagemapIova(file, 16384)) {
            assertEquals(0x42L * 16384 + 0x10, pagemap.toIova(16384 + 0x10));
        }
        assertThrows(IllegalArgumentException.class, () -> new PagemapIova(file, 3000));
    }

    @Test
    void zeroFrameNumberMeansNoRootAndIsRefused(@TempDir final Path dir) throws IOException {
        final Path file = fakePagemap(dir, PRESENT | SOFT_DIRTY);
        try (PagemapIova pagemap = new PagemapIova(file, 4096)) {
            final DmaMemoryException e = assertThrows(DmaMemoryException.class, () -> pagemap.toIova(0x10));
            assertTrue(e.getMessage().contains("needs root") && e.getMessage().contains("CAP_SYS_ADMIN"), e.getMessage());
        }
    }

    @Test
    void absentSwappedAndMissingEntriesAreRefused(@TempDir final Path dir) throws IOException {
        final Path file = fakePagemap(dir, 0, SWAPPED | 0x5);
        try (PagemapIova pagemap = new PagemapIova(file, 4096)) {
            DmaMemoryException e = assertThrows(DmaMemoryException.class, () -> pagemap.toIova(0));
            assertTrue(e.getMessage().contains("not present"), e.getMessage());
            e = assertThrows(DmaMemoryException.class, () -> pagemap.toIova(0x1000));
            assertTrue(e.getMessage().contains("swapped out"), e.getMessage());
            e = assertThrows(DmaMemoryException.class, () -> pagemap.toIova(0x5000));
            assertTrue(e.getMessage().contains("no pagemap entry"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> pagemap.toIova(-4096));
        }
    }

    @Test
    void closedTranslatorFailsClearly(@TempDir final Path dir) throws IOException {
        final PagemapIova pagemap = new PagemapIova(fakePagemap(dir, PRESENT | 1), 4096);
        pagemap.close();
        final DmaMemoryException e = assertThrows(DmaMemoryException.class, () -> pagemap.toIova(0));
        assertTrue(e.getMessage().contains("cannot read"), e.getMessage());
    }

    @Test
    void lockedRegionTranslatesToRealFrames() throws Exception {
        Assumptions.assumeTrue(ProcSelf.isRoot(), () -> skip("physical addresses from /proc/self/pagemap need root"));
        final long page = 4096;
        try (PagemapIova pagemap = new PagemapIova();
             DmaRegion region = DmaMemory.allocate(DmaOptions.of(8 * page).iovaTranslator(pagemap))) {
            final Set<Long> frames = new HashSet<>();
            for (int i = 0; i < 8; i++) {
                final long pa = region.iova(i * page);
                assertNotEquals(0, pa);
                assertEquals(0, pa % page, "page start maps to a frame start");
                // Same page, same frame: only the in-page offset differs.
                assertEquals(pa + 1, region.iova(i * page + 1));
                assertEquals(pa + 0x7FF, region.iova(i * page + 0x7FF));
                assertEquals(pa + page - 1, region.iova(i * page + page - 1));
                frames.add(pa / page);
                // Truth from outside: the kernel's answer to another reader of this process's pagemap.
                assertEquals(pa / page, pfnSeenByPython(region.address() + i * page), "frame of page " + i);
            }
            assertEquals(8, frames.size(), "distinct locked pages have distinct frames: " + frames);
            // A slice translates through the same translator.
            final DmaRegion slice = region.slice(3 * page + 10, 100);
            assertEquals(region.iova(3 * page + 10), slice.iova(0));
            slice.close();
        }
    }

    /** PFN of {@code va} in this JVM, read by /usr/bin/python3 from /proc/<pid>/pagemap. */
    private static long pfnSeenByPython(final long va) throws IOException, InterruptedException {
        final Path python = Path.of("/usr/bin/python3");
        if (!Files.isExecutable(python)) {
            throw new AssertionError("/usr/bin/python3 is missing (install the python3 package)");
        }
        final String script = "import struct,sys\n"
            + "pid,va=int(sys.argv[1]),int(sys.argv[2])\n"
            + "f=open('/proc/%d/pagemap'%pid,'rb')\n"
            + "f.seek(va//4096*8)\n"
            + "e=struct.unpack('=Q',f.read(8))[0]\n"
            + "print(e&((1<<55)-1) if e>>63 else -1)\n";
        final Process p = new ProcessBuilder(python.toString(), "-c", script,
            Long.toString(ProcessHandle.current().pid()), Long.toString(va)).redirectErrorStream(true).start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, p.exitValue(), out);
        return Long.parseLong(out);
    }

    private static String skip(final String reason) {
        System.out.println("SKIPPED: " + reason);
        return reason;
    }
}
