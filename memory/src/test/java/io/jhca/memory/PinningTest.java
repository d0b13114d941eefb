package io.jhca.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

/** Locking, MADV_DONTFORK and munmap, checked against the kernel's accounting in /proc/self. */
class PinningTest {

    private static final long SIZE = 3 << 20;

    private static List<String> vmFlags(final long address) throws IOException {
        return Arrays.asList(ProcSelf.smapsField(ProcSelf.smaps(address), "VmFlags").split("\\s+"));
    }

    @Test
    void lockedRegionCountsInVmLckUntilClose() throws IOException {
        final long before = ProcSelf.vmLckKb();
        final DmaRegion region = DmaMemory.allocate(SIZE);
        final long during = ProcSelf.vmLckKb();
        assertTrue(during - before >= SIZE / 1024, "VmLck grew by " + (during - before) + " kB, region is " + SIZE / 1024 + " kB");
        assertTrue(vmFlags(region.address()).contains("lo"), "VmFlags " + vmFlags(region.address()));
        region.close();
        final long after = ProcSelf.vmLckKb();
        assertTrue(during - after >= SIZE / 1024, "VmLck went from " + during + " to " + after + " kB after close");
    }

    @Test
    void unlockedRegionDoesNotCountInVmLck() throws IOException {
        final long before = ProcSelf.vmLckKb();
        try (DmaRegion region = DmaMemory.allocate(DmaOptions.of(SIZE).lock(false))) {
            assertEquals(before, ProcSelf.vmLckKb());
            assertFalse(vmFlags(region.address()).contains("lo"));
            assertFalse(((MappedRegion) region).locked());
        }
    }

    @Test
    void regionIsNotInheritedByFork() throws IOException {
        try (DmaRegion region = DmaMemory.allocate(4096)) {
            // smaps VmFlags "dc" = VM_DONTCOPY, what MADV_DONTFORK sets (fs/proc/task_mmu.c mnemonics).
            assertTrue(vmFlags(region.address()).contains("dc"), "VmFlags " + vmFlags(region.address()));
        }
        try (DmaRegion unlocked = DmaMemory.allocate(DmaOptions.of(4096).lock(false))) {
            assertTrue(vmFlags(unlocked.address()).contains("dc"), "MADV_DONTFORK does not depend on locking");
        }
    }

    @Test
    void closeUnmaps() throws IOException {
        final List<Long> addresses = new ArrayList<>();
        final List<DmaRegion> regions = new ArrayList<>();
        for (final long size : new long[] {1, 4096, 5000, SIZE}) {
            final DmaRegion region = DmaMemory.allocate(size);
            regions.add(region);
            addresses.add(region.address());
            assertTrue(ProcSelf.mapped(region.address()));
        }
        for (int i = 0; i < regions.size(); i++) {
            regions.get(i).close();
            assertFalse(ProcSelf.mapped(addresses.get(i)), "0x" + Long.toHexString(addresses.get(i)) + " still mapped");
        }
    }

    @Test
    void translatorMapsAfterPinningAndUnmapsBeforeMunmap() throws IOException {
        final RecordingTranslator translator = new RecordingTranslator();
        final DmaRegion region = DmaMemory.allocate(DmaOptions.of(5000).iovaTranslator(translator));
        final long address = region.address();
        assertEquals(List.of("map 0x" + Long.toHexString(address) + "+8192 locked"), translator.calls);
        assertEquals(address + 0x1000_0000L + 17, region.iova(17));
        region.close();
        assertEquals("unmap 0x" + Long.toHexString(address) + "+8192 mapped", translator.calls.get(1));
        assertFalse(ProcSelf.mapped(address));
    }

    @Test
    void translatorMapFailureUndoesTheMapping() {
        final RecordingTranslator translator = new RecordingTranslator();
        translator.failMap = true;
        final DmaMemoryException e = assertThrows(DmaMemoryException.class,
            () -> DmaMemory.allocate(DmaOptions.of(4096).iovaTranslator(translator)));
        assertEquals("no IOMMU here", e.getMessage());
        final long address = Long.parseLong(translator.calls.get(0).split(" ")[1].substring(2).split("\\+")[0], 16);
        assertTrue(translator.calls.size() == 1, "no unmap for a map that failed: " + translator.calls);
        try {
            assertFalse(ProcSelf.mapped(address), "mapping left behind after a failed allocation");
        } catch (final IOException io) {
            throw new AssertionError(io);
        }
    }

    /** A translator with an offset, recording what the allocator asks of it and what the kernel shows then. */
    private static final class RecordingTranslator implements IovaTranslator {
        final List<String> calls = new ArrayList<>();
        boolean failMap;

        @Override
        public long toIova(final long virtualAddress) {
            return virtualAddress + 0x1000_0000L;
        }

        @Override
        public String name() {
            return "recording";
        }

        @Override
        public void map(final long virtualAddress, final long length) {
            calls.add("map 0x" + Long.toHexString(virtualAddress) + "+" + length + (lockedNow(virtualAddress) ? " locked" : " unlocked"));
            if (failMap) {
                throw new DmaMemoryException("no IOMMU here");
            }
        }

        @Override
        public void unmap(final long virtualAddress, final long length) {
            calls.add("unmap 0x" + Long.toHexString(virtualAddress) + "+" + length + (mappedNow(virtualAddress) ? " mapped" : " gone"));
        }

        private static boolean lockedNow(final long address) {
            try {
                return vmFlags(address).contains("lo");
            } catch (final IOException e) {
                throw new AssertionError(e);
            }
        }

        private static boolean mappedNow(final long address) {
            try {
                return ProcSelf.mapped(address);
            } catch (final IOException e) {
                throw new AssertionError(e);
            }
        }
    }
}
