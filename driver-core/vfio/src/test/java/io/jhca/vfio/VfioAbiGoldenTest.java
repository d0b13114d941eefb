package io.jhca.vfio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every constant of {@link VfioAbi} equals what a C program compiled against linux/vfio.h prints, and none is unchecked. */
class VfioAbiGoldenTest {

    @Test
    void everyConstantMatchesTheKernelHeader(@TempDir final Path dir) throws Exception {
        final Map<String, Long> golden = GoldenGcc.run("vfio_abi", dir);
        final List<String> mismatches = new ArrayList<>();
        final TreeSet<String> unchecked = new TreeSet<>();
        int checked = 0;
        for (final Field f : VfioAbi.class.getDeclaredFields()) {
            if (!Modifier.isStatic(f.getModifiers()) || !Modifier.isPublic(f.getModifiers())) {
                continue;
            }
            final long java = ((Number) f.get(null)).longValue();
            final Long c = golden.get(f.getName());
            if (c == null) {
                unchecked.add(f.getName());
            } else if (c != java) {
                mismatches.add(f.getName() + ": Java " + java + " (0x" + Long.toHexString(java) + "), C " + c
                    + " (0x" + Long.toHexString(c) + ")");
            } else {
                checked++;
            }
        }
        assertEquals(List.of(), mismatches, "constants differing from linux/vfio.h");
        assertEquals(new TreeSet<>(), unchecked, "constants the golden program does not print");
        assertEquals(golden.size(), checked, "the golden program prints names VfioAbi lacks");
        assertTrue(checked > 100, "checked " + checked);
    }

    @Test
    void ioctlNumbersAreUnderscoreIoOfSemicolon() {
        // _IO(';', 100 + n): type in bits 15:8, number in 7:0, no size or direction (asm-generic/ioctl.h)
        assertEquals((';' << 8) | 100, VfioAbi.VFIO_GET_API_VERSION);
        assertEquals((';' << 8) | 113, VfioAbi.VFIO_IOMMU_MAP_DMA);
    }
}
