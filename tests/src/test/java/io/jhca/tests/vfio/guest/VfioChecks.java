package io.jhca.tests.vfio.guest;

import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import io.jhca.pci.PciSysfs;
import io.jhca.vfio.VfioContainer;

/**
 * Runs in the vfio guest (scripts/vfio-vm run-java --bind 1234:11e8 --bind 1b36:0010 [--bind 1af4:1110]): the
 * checks of jhca's vfio layer against QEMU's edu, nvme and ivshmem under the emulated Intel IOMMU, one container
 * per device. Prints a
 * {@code check NAME ok|FAIL ...} line per check and exits 1 if any failed.
 *
 * <p>Arguments: {@code pci} (first ListPci's listing), {@code edu}, {@code nvme}, {@code ivshmem} (default edu and nvme; ivshmem needs the host side,
 * HostBarServer, and {@code --host-word=HEX}, the word it wrote at BAR2 0); {@code --seed=N} for the DMA
 * patterns (printed when random); {@code --wrong=NAME,...} sabotages the named checks' expectations to show that
 * they can fail.
 */
public final class VfioChecks {

    private VfioChecks() {
    }

    /** Every check's name, in the order they run. */
    public static List<String> names() {
        return java.util.stream.Stream.of(EduChecks.names(), NvmeChecks.names(), IvshmemChecks.names())
                .flatMap(List::stream).toList();
    }

    public static void main(final String[] args) throws Exception {
        long seed = System.nanoTime();
        Set<String> wrong = new HashSet<>();
        Set<String> sections = new HashSet<>();
        long hostWord = 0;
        for (String a : args) {
            if (a.startsWith("--seed=")) {
                seed = Long.parseLong(a.substring("--seed=".length()));
            } else if (a.startsWith("--wrong=")) {
                wrong.addAll(Arrays.asList(a.substring("--wrong=".length()).split(",")));
            } else if (a.startsWith("--host-word=")) {
                hostWord = Long.parseUnsignedLong(a.substring("--host-word=".length()), 16);
            } else if (a.equals("pci") || a.equals("edu") || a.equals("nvme") || a.equals("ivshmem")) {
                sections.add(a);
            } else {
                throw new IllegalArgumentException("unknown argument '" + a + "' (pci, edu, nvme, ivshmem, --seed=N, --host-word=HEX,"
                        + " --wrong=NAME,...)");
            }
        }
        if (sections.isEmpty()) {
            sections.addAll(List.of("edu", "nvme"));
        }
        System.out.println("seed " + seed + " (replay with --seed=" + seed + ")");
        Checks checks = new Checks(wrong);
        if (sections.contains("pci") && !ListPci.print()) {
            checks.skipped("pci", "/dev/vfio/vfio did not open");
        }
        PciSysfs sysfs = PciSysfs.system();
        if (sections.contains("edu")) {
            try (VfioContainer c = VfioContainer.open()) {
                new EduChecks(checks, c, seed).run(sysfs);
            } catch (Exception | AssertionError e) {
                checks.skipped("edu", e.toString());
            }
        }
        if (sections.contains("nvme")) {
            try (VfioContainer c = VfioContainer.open()) {
                new NvmeChecks(checks, c).run(sysfs);
            } catch (Exception | AssertionError e) {
                checks.skipped("nvme", e.toString());
            }
        }
        if (sections.contains("ivshmem")) {
            try (VfioContainer c = VfioContainer.open()) {
                new IvshmemChecks(checks, c, seed, hostWord).run(sysfs);
            } catch (Exception | AssertionError e) {
                checks.skipped("ivshmem", e.toString());
            }
        }
        System.out.println("checks done, " + checks.failures() + " failed");
        System.exit(checks.failures() == 0 ? 0 : 1);
    }
}
