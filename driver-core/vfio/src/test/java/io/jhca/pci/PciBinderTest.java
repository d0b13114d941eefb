package io.jhca.pci;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Binding and unbinding on fixture trees, and every refusal with its advice; a refusal writes nothing. */
class PciBinderTest {

    private static final PciAddress NIC = PciAddress.parse("0000:00:03.0");
    private static final PciAddress FN1 = PciAddress.parse("0000:00:03.1");

    private static SysfsFixture oneNic(final Path root) {
        return new SysfsFixture(root).driver("vfio-pci")
            .function("0000:00:03.0", 0x15b3, 0x1017, 0x020000, "mlx5_core", 12, 0);
    }

    @Test
    void bindsThroughDriverOverrideUnbindAndProbe(@TempDir final Path root) {
        final SysfsFixture f = oneNic(root);
        final List<String> done = f.binder().bind(NIC, "vfio-pci");
        assertEquals(List.of("0000:00:03.0: unbound from mlx5_core, bound to vfio-pci (iommu group 12, "
            + f.dev.resolve("vfio/12") + ")"), done);
        assertEquals("vfio-pci", f.sysfs().function(NIC).driver());
        assertEquals("vfio-pci\n", f.read(f.functionDir("0000:00:03.0").resolve("driver_override")));
        assertEquals(List.of("0000:00:03.0: already bound to vfio-pci (iommu group 12, " + f.dev.resolve("vfio/12") + ")"),
            f.binder().bind(NIC, "vfio-pci"), "binding again does nothing");
    }

    @Test
    void unbindsAndClearsTheOverride(@TempDir final Path root) {
        final SysfsFixture f = oneNic(root);
        f.binder().bind(NIC, "vfio-pci");
        assertEquals("0000:00:03.0: unbound from vfio-pci", f.binder().unbind(NIC));
        assertEquals(null, f.sysfs().function(NIC).driver());
        assertEquals("(null)\n", f.read(f.functionDir("0000:00:03.0").resolve("driver_override")));
        assertEquals("0000:00:03.0: not bound to any driver; nothing to do", f.binder().unbind(NIC));
    }

    @Test
    void refusesWithoutAnIommuAndSaysHowToEnableIt(@TempDir final Path root) {
        final SysfsFixture f = new SysfsFixture(root).driver("vfio-pci")
            .function("0000:00:03.0", 0x15b3, 0x1017, 0x020000, "mlx5_core", -1, 0);
        final PciException e = assertThrows(PciException.class, () -> f.binder().bind(NIC, "vfio-pci"));
        assertTrue(e.getMessage().startsWith("0000:00:03.0: no IOMMU: "), e.getMessage());
        assertTrue(e.getMessage().contains("is empty"), e.getMessage());
        assertTrue(e.getMessage().contains("intel_iommu=on"), e.getMessage());
        assertTrue(e.getMessage().contains("amd_iommu=on"), e.getMessage());
        assertUntouched(f, "mlx5_core");
    }

    @Test
    void noIommuModeLetsTheBindThrough(@TempDir final Path root) throws Exception {
        final SysfsFixture f = new SysfsFixture(root).driver("vfio-pci")
            .function("0000:00:03.0", 0x15b3, 0x1017, 0x020000, null, -1, 0);
        Files.createDirectories(f.sys.resolve("module/vfio/parameters"));
        Files.writeString(f.sys.resolve("module/vfio/parameters/enable_unsafe_noiommu_mode"), "Y\n");
        assertTrue(f.sysfs().noIommuMode());
        assertEquals(List.of("0000:00:03.0: bound to vfio-pci (no IOMMU group)"), f.binder().bind(NIC, "vfio-pci"));
    }

    @Test
    void refusesWhenTheDriverIsNotLoaded(@TempDir final Path root) {
        final SysfsFixture f = new SysfsFixture(root)
            .function("0000:00:03.0", 0x15b3, 0x1017, 0x020000, "mlx5_core", 12, 0);
        final PciException e = assertThrows(PciException.class, () -> f.binder().bind(NIC, "vfio-pci"));
        assertEquals("driver vfio-pci is not loaded (no " + f.sys.resolve("bus/pci/drivers/vfio-pci") + "): modprobe vfio-pci",
            e.getMessage());
        assertUntouched(f, "mlx5_core");
    }

    @Test
    void refusesANonViableGroupNamingTheOthersAndTheirDrivers(@TempDir final Path root) {
        final SysfsFixture f = oneNic(root)
            .function("0000:00:03.1", 0x15b3, 0x1017, 0x020000, "mlx5_core", 12, 0)
            .function("0000:00:03.2", 0x8086, 0x1234, 0x060400, "pcieport", 12, 0)  // a bridge: allowed
            .function("0000:00:03.3", 0x1af4, 0x1000, 0x020000, null, 12, 0);       // no driver: allowed
        final PciException e = assertThrows(PciException.class, () -> f.binder().bind(NIC, "vfio-pci"));
        assertEquals("IOMMU group 12 would not be viable: 0000:00:03.1 (driver mlx5_core) share(s) it; every function of a"
            + " group must be bound to vfio-pci or to no driver: bind them together (hwlab pci bind 0000:00:03.0"
            + " 0000:00:03.1 vfio-pci) or unbind them first", e.getMessage());
        assertUntouched(f, "mlx5_core");
        final List<String> done = f.binder().bind(List.of(NIC, FN1), "vfio-pci");
        assertEquals(2, done.size(), "bound together");
        assertEquals("vfio-pci", f.sysfs().function(FN1).driver());
    }

    @Test
    void refusesAFunctionWhoseInterfaceIsUp(@TempDir final Path root) {
        final SysfsFixture f = oneNic(root).netInterface("0000:00:03.0", "ens3", "up");
        final PciException e = assertThrows(PciException.class, () -> f.binder().bind(NIC, "vfio-pci"));
        assertEquals("0000:00:03.0: in use: its network interface ens3 is up; take it down first (ip link set ens3 down)",
            e.getMessage());
        assertUntouched(f, "mlx5_core");
        final SysfsFixture down = oneNic(root.resolve("down")).netInterface("0000:00:03.0", "ens3", "down");
        down.binder().bind(NIC, "vfio-pci");
    }

    @Test
    void refusesAFunctionWithAMountedDisk(@TempDir final Path root) {
        final SysfsFixture f = new SysfsFixture(root).driver("vfio-pci")
            .function("0000:00:03.0", 0x1b36, 0x0010, 0x010802, "nvme", 12, 0)
            .function("0000:00:04.0", 0x1b36, 0x0010, 0x010802, "nvme", 13, 0)
            .blockDevice("0000:00:03.0", "nvme0n1", null)
            .blockDevice("0000:00:03.0", "nvme0n1p1", "/boot")
            .blockDevice("0000:00:04.0", "nvme1n1", null);
        final PciException e = assertThrows(PciException.class, () -> f.binder().bind(NIC, "vfio-pci"));
        assertEquals("0000:00:03.0: in use: nvme0n1p1 on /boot (mounted); unmount first", e.getMessage());
        assertUntouched(f, "nvme");
        assertEquals(1, f.binder().bind(PciAddress.parse("0000:00:04.0"), "vfio-pci").size(), "its disk is not mounted");
    }

    @Test
    void refusesToUnbindAGroupAProcessHoldsOpen(@TempDir final Path root) {
        final SysfsFixture f = new SysfsFixture(root)
            .function("0000:00:03.0", 0x15b3, 0x1017, 0x020000, "vfio-pci", 12, 0);
        f.openFile(4242, f.dev.resolve("vfio/12"));
        final PciException e = assertThrows(PciException.class, () -> f.binder().unbind(NIC));
        assertTrue(e.getMessage().startsWith("0000:00:03.0: in use: " + f.dev.resolve("vfio/12") + " is open in process(es) [4242]"),
            e.getMessage());
        assertUntouched(f, "vfio-pci");
    }

    @Test
    void reportsAMissingOrInaccessibleGroupNode(@TempDir final Path root) throws Exception {
        final SysfsFixture f = oneNic(root);
        f.createsVfioNode = false;
        final PciException e = assertThrows(PciException.class, () -> f.binder().bind(NIC, "vfio-pci"));
        assertTrue(e.getMessage().contains(f.dev.resolve("vfio/12") + " does not exist"), e.getMessage());
        final SysfsFixture g = oneNic(root.resolve("g"));
        g.inaccessible.add(g.dev.resolve("vfio/12"));
        final PciException denied = assertThrows(PciException.class, () -> g.binder().bind(NIC, "vfio-pci"));
        assertEquals("0000:00:03.0: bound to vfio-pci but " + g.dev.resolve("vfio/12") + " is not accessible to this user:"
            + " run as root or give the user access (chown or a udev rule for " + g.dev.resolve("vfio/12") + ")",
            denied.getMessage());
    }

    @Test
    void saysSoWhenTheKernelDoesNotBind(@TempDir final Path root) {
        final SysfsFixture f = oneNic(root);
        f.probeBinds = false;
        final PciException e = assertThrows(PciException.class, () -> f.binder().bind(NIC, "vfio-pci"));
        assertEquals("0000:00:03.0: the kernel did not bind it to vfio-pci (now: no driver); see dmesg for the driver's reason",
            e.getMessage());
    }

    @Test
    void refusesBadDriverNamesAndUnknownFunctions(@TempDir final Path root) {
        final SysfsFixture f = oneNic(root);
        assertThrows(PciException.class, () -> f.binder().bind(NIC, "../x"));
        assertThrows(PciException.class, () -> f.binder().bind(PciAddress.parse("0000:00:09.0"), "vfio-pci"));
    }

    private static void assertUntouched(final SysfsFixture f, final String driver) {
        assertEquals(driver, f.sysfs().function(NIC).driver());
        assertEquals("(null)\n", f.read(f.functionDir("0000:00:03.0").resolve("driver_override")), "a refusal writes nothing");
        assertFalse(Files.exists(f.dev.resolve("vfio/12")) && !"vfio-pci".equals(driver));
    }
}
