package io.jhca.pci;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A sysfs/dev/proc tree in a temporary directory, laid out as the kernel lays out /sys (functions under
 * devices/, links from bus/pci/devices, driver and iommu_group links, kernel/iommu_groups), plus a fake kernel
 * for the binder's writes: driver_override is stored, driver/unbind removes the driver link, drivers_probe
 * binds the overriding driver if it is loaded (and creates /dev/vfio/N for vfio-pci).
 */
final class SysfsFixture {

    final Path root;
    final Path sys;
    final Path dev;
    final Path proc;
    /** When false, drivers_probe binds nothing (a driver that refuses the device). */
    boolean probeBinds = true;
    /** When false, binding to vfio-pci creates no /dev/vfio/N. */
    boolean createsVfioNode = true;

    SysfsFixture(final Path root) {
        this.root = root;
        this.sys = root.resolve("sys");
        this.dev = root.resolve("dev");
        this.proc = root.resolve("proc");
        mkdirs(sys.resolve("bus/pci/devices"));
        mkdirs(sys.resolve("bus/pci/drivers"));
        mkdirs(sys.resolve("kernel/iommu_groups"));
        mkdirs(dev);
        mkdirs(proc);
        write(sys.resolve("bus/pci/drivers_probe"), "");
    }

    PciSysfs sysfs() {
        return PciSysfs.underRoot(root);
    }

    /** Group nodes this user may not open. */
    final java.util.Set<Path> inaccessible = new java.util.HashSet<>();

    PciBinder binder() {
        return new PciBinder(sysfs(), this::kernelWrite, p -> Files.exists(p) && !inaccessible.contains(p), 0);
    }

    SysfsFixture driver(final String name) {
        mkdirs(sys.resolve("bus/pci/drivers").resolve(name));
        return this;
    }

    /** Adds a function; {@code driver} may be null, {@code group} -1 for none. */
    SysfsFixture function(final String bdf, final int vendor, final int device, final int classCode, final String driver,
                          final int group, final int numa) {
        final Path dir = sys.resolve("devices/pci0000:00").resolve(bdf);
        mkdirs(dir);
        write(dir.resolve("vendor"), String.format("0x%04x%n", vendor));
        write(dir.resolve("device"), String.format("0x%04x%n", device));
        write(dir.resolve("class"), String.format("0x%06x%n", classCode));
        write(dir.resolve("numa_node"), numa + "\n");
        write(dir.resolve("driver_override"), "(null)\n");
        link(sys.resolve("bus/pci/devices").resolve(bdf), Path.of("../../../devices/pci0000:00").resolve(bdf));
        if (driver != null) {
            driver(driver);
            link(dir.resolve("driver"), Path.of("../../../bus/pci/drivers").resolve(driver));
        }
        if (group >= 0) {
            final Path g = sys.resolve("kernel/iommu_groups").resolve(Integer.toString(group));
            mkdirs(g.resolve("devices"));
            link(dir.resolve("iommu_group"), Path.of("../../../kernel/iommu_groups").resolve(Integer.toString(group)));
            link(g.resolve("devices").resolve(bdf), Path.of("../../../../devices/pci0000:00").resolve(bdf));
            if ("vfio-pci".equals(driver)) {
                vfioNode(group);
            }
        }
        return this;
    }

    SysfsFixture netInterface(final String bdf, final String ifname, final String operstate) {
        final Path n = sys.resolve("devices/pci0000:00").resolve(bdf).resolve("net").resolve(ifname);
        mkdirs(n);
        write(n.resolve("operstate"), operstate + "\n");
        return this;
    }

    /** A block device of function {@code bdf} (as nvme0n1 under nvme/nvme0), mounted on {@code mountPoint} if not null. */
    SysfsFixture blockDevice(final String bdf, final String name, final String mountPoint) {
        final Path dir = functionDir(bdf).resolve("nvme/nvme0").resolve(name);
        mkdirs(dir);
        mkdirs(sys.resolve("class/block"));
        link(sys.resolve("class/block").resolve(name), Path.of("../../devices/pci0000:00").resolve(bdf).resolve("nvme/nvme0")
            .resolve(name));
        if (mountPoint != null) {
            final Path mounts = proc.resolve("mounts");
            final String old = Files.exists(mounts) ? read(mounts) : "proc /proc proc rw 0 0\n";
            write(mounts, old + "/dev/" + name + " " + mountPoint + " ext4 rw,relatime 0 0\n");
        }
        return this;
    }

    SysfsFixture vfioNode(final int group) {
        mkdirs(dev.resolve("vfio"));
        write(dev.resolve("vfio").resolve(Integer.toString(group)), "");
        return this;
    }

    /** Process {@code pid} holds {@code target} open as fd 3. */
    SysfsFixture openFile(final int pid, final Path target) {
        final Path fd = proc.resolve(Integer.toString(pid)).resolve("fd");
        mkdirs(fd);
        link(fd.resolve("3"), target);
        return this;
    }

    Path functionDir(final String bdf) {
        return sys.resolve("devices/pci0000:00").resolve(bdf);
    }

    String read(final Path p) {
        try {
            return new String(Files.readAllBytes(p), StandardCharsets.US_ASCII);
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** What the kernel does on each sysfs write the binder makes. */
    void kernelWrite(final Path attribute, final String value) throws IOException {
        final String name = attribute.getFileName().toString();
        if (name.equals("driver_override")) {
            Files.writeString(attribute, value.isBlank() ? "(null)\n" : value + "\n");
        } else if (name.equals("unbind") && attribute.getParent().getFileName().toString().equals("driver")) {
            Files.delete(attribute.getParent()); // the function's driver link
        } else if (name.equals("drivers_probe")) {
            final Path dir = sys.resolve("bus/pci/devices").resolve(value.trim());
            final String override = Files.readString(dir.resolve("driver_override")).trim();
            if (probeBinds && !override.equals("(null)") && Files.isDirectory(sys.resolve("bus/pci/drivers").resolve(override))
                && !Files.isSymbolicLink(dir.resolve("driver"))) {
                Files.createSymbolicLink(dir.resolve("driver"), Path.of("../../../bus/pci/drivers").resolve(override));
                final String group = PciSysfs.linkName(dir.resolve("iommu_group"));
                if (override.equals("vfio-pci") && group != null && createsVfioNode) {
                    vfioNode(Integer.parseInt(group));
                }
            }
        } else {
            throw new IOException("unexpected sysfs write to " + attribute);
        }
    }

    private static void mkdirs(final Path p) {
        try {
            Files.createDirectories(p);
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void write(final Path p, final String s) {
        try {
            Files.writeString(p, s);
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void link(final Path link, final Path target) {
        try {
            Files.createSymbolicLink(link, target);
        } catch (final IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
