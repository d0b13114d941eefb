package io.jhca.vfio;

import java.util.List;

import io.jhca.memory.DmaOptions;
import io.jhca.memory.DmaRegion;
import io.jhca.pci.PciBinder;
import io.jhca.pci.PciFunction;
import io.jhca.pci.PciSysfs;

/**
 * What a guest-side check looks like with this library (compiled with the tests so the API stays this short;
 * not run here, where there is no IOMMU): QEMU's edu device (1234:11e8, docs/specs/edu.rst) is found, bound to
 * vfio-pci and opened; BAR0's identification and liveness registers are checked; a DMA region is mapped and
 * edu's DMA engine copies it into its buffer and back; MSI vector 0 signals each step's end.
 */
public final class EduCheckExample {

    // edu registers (little-endian; QEMU hw/misc/edu.c)
    private static final int IDENT = 0x00;
    private static final int LIVENESS = 0x04;
    private static final int IRQ_STATUS = 0x24;
    private static final int IRQ_RAISE = 0x60;
    private static final int IRQ_ACK = 0x64;
    private static final int DMA_SRC = 0x80;
    private static final int DMA_DST = 0x88;
    private static final int DMA_COUNT = 0x90;
    private static final int DMA_CMD = 0x98;
    private static final int DMA_START = 0x1;
    private static final int DMA_TO_RAM = 0x2;
    private static final int DMA_IRQ = 0x4;
    /** edu's DMA buffer, as the device addresses it. */
    private static final long EDU_BUFFER = 0x40000;

    private EduCheckExample() {
    }

    public static void main(final String[] args) {
        final PciSysfs sysfs = PciSysfs.system();
        final List<PciFunction> edus = sysfs.find(0x1234, 0x11e8);
        if (edus.isEmpty()) {
            throw new IllegalStateException("no edu device (add -device edu to QEMU)");
        }
        final PciFunction edu = edus.get(0);
        new PciBinder(sysfs).bind(edu.address(), PciBinder.VFIO_PCI).forEach(System.out::println);

        try (VfioContainer container = VfioContainer.open(); VfioDevice device = container.openDevice(edu)) {
            final BarMapping bar0 = device.mapBar(0);
            check(bar0.read32(IDENT) == 0x010000ed, "identification 0x" + Integer.toHexString(bar0.read32(IDENT)));
            bar0.write32(LIVENESS, 0x12345678);
            check(bar0.read32(LIVENESS) == ~0x12345678, "liveness register reads back inverted");
            device.enableBusMaster();

            final VfioInterrupt msi = device.enableInterrupt(VfioAbi.VFIO_PCI_MSI_IRQ_INDEX, 0);
            bar0.write32(IRQ_RAISE, 0x1);
            check(msi.await(5000) > 0, "MSI after a raise");
            bar0.write32(IRQ_ACK, bar0.read32(IRQ_STATUS));

            final DmaRegion out = container.allocate(DmaOptions.of(4096));
            final DmaRegion back = container.allocate(DmaOptions.of(4096));
            for (int i = 0; i < 4096; i += 4) {
                out.buffer().putInt(i, 0x5a000000 | i);
            }
            check(out.iova(4095) < 1L << 28, "IOVA inside edu's 28-bit DMA mask");
            dma(bar0, msi, out.iova(0), EDU_BUFFER, 0);
            dma(bar0, msi, EDU_BUFFER, back.iova(0), DMA_TO_RAM);
            for (int i = 0; i < 4096; i += 4) {
                check(back.buffer().getInt(i) == (0x5a000000 | i), "byte " + i + " made the round trip");
            }
            System.out.println("edu " + edu.address() + ": registers, MSI and DMA through IOVA 0x"
                + Long.toHexString(out.iova(0)) + " OK");
            back.close();
            out.close();
        }
    }

    private static void dma(final BarMapping bar0, final VfioInterrupt msi, final long src, final long dst, final int dir) {
        bar0.write64(DMA_SRC, src);
        bar0.write64(DMA_DST, dst);
        bar0.write64(DMA_COUNT, 4096);
        bar0.write64(DMA_CMD, DMA_START | DMA_IRQ | dir);
        check(msi.await(5000) > 0, "MSI at the end of the DMA");
        bar0.write32(IRQ_ACK, bar0.read32(IRQ_STATUS));
    }

    private static void check(final boolean ok, final String what) {
        if (!ok) {
            throw new IllegalStateException("edu check failed: " + what);
        }
    }
}
