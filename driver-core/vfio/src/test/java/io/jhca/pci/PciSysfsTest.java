package io.jhca.pci;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Discovery from sysfs: fixture trees, and the real /sys of this machine. */
class PciSysfsTest {

    @Test
    void addressesParseAndPrintAsTheKernelDoes() {
        assertEquals(new PciAddress(0, 0, 3, 0), PciAddress.parse("0000:00:03.0"));
        assertEquals(new PciAddress(0, 0xaf, 0x1f, 7), PciAddress.parse("af:1f.7"));
        assertEquals("0001:af:1f.7", new PciAddress(1, 0xaf, 0x1f, 7).toString());
        assertThrows(IllegalArgumentException.class, () -> PciAddress.parse("0000:00:20.0"), "device above 0x1f");
        assertThrows(IllegalArgumentException.class, () -> PciAddress.parse("0000:00:03.8"));
        assertThrows(IllegalArgumentException.class, () -> PciAddress.parse("eth0"));
        assertTrue(PciAddress.parse("00:03.0").compareTo(PciAddress.parse("00:02.7")) > 0);
    }

    @Test
    void listsEveryFunctionWithDriverGroupAndNode(@TempDir final Path root) {
        final SysfsFixture f = new SysfsFixture(root)
            .function("0000:00:03.0", 0x15b3, 0x1017, 0x020000, "mlx5_core", 12, 0)
            .function("0000:00:00.0", 0x8086, 0x29c0, 0x060000, null, -1, -1)
            .function("0000:00:04.0", 0x1234, 0x11e8, 0x00ff00, "vfio-pci", 5, 1);
        final List<PciFunction> all = f.sysfs().list();
        assertEquals(3, all.size());
        assertEquals("0000:00:00.0", all.get(0).address().toString(), "sorted by address");
        final PciFunction mlx = all.get(1);
        assertEquals(0x15b3, mlx.vendor());
        assertEquals(0x1017, mlx.device());
        assertEquals(0x0200, mlx.classId());
        assertEquals("mlx5_core", mlx.driver());
        assertEquals(12, mlx.iommuGroup());
        assertEquals(0, mlx.numaNode());
        assertEquals("0000:00:03.0 Ethernet controller [0200]: 15b3:1017 driver=mlx5_core iommu_group=12 numa=0",
            mlx.describe());
        assertEquals("0000:00:00.0 Host bridge [0600]: 8086:29c0 driver=none iommu_group=none numa=-1",
            all.get(0).describe());
        assertNull(all.get(0).driver());
        assertEquals(List.of(all.get(2)), f.sysfs().find(0x1234, 0x11e8));
        assertEquals(List.of(PciAddress.parse("0000:00:03.0")), f.sysfs().groupMembers(12));
        assertTrue(f.sysfs().iommuEnabled());
        assertTrue(f.sysfs().driverLoaded("vfio-pci"));
        assertFalse(f.sysfs().driverLoaded("nvme"));
        final PciException e = assertThrows(PciException.class, () -> f.sysfs().function(PciAddress.parse("0000:00:09.0")));
        assertTrue(e.getMessage().startsWith("no PCI function 0000:00:09.0"), e.getMessage());
    }

    @Test
    void anEmptyOrMissingTreeListsNothing(@TempDir final Path root) {
        assertEquals(List.of(), PciSysfs.underRoot(root).list());
        assertFalse(PciSysfs.underRoot(root).iommuEnabled());
    }

    /** This machine's /sys: whatever it shows (maybe nothing, in a container) is read without error. */
    @Test
    void theRealSysfsReadsWithoutError() {
        final PciSysfs real = new PciSysfs(Path.of("/sys"), Path.of("/dev"), Path.of("/proc"));
        final List<PciFunction> all = real.list();
        System.out.println("PCI functions on this machine: " + all.size());
        for (final PciFunction fn : all) {
            System.out.println("  " + fn.describe() + " mounted=" + real.mountedBlockDevices(fn.address()));
            assertEquals(fn, real.function(fn.address()));
        }
    }
}
