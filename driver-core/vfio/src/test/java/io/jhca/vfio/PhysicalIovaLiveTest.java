package io.jhca.vfio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaOptions;
import io.jhca.memory.DmaRegion;
import io.jhca.memory.PagemapIova;

/**
 * The "physical" IOVA policy with this machine's real /proc/self/pagemap (root only) and a fake container:
 * every mapping's IOVA is the physical address of its first page, and the runs cover the region exactly.
 */
class PhysicalIovaLiveTest {

    @Test
    void mappingsSitAtThePagesPhysicalAddresses() {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")), "reading physical addresses needs root");
        final FakeKernel k = new FakeKernel();
        try (VfioContainer c = VfioContainer.open(k, Path.of("/dev"), false); PagemapIova pagemap = new PagemapIova()) {
            c.openGroup(FakeKernel.GROUP);
            final VfioIova phys = c.physicalDma();
            try (DmaRegion r = DmaMemory.allocate(DmaOptions.of(64 * 1024).iovaTranslator(phys))) {
                final List<DmaMapping> maps = c.mappings();
                long covered = 0;
                for (final DmaMapping m : maps) {
                    assertEquals(pagemap.toIova(m.vaddr()), m.iova(), "IOVA of " + m);
                    covered += m.size();
                }
                assertEquals(64 * 1024, covered);
                assertEquals(maps.size(), phys.mappingCount());
                for (int off = 0; off < 64 * 1024; off += 4096) {
                    assertEquals(pagemap.toIova(r.address() + off + 12), r.iova(off + 12), "offset " + off);
                }
                System.out.println("64 KiB of small pages took " + maps.size() + " IOVA-contiguous run(s)");
                assertTrue(maps.size() >= 1 && maps.size() <= 16);
            }
            assertEquals(0, k.dma.size(), "closing the region unmapped every run");
        }
    }
}
