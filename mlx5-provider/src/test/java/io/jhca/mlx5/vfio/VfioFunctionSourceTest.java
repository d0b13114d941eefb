package io.jhca.mlx5.vfio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.ServiceLoader;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.jhca.mlx5.spi.Mlx5FunctionSource;
import io.jhca.pci.PciAddress;
import io.jhca.pci.PciFunction;
import io.jhca.pci.PciSysfs;

/** Listing, names and refusals of the vfio backend on fixture sysfs trees; nothing here opens VFIO. */
class VfioFunctionSourceTest {

    @TempDir
    Path root;

    /** A function directory as sysfs lays it out: ids, class, driver and iommu_group links. */
    private void function(String bdf, int vendor, int device, String driver, int group) throws IOException {
        Path dir = root.resolve("sys/devices/pci0000:00").resolve(bdf);
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("vendor"), String.format("0x%04x%n", vendor));
        Files.writeString(dir.resolve("device"), String.format("0x%04x%n", device));
        Files.writeString(dir.resolve("class"), "0x020000\n");
        Files.writeString(dir.resolve("numa_node"), "-1\n");
        Path devices = root.resolve("sys/bus/pci/devices");
        Files.createDirectories(devices);
        Files.createSymbolicLink(devices.resolve(bdf), Path.of("../../../devices/pci0000:00").resolve(bdf));
        if (driver != null) {
            Files.createDirectories(root.resolve("sys/bus/pci/drivers").resolve(driver));
            Files.createSymbolicLink(dir.resolve("driver"), Path.of("../../../bus/pci/drivers").resolve(driver));
        }
        if (group >= 0) {
            Files.createDirectories(root.resolve("sys/kernel/iommu_groups").resolve(Integer.toString(group)));
            Files.createSymbolicLink(dir.resolve("iommu_group"),
                    Path.of("../../../kernel/iommu_groups").resolve(Integer.toString(group)));
        }
    }

    private VfioFunctionSource source(VfioSettings settings) {
        return new VfioFunctionSource(() -> PciSysfs.underRoot(root), () -> settings);
    }

    private void lab() throws IOException {
        function("0000:03:00.0", 0x15b3, 0x1017, "vfio-pci", 12);   // ConnectX-5 PF
        function("0000:03:00.1", 0x15b3, 0x1018, "vfio-pci", 13);   // ConnectX-5 VF
        function("0000:04:00.0", 0x15b3, 0x1015, "mlx5_core", 14);  // ConnectX-4 Lx, kernel driver
        function("0000:05:00.0", 0x15b3, 0x1011, "vfio-pci", 15);   // Connect-IB: before ConnectX-4
        function("0000:05:00.1", 0x15b3, 0x1012, "vfio-pci", 15);   // Connect-IB VF
        function("0000:00:04.0", 0x1af4, 0x1110, "vfio-pci", 3);    // ivshmem
        function("0000:00:02.0", 0x8086, 0x1013, "vfio-pci", 2);    // another vendor's 0x1013
    }

    @Test
    void listsConnectXFourAndLaterBoundToVfioPciByAddress() throws IOException {
        lab();
        assertEquals(List.of("mlx5_0000:03:00.0", "mlx5_0000:03:00.1"), source(VfioSettings.NONE).names());
    }

    @Test
    void testModeAddsExactlyItsVendorAndDevice() throws IOException {
        lab();
        function("0000:00:05.0", 0x1af4, 0x1111, "vfio-pci", 4);    // same vendor, other device
        VfioSettings test = VfioSettings.parse(null, "1af4:1110,bar=2,iova=physical");
        assertEquals(List.of("mlx5_0000:00:04.0", "mlx5_0000:03:00.0", "mlx5_0000:03:00.1"), source(test).names());
        assertTrue(test.testFunction(0x1af4, 0x1110));
        assertFalse(test.testFunction(0x15b3, 0x1017), "a real ConnectX is never opened in the test mode's way");
        assertEquals(2, test.testBar());
        assertTrue(test.testPhysicalIova());
    }

    @Test
    void anUnreadableFunctionListsNothingInsteadOfFailingTheProvider() throws IOException {
        lab();
        Files.delete(root.resolve("sys/devices/pci0000:00/0000:03:00.0/vendor"));
        assertEquals(List.of(), source(VfioSettings.NONE).names());
    }

    @Test
    void emptyWhenThereIsNoPciBus() {
        assertEquals(List.of(), source(VfioSettings.NONE).names());
    }

    @Test
    void everyTableEntryIsAcceptedAndNeighboursAreNot() {
        for (int id : new int[] {0x1013, 0x1014, 0x1015, 0x1016, 0x1017, 0x1018, 0x1019, 0x101a, 0x101b, 0x101c,
                0x101d, 0x101e, 0x101f, 0x1021, 0x1023, 0x1025, 0x1027, 0xa2d2, 0xa2d3, 0xa2d6, 0xa2dc, 0xa2df}) {
            assertTrue(ConnectXIds.supported(0x15b3, id), Integer.toHexString(id));
            assertFalse(ConnectXIds.supported(0x15b4, id), Integer.toHexString(id));
        }
        for (int id : new int[] {0x1011, 0x1012, 0x1020, 0x1022, 0x1028, 0x0000, 0xffff}) {
            assertFalse(ConnectXIds.supported(0x15b3, id), Integer.toHexString(id));
        }
    }

    @Test
    void opensOnlyWhatItWouldList() throws IOException {
        lab();
        PciSysfs sys = PciSysfs.underRoot(root);
        PciFunction f = VfioFunctionSource.function(sys, VfioSettings.NONE, "mlx5_0000:03:00.0");
        assertEquals(PciAddress.parse("0000:03:00.0"), f.address());
        assertEquals(12, f.iommuGroup());

        String kernel = assertThrows(IllegalStateException.class,
                () -> VfioFunctionSource.function(sys, VfioSettings.NONE, "mlx5_0000:04:00.0")).getMessage();
        assertTrue(kernel.contains("bound to mlx5_core, not vfio-pci") && kernel.contains("hwlab pci bind 0000:04:00.0"),
                kernel);
        String other = assertThrows(IllegalArgumentException.class,
                () -> VfioFunctionSource.function(sys, VfioSettings.NONE, "mlx5_0000:00:04.0")).getMessage();
        assertTrue(other.contains("1af4:1110, not a ConnectX-4") && other.contains(VfioSettings.TEST_PROPERTY), other);
        String old = assertThrows(IllegalArgumentException.class,
                () -> VfioFunctionSource.function(sys, VfioSettings.NONE, "mlx5_0000:05:00.0")).getMessage();
        assertTrue(old.contains("15b3:1011"), old);
        assertThrows(RuntimeException.class, () -> VfioFunctionSource.function(sys, VfioSettings.NONE, "mlx5_0000:09:00.0"));
        for (String bad : new String[] {"mlx5_0", "0000:03:00.0", "mlx5_0000:03:00.8", "", "vfio_0000:03:00.0"}) {
            assertThrows(IllegalArgumentException.class, () -> VfioFunctionSource.function(sys, VfioSettings.NONE, bad), bad);
        }
    }

    @Test
    void unboundFunctionIsRefusedWithTheBindCommand() throws IOException {
        function("0000:06:00.0", 0x15b3, 0x101d, null, 20);
        String m = assertThrows(IllegalStateException.class, () -> VfioFunctionSource.function(PciSysfs.underRoot(root),
                VfioSettings.NONE, "mlx5_0000:06:00.0")).getMessage();
        assertTrue(m.contains("bound to no driver") && m.contains("hwlab pci bind 0000:06:00.0"), m);
    }

    @Test
    void portAddressesPerFunction() throws Exception {
        VfioSettings s = VfioSettings.parse("0000:03:00.0=192.0.2.5|192.0.2.6;03:00.1=fe80::1", null);
        assertEquals(List.of(InetAddress.getByName("192.0.2.5"), InetAddress.getByName("192.0.2.6")),
                s.addressesOf(PciAddress.parse("0000:03:00.0")));
        assertEquals(List.of(InetAddress.getByName("fe80::1")), s.addressesOf(PciAddress.parse("0000:03:00.1")));
        assertEquals(List.of(), s.addressesOf(PciAddress.parse("0000:04:00.0")));
        assertFalse(s.testMode());
    }

    @Test
    void badSettingsAreRefusedByName() {
        for (String bad : new String[] {"0000:03:00.0", "0000:03:00.0=host.example", "0000:03:00.0=256.1.1.1",
                "0000:03:00.0=1.2.3", "zz=192.0.2.1", "0000:03:00.0=192.0.2.1;0000:03:00.0=192.0.2.2"}) {
            String m = assertThrows(IllegalArgumentException.class, () -> VfioSettings.parse(bad, null), bad).getMessage();
            assertTrue(m.contains(VfioSettings.ADDRESSES_PROPERTY) || m.contains("PCI address"), m);
        }
        for (String bad : new String[] {"1af4", "1af4:11100", "1af4:1110,bar=6", "1af4:1110,bar=x", "1af4:1110,iova=va",
                "xyz:1110"}) {
            String m = assertThrows(IllegalArgumentException.class, () -> VfioSettings.parse(null, bad), bad).getMessage();
            assertTrue(m.contains(VfioSettings.TEST_PROPERTY), m);
        }
        VfioSettings defaults = VfioSettings.parse(null, "1af4:1110");
        assertEquals(0, defaults.testBar());
        assertFalse(defaults.testPhysicalIova());
    }

    @Test
    void registeredForServiceLoaderBesideTheOthers() {
        boolean found = false;
        for (Mlx5FunctionSource s : ServiceLoader.load(Mlx5FunctionSource.class)) {
            found |= s instanceof VfioFunctionSource;
        }
        assertTrue(found);
    }
}
