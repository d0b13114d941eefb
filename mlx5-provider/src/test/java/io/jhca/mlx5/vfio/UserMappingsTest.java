package io.jhca.mlx5.vfio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/** How MRs' memory is mapped into the IOMMU: page-aligned spans, shared by overlapping MRs, unmapped by the last. */
class UserMappingsTest {

    /** Records every map and unmap; the function's own DMA memory is [0x100000, 0x200000). */
    private static final class RecordingIommu implements UserMappings.Iommu {
        final List<String> calls = new ArrayList<>();

        @Override
        public void map(long start, long length) {
            calls.add(String.format("map 0x%x+0x%x", start, length));
        }

        @Override
        public void unmap(long start, long length) {
            calls.add(String.format("unmap 0x%x+0x%x", start, length));
        }

        @Override
        public boolean translates(long address) {
            return address >= 0x100000 && address < 0x200000
                    || calls.stream().anyMatch(c -> c.startsWith("map ") && inside(c, address));
        }

        private static boolean inside(String call, long address) {
            String[] p = call.substring(6).split("\\+0x");
            long start = Long.parseLong(p[0], 16);
            return address >= start && address < start + Long.parseLong(p[1], 16);
        }
    }

    @Test
    void spansArePageAlignedAndSharedUntilTheLastUserGoes() {
        RecordingIommu iommu = new RecordingIommu();
        UserMappings m = new UserMappings("mlx5_test", iommu);
        m.map(0x7f0000000800L, 0x2000); // touches three pages
        assertEquals(List.of("map 0x7f0000000000+0x3000"), iommu.calls);
        m.map(0x7f0000001000L, 0x10);    // an MR of a slice inside it: counted, not mapped again
        m.map(0x7f0000000800L, 0x2000);  // a second MR of the same region
        assertEquals(1, iommu.calls.size());
        m.unmap(0x7f0000000800L, 0x2000);
        m.unmap(0x7f0000001000L, 0x10);
        assertEquals(1, iommu.calls.size(), "still one user");
        m.unmap(0x7f0000000800L, 0x2000);
        assertEquals(List.of("map 0x7f0000000000+0x3000", "unmap 0x7f0000000000+0x3000"), iommu.calls);
        assertEquals(0, m.size());
    }

    @Test
    void theFunctionsOwnMemoryIsNotMappedAgain() {
        RecordingIommu iommu = new RecordingIommu();
        UserMappings m = new UserMappings("mlx5_test", iommu);
        m.map(0x100000, 0x1000);
        m.unmap(0x100000, 0x1000);
        assertTrue(iommu.calls.isEmpty(), iommu.calls.toString());
    }

    @Test
    void partialOverlapAndUnknownMemoryAreRefusedByName() {
        RecordingIommu iommu = new RecordingIommu();
        UserMappings m = new UserMappings("mlx5_test", iommu);
        m.map(0x7f0000001000L, 0x1000);
        String overlap = assertThrows(IllegalArgumentException.class, () -> m.map(0x7f0000000800L, 0x1000))
                .getMessage();
        assertTrue(overlap.startsWith("mlx5_test: memory 0x7f0000000800+4096 shares pages"), overlap);
        assertThrows(IllegalArgumentException.class, () -> m.map(0x7f0000001800L, 0x1000),
                "one byte into the next page is not inside the span");
        String unknown = assertThrows(IllegalArgumentException.class, () -> m.unmap(0x7f0000009000L, 8)).getMessage();
        assertTrue(unknown.contains("was not mapped for the device"), unknown);
        assertEquals(1, iommu.calls.size());
        m.map(0x7f0000002000L, 0x1000); // the neighbouring page is free
        assertEquals(2, m.size());
        m.unmapAll();
        assertEquals(0, m.size());
        assertEquals(4, iommu.calls.size(), iommu.calls.toString());
    }

    @Test
    void zeroLengthIsNothing() {
        RecordingIommu iommu = new RecordingIommu();
        UserMappings m = new UserMappings("mlx5_test", iommu);
        m.map(0x7f0000001000L, 0);
        m.unmap(0x7f0000001000L, 0);
        assertTrue(iommu.calls.isEmpty());
    }
}
