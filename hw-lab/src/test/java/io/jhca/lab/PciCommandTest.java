package io.jhca.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.jhca.pci.PciSysfs;

/** {@code hwlab pci list|bind|unbind} on fixture sysfs trees, with a fake kernel behind the sysfs writes. */
class PciCommandTest {

    record Run(int rc, String out, String err) {
    }

    @TempDir
    Path root;

    @BeforeEach
    void fakeKernel() {
        PciCommand.writerForTests = this::kernelWrite;
    }

    @AfterEach
    void realKernel() {
        PciCommand.writerForTests = null;
    }

    private Run run(String... args) {
        String[] all = new String[args.length + 2];
        System.arraycopy(args, 0, all, 0, args.length);
        all[args.length] = "--sysfs-root";
        all[args.length + 1] = root.toString();
        StringWriter o = new StringWriter();
        StringWriter e = new StringWriter();
        int rc = HwLab.execute(all, new PrintWriter(o), new PrintWriter(e));
        return new Run(rc, o.toString(), e.toString());
    }

    private Path sys(String p) {
        return root.resolve("sys").resolve(p);
    }

    private void function(String bdf, String vendor, String device, String cls, String driver, int group) throws IOException {
        Path dir = sys("devices/pci0000:00").resolve(bdf);
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("vendor"), "0x" + vendor + "\n");
        Files.writeString(dir.resolve("device"), "0x" + device + "\n");
        Files.writeString(dir.resolve("class"), "0x" + cls + "\n");
        Files.writeString(dir.resolve("numa_node"), "0\n");
        Files.writeString(dir.resolve("driver_override"), "(null)\n");
        Files.createDirectories(sys("bus/pci/devices"));
        Files.createSymbolicLink(sys("bus/pci/devices").resolve(bdf), Path.of("../../../devices/pci0000:00").resolve(bdf));
        if (driver != null) {
            Files.createDirectories(sys("bus/pci/drivers").resolve(driver));
            Files.createSymbolicLink(dir.resolve("driver"), Path.of("../../../bus/pci/drivers").resolve(driver));
        }
        if (group >= 0) {
            Path g = sys("kernel/iommu_groups").resolve(Integer.toString(group)).resolve("devices");
            Files.createDirectories(g);
            Files.createSymbolicLink(g.resolve(bdf), Path.of("../../../../devices/pci0000:00").resolve(bdf));
            Files.createSymbolicLink(dir.resolve("iommu_group"), Path.of("../../../kernel/iommu_groups").resolve(Integer.toString(group)));
        }
    }

    /** The kernel's side of driver_override, driver/unbind and drivers_probe. */
    private void kernelWrite(Path attribute, String value) throws IOException {
        String name = attribute.getFileName().toString();
        if (name.equals("driver_override")) {
            Files.writeString(attribute, value.isBlank() ? "(null)\n" : value + "\n");
        } else if (name.equals("unbind")) {
            Files.delete(attribute.getParent());
        } else if (name.equals("drivers_probe")) {
            Path dir = sys("bus/pci/devices").resolve(value.trim());
            String override = Files.readString(dir.resolve("driver_override")).trim();
            if (Files.isDirectory(sys("bus/pci/drivers").resolve(override))) {
                Files.createSymbolicLink(dir.resolve("driver"), Path.of("../../../bus/pci/drivers").resolve(override));
                String group = Files.readSymbolicLink(dir.resolve("iommu_group")).getFileName().toString();
                Files.createDirectories(root.resolve("dev/vfio"));
                Files.writeString(root.resolve("dev/vfio").resolve(group), "");
            }
        } else {
            throw new IOException("unexpected write to " + attribute);
        }
    }

    @Test
    void listPrintsLspciStyleLinesWithDriverGroupAndNode() throws IOException {
        function("0000:00:03.0", "15b3", "1017", "020000", "mlx5_core", 12);
        function("0000:00:04.0", "1234", "11e8", "00ff00", null, 13);
        Run r = run("pci", "list");
        assertEquals(0, r.rc(), r.err());
        assertEquals("0000:00:03.0 Ethernet controller [0200]: 15b3:1017 driver=mlx5_core iommu_group=12 numa=0\n"
                + "0000:00:04.0 Unclassified device [00ff]: 1234:11e8 driver=none iommu_group=13 numa=0\n", r.out());
        assertEquals("0000:00:04.0 Unclassified device [00ff]: 1234:11e8 driver=none iommu_group=13 numa=0\n",
                run("pci", "list", "-d", "1234:11e8").out());
        assertEquals("", run("pci", "list", "-d", "15b3:ffff").out());
    }

    @Test
    void listOnAnEmptyTreePrintsNothing() {
        Run r = run("pci", "list");
        assertEquals(0, r.rc());
        assertEquals("", r.out());
    }

    @Test
    void bindThenUnbindSayWhatTheyDid() throws IOException {
        function("0000:00:03.0", "15b3", "1017", "020000", "mlx5_core", 12);
        Files.createDirectories(sys("bus/pci/drivers/vfio-pci"));
        Run bind = run("pci", "bind", "0000:00:03.0", "vfio-pci");
        assertEquals(0, bind.rc(), bind.err());
        assertEquals("0000:00:03.0: unbound from mlx5_core, bound to vfio-pci (iommu group 12, "
                + root.resolve("dev/vfio/12") + ")\n", bind.out());
        assertTrue(run("pci", "list").out().contains("driver=vfio-pci"));
        Run unbind = run("pci", "unbind", "00:03.0");
        assertEquals(0, unbind.rc(), unbind.err());
        assertEquals("0000:00:03.0: unbound from vfio-pci\n", unbind.out());
    }

    @Test
    void refusalsExitOneWithTheReasonAndTheFix() throws IOException {
        function("0000:00:03.0", "15b3", "1017", "020000", "mlx5_core", 12);
        function("0000:00:03.1", "15b3", "1017", "020000", "mlx5_core", 12);
        function("0000:00:05.0", "1af4", "1041", "020000", "virtio-pci", -1);

        Run notLoaded = run("pci", "bind", "0000:00:03.0", "vfio-pci");
        assertEquals(1, notLoaded.rc());
        assertEquals("hwlab pci bind: driver vfio-pci is not loaded (no " + sys("bus/pci/drivers/vfio-pci")
                + "): modprobe vfio-pci\n", notLoaded.err());

        Files.createDirectories(sys("bus/pci/drivers/vfio-pci"));
        Run notViable = run("pci", "bind", "0000:00:03.0", "vfio-pci");
        assertEquals(1, notViable.rc());
        assertTrue(notViable.err().startsWith("hwlab pci bind: IOMMU group 12 would not be viable: 0000:00:03.1 (driver"
                + " mlx5_core)"), notViable.err());

        Run noIommu = run("pci", "bind", "0000:00:05.0", "vfio-pci");
        assertEquals(1, noIommu.rc());
        assertTrue(noIommu.err().startsWith("hwlab pci bind: 0000:00:05.0: no IOMMU: "), noIommu.err());
        assertTrue(noIommu.err().contains("intel_iommu=on"), noIommu.err());

        Path net = sys("devices/pci0000:00/0000:00:03.0/net/ens3");
        Files.createDirectories(net);
        Files.writeString(net.resolve("operstate"), "up\n");
        Run inUse = run("pci", "bind", "0000:00:03.0", "0000:00:03.1", "vfio-pci");
        assertEquals(1, inUse.rc());
        assertEquals("hwlab pci bind: 0000:00:03.0: in use: its network interface ens3 is up; take it down first"
                + " (ip link set ens3 down)\n", inUse.err());

        Run bad = run("pci", "bind", "0000:00:33.0", "vfio-pci");
        assertEquals(1, bad.rc());
        assertTrue(bad.err().contains("not a PCI address"), bad.err());
        assertTrue(run("pci", "list").out().contains("0000:00:03.0 Ethernet controller [0200]: 15b3:1017 driver=mlx5_core"),
                "refusals changed nothing");
    }

    @Test
    void infoRefusesAFunctionNotOnVfioAndReportsWhyVfioCannotOpen() throws IOException {
        function("0000:00:03.0", "15b3", "1017", "020000", "mlx5_core", 12);
        function("0000:00:04.0", "1234", "11e8", "00ff00", "vfio-pci", 13);
        Run notVfio = run("pci", "info", "0000:00:03.0");
        assertEquals(1, notVfio.rc());
        assertEquals("hwlab pci info: 0000:00:03.0: bound to mlx5_core, not vfio-pci: hwlab pci bind 0000:00:03.0"
                + " vfio-pci first\n", notVfio.err());
        Run noContainer = run("pci", "info", "0000:00:04.0");
        assertEquals(1, noContainer.rc());
        assertEquals("hwlab pci info: container: open " + root.resolve("dev/vfio/vfio") + " failed: ENOENT (No such file"
                + " or directory): the vfio module is not loaded (modprobe vfio-pci)\n", noContainer.err());
        assertTrue(noContainer.out().startsWith("0000:00:04.0 Unclassified device [00ff]: 1234:11e8 driver=vfio-pci"),
                noContainer.out());
    }

    @Test
    void missingArgumentsAreUsageErrors() {
        assertEquals(HwLab.EXIT_USAGE, run("pci", "bind", "vfio-pci").rc());
        assertEquals(HwLab.EXIT_USAGE, run("pci", "unbind").rc());
        assertEquals(HwLab.EXIT_USAGE, run("pci").rc());
        assertEquals(HwLab.EXIT_USAGE, run("pci", "info").rc());
    }

    @Test
    void theSystemPropertyPointsTheCommandsAtAFixtureToo() throws IOException {
        function("0000:00:03.0", "15b3", "1017", "020000", "mlx5_core", 12);
        System.setProperty(PciSysfs.SYSFS_ROOT_PROPERTY, root.toString());
        try {
            StringWriter o = new StringWriter();
            int rc = HwLab.execute(new String[] {"pci", "list"}, new PrintWriter(o), new PrintWriter(new StringWriter()));
            assertEquals(0, rc);
            assertTrue(o.toString().startsWith("0000:00:03.0 Ethernet controller"), o.toString());
        } finally {
            System.clearProperty(PciSysfs.SYSFS_ROOT_PROPERTY);
        }
    }
}
