package io.jhca.pci;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * PCI functions as the kernel publishes them in sysfs (Documentation/ABI/testing/sysfs-bus-pci): one directory
 * per function under {@code bus/pci/devices}, with {@code vendor}, {@code device}, {@code class} and
 * {@code numa_node} files and {@code driver} and {@code iommu_group} links. The roots are injectable so tests
 * run on fixture trees; {@link #system()} reads the real /sys, /dev and /proc.
 */
public final class PciSysfs {

    /** System property that replaces /sys (for tests and for looking at a copied tree). */
    public static final String SYSFS_ROOT_PROPERTY = "jhca.pci.sysfsRoot";

    private final Path sys;
    private final Path dev;
    private final Path proc;

    public PciSysfs(final Path sysRoot, final Path devRoot, final Path procRoot) {
        this.sys = sysRoot;
        this.dev = devRoot;
        this.proc = procRoot;
    }

    /** /sys, /dev and /proc (or the roots under the {@link #SYSFS_ROOT_PROPERTY} directory: sys, dev, proc). */
    public static PciSysfs system() {
        final String root = System.getProperty(SYSFS_ROOT_PROPERTY);
        if (root != null && !root.isEmpty()) {
            return underRoot(Path.of(root));
        }
        return new PciSysfs(Path.of("/sys"), Path.of("/dev"), Path.of("/proc"));
    }

    /** A fixture tree: {@code root/sys}, {@code root/dev}, {@code root/proc}. */
    public static PciSysfs underRoot(final Path root) {
        return new PciSysfs(root.resolve("sys"), root.resolve("dev"), root.resolve("proc"));
    }

    public Path sysRoot() {
        return sys;
    }

    public Path devRoot() {
        return dev;
    }

    public Path procRoot() {
        return proc;
    }

    Path devices() {
        return sys.resolve("bus/pci/devices");
    }

    Path functionDir(final PciAddress a) {
        return devices().resolve(a.toString());
    }

    /** Every PCI function, by address; empty when the machine (or container) shows none. */
    public List<PciFunction> list() {
        final Path dir = devices();
        final List<PciFunction> out = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return out;
        }
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (final Path p : ds) {
                final PciAddress a;
                try {
                    a = PciAddress.parse(p.getFileName().toString());
                } catch (final IllegalArgumentException notAFunction) {
                    continue;
                }
                out.add(read(a));
            }
        } catch (final IOException e) {
            throw new PciException("cannot list " + dir + ": " + e.getMessage(), e);
        }
        Collections.sort(out, (x, y) -> x.address().compareTo(y.address()));
        return out;
    }

    /** The function at {@code address}. */
    public PciFunction function(final PciAddress address) {
        if (!Files.isDirectory(functionDir(address))) {
            throw new PciException("no PCI function " + address + " (not in " + devices() + "); hwlab pci list shows them all");
        }
        return read(address);
    }

    /** Every function with this vendor:device id. */
    public List<PciFunction> find(final int vendor, final int device) {
        final List<PciFunction> out = new ArrayList<>();
        for (final PciFunction f : list()) {
            if (f.vendor() == vendor && f.device() == device) {
                out.add(f);
            }
        }
        return out;
    }

    /** The functions in IOMMU group {@code group}, by address. */
    public List<PciAddress> groupMembers(final int group) {
        final Path dir = sys.resolve("kernel/iommu_groups").resolve(Integer.toString(group)).resolve("devices");
        final List<PciAddress> out = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return out;
        }
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (final Path p : ds) {
                try {
                    out.add(PciAddress.parse(p.getFileName().toString()));
                } catch (final IllegalArgumentException notPci) {
                    // groups can hold non-PCI devices too; they do not decide PCI viability here
                }
            }
        } catch (final IOException e) {
            throw new PciException("cannot list " + dir + ": " + e.getMessage(), e);
        }
        Collections.sort(out);
        return out;
    }

    /** Whether the kernel runs an IOMMU: it then creates {@code /sys/kernel/iommu_groups/<N>} entries. */
    public boolean iommuEnabled() {
        final Path dir = sys.resolve("kernel/iommu_groups");
        if (!Files.isDirectory(dir)) {
            return false;
        }
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            return ds.iterator().hasNext();
        } catch (final IOException e) {
            return false;
        }
    }

    /** Whether vfio offers its unsafe no-IOMMU mode ({@code /sys/module/vfio/parameters/enable_unsafe_noiommu_mode}). */
    public boolean noIommuMode() {
        return readText(sys.resolve("module/vfio/parameters/enable_unsafe_noiommu_mode")).map(s -> s.startsWith("Y"))
            .orElse(false);
    }

    /** Whether a PCI driver of this name is registered ({@code /sys/bus/pci/drivers/<name>}). */
    public boolean driverLoaded(final String driver) {
        return Files.isDirectory(sys.resolve("bus/pci/drivers").resolve(driver));
    }

    /** The network interfaces of a function ({@code net/<ifname>}) with their operstate. */
    public List<String[]> netInterfaces(final PciAddress address) {
        final Path dir = functionDir(address).resolve("net");
        final List<String[]> out = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return out;
        }
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir)) {
            for (final Path p : ds) {
                out.add(new String[] {p.getFileName().toString(), readText(p.resolve("operstate")).orElse("unknown")});
            }
        } catch (final IOException e) {
            throw new PciException("cannot list " + dir + ": " + e.getMessage(), e);
        }
        out.sort((x, y) -> x[0].compareTo(y[0]));
        return out;
    }

    /**
     * The block devices of a function (entries of {@code /sys/class/block} whose device path runs through the
     * function, e.g. nvme0n1 and its partitions) that appear in {@code /proc/mounts}, as "nvme0n1p1 on /boot".
     */
    public List<String> mountedBlockDevices(final PciAddress address) {
        final List<String> out = new ArrayList<>();
        final Path classBlock = sys.resolve("class/block");
        final List<String> mounts = readText(proc.resolve("mounts")).map(t -> List.of(t.split("\n"))).orElse(List.of());
        if (!Files.isDirectory(classBlock) || mounts.isEmpty()) {
            return out;
        }
        final String through = "/" + address + "/";
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(classBlock)) {
            for (final Path p : ds) {
                final String target;
                try {
                    target = Files.readSymbolicLink(p).toString();
                } catch (final IOException | UnsupportedOperationException notALink) {
                    continue;
                }
                if (!target.contains(through)) {
                    continue;
                }
                final String dev = "/dev/" + p.getFileName();
                for (final String m : mounts) {
                    final String[] f = m.split(" ");
                    if (f.length > 1 && f[0].equals(dev)) {
                        out.add(p.getFileName() + " on " + f[1]);
                    }
                }
            }
        } catch (final IOException e) {
            throw new PciException("cannot list " + classBlock + ": " + e.getMessage(), e);
        }
        out.sort(String::compareTo);
        return out;
    }

    /** Process ids (from /proc/PID/fd) holding {@code path} open; empty when /proc cannot be read. */
    public List<Integer> processesHolding(final Path path) {
        final List<Integer> out = new ArrayList<>();
        if (!Files.isDirectory(proc)) {
            return out;
        }
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(proc)) {
            for (final Path p : ds) {
                final String name = p.getFileName().toString();
                if (!name.chars().allMatch(Character::isDigit)) {
                    continue;
                }
                if (holds(p.resolve("fd"), path)) {
                    out.add(Integer.parseInt(name));
                }
            }
        } catch (final IOException | RuntimeException e) {
            return out; // processes come and go; what could be read is the answer
        }
        Collections.sort(out);
        return out;
    }

    private static boolean holds(final Path fdDir, final Path target) {
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(fdDir)) {
            for (final Path fd : fds) {
                try {
                    if (Files.readSymbolicLink(fd).toString().equals(target.toString())) {
                        return true;
                    }
                } catch (final IOException | UnsupportedOperationException ignored) {
                    // not a link, or gone
                }
            }
        } catch (final IOException ignored) {
            // no permission, or the process exited
        }
        return false;
    }

    private PciFunction read(final PciAddress a) {
        final Path d = functionDir(a);
        return new PciFunction(a, hex(d.resolve("vendor")), hex(d.resolve("device")), hex(d.resolve("class")),
            linkName(d.resolve("driver")), linkNumber(d.resolve("iommu_group")),
            readText(d.resolve("numa_node")).map(PciSysfs::parseIntOrMinusOne).orElse(-1));
    }

    private static int hex(final Path file) {
        final String s = readText(file).orElseThrow(() -> new PciException("cannot read " + file));
        try {
            return Integer.parseUnsignedInt(s.startsWith("0x") ? s.substring(2) : s, 16);
        } catch (final NumberFormatException e) {
            throw new PciException(file + " holds '" + s + "', not a hex number", e);
        }
    }

    private static int parseIntOrMinusOne(final String s) {
        try {
            return Integer.parseInt(s);
        } catch (final NumberFormatException e) {
            return -1;
        }
    }

    static String linkName(final Path link) {
        if (!Files.isSymbolicLink(link) && !Files.exists(link, LinkOption.NOFOLLOW_LINKS)) {
            return null;
        }
        try {
            final Path target = Files.isSymbolicLink(link) ? Files.readSymbolicLink(link) : link.toRealPath();
            return target.getFileName().toString();
        } catch (final IOException e) {
            return null;
        }
    }

    private static int linkNumber(final Path link) {
        final String name = linkName(link);
        if (name == null) {
            return -1;
        }
        return parseIntOrMinusOne(name);
    }

    static Optional<String> readText(final Path file) {
        try {
            return Optional.of(new String(Files.readAllBytes(file), StandardCharsets.US_ASCII).trim());
        } catch (final IOException e) {
            return Optional.empty();
        }
    }
}
