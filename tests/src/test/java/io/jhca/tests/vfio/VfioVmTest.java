package io.jhca.tests.vfio;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import io.jhca.tests.vfio.guest.ListPci;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The vfio lab's harness: {@code scripts/vfio-vm run-java --bind 1234:11e8} boots the Debian guest (QEMU TCG,
 * emulated Intel IOMMU) and runs {@link ListPci} there with this module's class path; the guest must have seen
 * QEMU's edu bound to vfio-pci, alone in its IOMMU group, and a VFIO container offering Type1v2.
 *
 * <p>In the default suite: one run took 21 s under TCG on 2 cores (boot 5-8 s, the JVM 15 s), well under the
 * 3 minutes allowed. Skipped, with the reason printed, when not root or without qemu-system-x86_64 (scripts/test
 * installs it); {@code -Djhca.vfio.vm=false} switches it off.
 */
class VfioVmTest {

    private static final String EDU = "1234:11e8";

    @TempDir
    static Path out;

    private static String skip;
    private static VfioVm.Run run;

    @BeforeAll
    @Timeout(value = 900, unit = TimeUnit.SECONDS)
    static void boot() throws Exception {
        skip = VfioVm.skipReason();
        if (skip == null) {
            VfioVm.Run prepared = VfioVm.prepare(out.resolve("prepare"));
            if (prepared.exitStatus() != 0) {
                skip = "vfio guest tests: scripts/vfio-vm prepare failed (exit " + prepared.exitStatus()
                        + "; it needs the Debian archive once):\n" + prepared.tail();
            }
        }
        if (skip != null) {
            System.out.println("VfioVmTest skipped: " + skip);
            return;
        }
        run = VfioVm.runJava(out, List.of(EDU), ListPci.class.getName());
    }

    @BeforeEach
    void prerequisites() {
        assumeTrue(skip == null, skip);
    }

    @Test
    void guestJavaRanAndExitedZero() {
        assertEquals(0, run.exitStatus(), "guest run failed:\n" + run.tail());
    }

    @Test
    void eduIsBoundToVfioPciAloneInItsIommuGroup() {
        String edu = function(EDU).orElseGet(() -> fail("the guest saw no " + EDU + ":\n" + run.tail()));
        assertTrue(edu.contains(" driver=vfio-pci "), "edu not bound to vfio-pci: " + edu);
        String group = field(edu, "group");
        assertFalse(group.equals("-"), "edu has no IOMMU group: " + edu);
        assertEquals("1", field(edu, "group-members"), "edu shares its IOMMU group: " + edu);
        assertEquals("/dev/vfio/" + group, field(edu, "group-dev"), "no VFIO group device for edu: " + edu);
    }

    @Test
    void vfioContainerOffersType1v2() {
        // linux/vfio.h: VFIO_API_VERSION 0; VFIO_CHECK_EXTENSION answers 1 for a supported IOMMU type
        assertEquals(List.of("api=0 type1v2=1"), run.lines("vfio"), run.tail());
    }

    @Test
    void nvmeAndIvshmemAreThereWithoutDriverAndTheGuestHasNoNetworkDevice() {
        for (String id : List.of("1b36:0010", "1af4:1110")) {
            String f = function(id).orElseGet(() -> fail("the guest saw no " + id + ":\n" + run.tail()));
            assertEquals("-", field(f, "driver"), "a guest driver took " + id + ": " + f);
            assertEquals("1", field(f, "group-members"), id + " shares its IOMMU group: " + f);
        }
        for (String f : run.lines("pci")) {
            assertFalse(field(f, "class").startsWith("02"), "a network controller in the guest: " + f);
        }
    }

    /** The "pci" line of the first function VENDOR:DEVICE. */
    private static Optional<String> function(final String vendorDevice) {
        return run.lines("pci").stream().filter(l -> l.split(" ")[1].equals(vendorDevice)).findFirst();
    }

    private static String field(final String line, final String name) {
        for (String word : line.split(" ")) {
            if (word.startsWith(name + "=")) {
                return word.substring(name.length() + 1);
            }
        }
        throw new AssertionError("no " + name + "= in: " + line);
    }
}
