package io.jhca.pci;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Binds and unbinds PCI functions the way dpdk-devbind and SPDK's setup.sh do: write the driver's name to the
 * function's {@code driver_override}, unbind it from its current driver, and ask the bus to probe it again
 * ({@code /sys/bus/pci/drivers_probe}). Before anything is written it refuses, saying what is wrong and what to do,
 * when the driver is not loaded, the kernel has no IOMMU, the IOMMU group would not be viable, or the function is
 * in use (an interface up, a disk of it mounted, its VFIO group open).
 */
public final class PciBinder {

    /** The driver VFIO needs. */
    public static final String VFIO_PCI = "vfio-pci";

    /** Writes one sysfs attribute; replaced in tests by a fake kernel that also moves the links. */
    @FunctionalInterface
    public interface SysfsWriter {
        void write(Path attribute, String value) throws IOException;
    }

    /** Drivers a function may have without spoiling its group's viability for vfio (kernel vfio's allow list). */
    private static final Set<String> VIABLE_DRIVERS = Set.of(VFIO_PCI, "pci-stub", "pcieport");

    private final PciSysfs sysfs;
    private final SysfsWriter writer;
    private final java.util.function.Predicate<Path> accessible;
    private final long nodeWaitMillis;

    public PciBinder(final PciSysfs sysfs) {
        this(sysfs, (attribute, value) -> Files.write(attribute, value.getBytes(StandardCharsets.US_ASCII)));
    }

    public PciBinder(final PciSysfs sysfs, final SysfsWriter writer) {
        this(sysfs, writer, p -> Files.isReadable(p) && Files.isWritable(p), 3000);
    }

    /** With {@code accessible} deciding whether this user may open a group node (tests; root passes every mode check). */
    PciBinder(final PciSysfs sysfs, final SysfsWriter writer, final java.util.function.Predicate<Path> accessible,
              final long nodeWaitMillis) {
        this.sysfs = sysfs;
        this.writer = writer;
        this.accessible = accessible;
        this.nodeWaitMillis = nodeWaitMillis;
    }

    /** Binds one function; see {@link #bind(List, String)}. */
    public List<String> bind(final PciAddress address, final String driver) {
        return bind(List.of(address), driver);
    }

    /**
     * Binds every function of {@code addresses} to {@code driver} (all the functions of a group together, when
     * binding to vfio-pci needs them all). Checks everything first, then binds.
     *
     * @return one line per function saying what was done
     * @throws PciException with what is wrong and what to do
     */
    public List<String> bind(final List<PciAddress> addresses, final String driver) {
        if (driver == null || driver.isEmpty() || driver.contains("/")) {
            throw new PciException("not a driver name: '" + driver + "'");
        }
        final List<PciFunction> functions = new ArrayList<>();
        for (final PciAddress a : new LinkedHashSet<>(addresses)) {
            functions.add(sysfs.function(a));
        }
        if (!sysfs.driverLoaded(driver)) {
            throw new PciException("driver " + driver + " is not loaded (no " + sysfs.sysRoot().resolve("bus/pci/drivers")
                .resolve(driver) + "): modprobe " + driver);
        }
        final boolean vfio = VFIO_PCI.equals(driver);
        for (final PciFunction f : functions) {
            if (f.boundTo(driver)) {
                continue;
            }
            if (vfio) {
                checkIommu(f);
            }
            checkNotInUse(f);
        }
        if (vfio) {
            checkViable(functions);
        }
        final List<String> done = new ArrayList<>();
        for (final PciFunction f : functions) {
            done.add(bindOne(f, driver));
        }
        return done;
    }

    private void checkIommu(final PciFunction f) {
        if (f.iommuGroup() >= 0) {
            return;
        }
        if (sysfs.noIommuMode()) {
            return; // vfio-pci creates a no-IOMMU group for it at bind time
        }
        throw new PciException(f.address() + ": no IOMMU: the function has no iommu_group and "
            + sysfs.sysRoot().resolve("kernel/iommu_groups") + (sysfs.iommuEnabled() ? " does not list it" : " is empty")
            + "; enable VT-d (Intel) or AMD-Vi in the firmware and boot Linux with intel_iommu=on iommu=pt (or"
            + " amd_iommu=on iommu=pt); in a QEMU guest add -device intel-iommu to a q35 machine");
    }

    private void checkNotInUse(final PciFunction f) {
        for (final String[] net : sysfs.netInterfaces(f.address())) {
            if ("up".equals(net[1])) {
                throw new PciException(f.address() + ": in use: its network interface " + net[0] + " is up; take it down"
                    + " first (ip link set " + net[0] + " down)");
            }
        }
        final List<String> mounted = sysfs.mountedBlockDevices(f.address());
        if (!mounted.isEmpty()) {
            throw new PciException(f.address() + ": in use: " + String.join(", ", mounted) + " (mounted); unmount first");
        }
        if (f.boundTo(VFIO_PCI)) {
            checkGroupNotOpen(f);
        }
    }

    private void checkGroupNotOpen(final PciFunction f) {
        if (f.iommuGroup() < 0) {
            return;
        }
        for (final Path node : List.of(vfioNode(f.iommuGroup()), sysfs.devRoot().resolve("vfio/noiommu-" + f.iommuGroup()))) {
            final List<Integer> pids = sysfs.processesHolding(node);
            if (!pids.isEmpty()) {
                throw new PciException(f.address() + ": in use: " + node + " is open in process(es) " + pids
                    + "; stop them first (the kernel would block the unbind until they close it)");
            }
        }
    }

    private void checkViable(final List<PciFunction> binding) {
        final Set<PciAddress> bindingNow = new LinkedHashSet<>();
        binding.forEach(f -> bindingNow.add(f.address()));
        final Set<Integer> groups = new LinkedHashSet<>();
        binding.forEach(f -> {
            if (f.iommuGroup() >= 0) {
                groups.add(f.iommuGroup());
            }
        });
        for (final int g : groups) {
            final List<String> blockers = new ArrayList<>();
            final List<String> toBind = new ArrayList<>();
            for (final PciAddress member : sysfs.groupMembers(g)) {
                if (bindingNow.contains(member)) {
                    continue;
                }
                final PciFunction m = sysfs.function(member);
                if (m.driver() == null || VIABLE_DRIVERS.contains(m.driver()) || m.bridge()) {
                    continue;
                }
                blockers.add(member + " (driver " + m.driver() + ")");
                toBind.add(member.toString());
            }
            if (!blockers.isEmpty()) {
                final List<String> all = new ArrayList<>();
                bindingNow.forEach(a -> all.add(a.toString()));
                all.addAll(toBind);
                throw new PciException("IOMMU group " + g + " would not be viable: " + String.join(", ", blockers)
                    + " share(s) it; every function of a group must be bound to vfio-pci or to no driver: bind them"
                    + " together (hwlab pci bind " + String.join(" ", all) + " vfio-pci) or unbind them first");
            }
        }
    }

    private String bindOne(final PciFunction f, final String driver) {
        final PciAddress a = f.address();
        if (f.boundTo(driver)) {
            return a + ": already bound to " + driver + vfioSuffix(a, driver);
        }
        final Path dir = sysfs.functionDir(a);
        write(dir.resolve("driver_override"), driver);
        if (f.driver() != null) {
            write(dir.resolve("driver/unbind"), a.toString());
        }
        write(sysfs.sysRoot().resolve("bus/pci/drivers_probe"), a.toString());
        final PciFunction now = sysfs.function(a);
        if (!now.boundTo(driver)) {
            throw new PciException(a + ": the kernel did not bind it to " + driver + " (now: "
                + (now.driver() == null ? "no driver" : now.driver()) + "); see dmesg for the driver's reason");
        }
        return a + ": " + (f.driver() == null ? "" : "unbound from " + f.driver() + ", ") + "bound to " + driver
            + vfioSuffix(a, driver);
    }

    /** For vfio-pci: the group and its device node, which must exist and be accessible. */
    private String vfioSuffix(final PciAddress a, final String driver) {
        if (!VFIO_PCI.equals(driver)) {
            return "";
        }
        final PciFunction f = sysfs.function(a);
        if (f.iommuGroup() < 0) {
            return " (no IOMMU group)";
        }
        final Path node = vfioNode(f.iommuGroup());
        final Path noiommu = sysfs.devRoot().resolve("vfio/noiommu-" + f.iommuGroup());
        awaitNode(node, noiommu);
        if (!Files.exists(node)) {
            if (Files.exists(noiommu)) {
                return " (iommu group " + f.iommuGroup() + ", " + noiommu + ", no-IOMMU mode: unsafe)";
            }
            throw new PciException(a + ": bound to vfio-pci but " + node + " does not exist: the group's device node was"
                + " not created (is devtmpfs mounted on /dev? ls -l " + node.getParent() + ")");
        }
        if (!accessible.test(node)) {
            throw new PciException(a + ": bound to vfio-pci but " + node + " is not accessible to this user: run as root"
                + " or give the user access (chown or a udev rule for " + node + ")");
        }
        return " (iommu group " + f.iommuGroup() + ", " + node + ")";
    }

    /** The group's node is made by devtmpfs (and given its owner by udev) just after the bind: wait a little for it. */
    private void awaitNode(final Path node, final Path noiommu) {
        final long deadline = System.nanoTime() + nodeWaitMillis * 1_000_000L;
        while (!Files.exists(node) && !Files.exists(noiommu) && System.nanoTime() - deadline < 0) {
            try {
                Thread.sleep(20);
            } catch (final InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private Path vfioNode(final int group) {
        return sysfs.devRoot().resolve("vfio").resolve(Integer.toString(group));
    }

    /**
     * Unbinds a function from its driver and clears its driver_override (so the next probe picks the
     * default driver again).
     *
     * @return what was done
     */
    public String unbind(final PciAddress address) {
        final PciFunction f = sysfs.function(address);
        if (f.driver() == null) {
            return address + ": not bound to any driver; nothing to do";
        }
        checkNotInUse(f);
        final Path dir = sysfs.functionDir(address);
        write(dir.resolve("driver/unbind"), address.toString());
        if (Files.exists(dir.resolve("driver_override"))) {
            write(dir.resolve("driver_override"), "\n");
        }
        final PciFunction now = sysfs.function(address);
        if (now.driver() != null) {
            throw new PciException(address + ": still bound to " + now.driver() + " after unbind; see dmesg");
        }
        return address + ": unbound from " + f.driver();
    }

    private void write(final Path attribute, final String value) {
        try {
            writer.write(attribute, value);
        } catch (final IOException e) {
            throw new PciException("cannot write '" + value.trim() + "' to " + attribute + ": " + e.getMessage()
                + (e instanceof java.nio.file.AccessDeniedException ? " (run as root)" : ""), e);
        }
    }
}
