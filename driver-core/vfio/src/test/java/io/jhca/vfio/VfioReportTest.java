package io.jhca.vfio;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.jhca.pci.PciAddress;

/** The report lines for the fake kernel's device. */
class VfioReportTest {

    @Test
    void describesIommuRegionsAndIrqs() {
        final FakeKernel k = new FakeKernel();
        try (VfioContainer c = VfioContainer.open(k, Path.of("/dev"), false);
             VfioDevice d = c.openDevice(PciAddress.parse(FakeKernel.DEVICE), FakeKernel.GROUP)) {
            assertEquals(List.of(
                "vfio api 0, iommu TYPE1V2, page sizes 0x40201000, iova ranges [[0x0-0xfedfffff],"
                    + " [0xfef00000-0xffffffffffff]], mapping limit 65535",
                "device 0000:00:03.0: flags 0x3 pci reset, 9 regions, 5 irq indexes",
                "region 0 BAR0   size 0x4000 offset 0x0 rw mmap",
                "region 2 BAR2   size 0x10000 offset 0x20000000000 rw mmap cap sparse-mmap [0x0+0x2000] [0x3000+0xd000]",
                "region 4 BAR4   size 0x20 offset 0x40000000000 rw",
                "region 6 ROM    size 0x800 offset 0x60000000000 r-",
                "region 7 config size 0x100 offset 0x70000000000 rw",
                "irq 0 INTx  1 vector(s) eventfd maskable automasked",
                "irq 1 MSI   1 vector(s) eventfd",
                "irq 2 MSI-X 4 vector(s) eventfd",
                "irq 3 ERR   1 vector(s) eventfd",
                "irq 4 REQ   1 vector(s) eventfd"), VfioReport.describe(c, d));
        }
    }
}
