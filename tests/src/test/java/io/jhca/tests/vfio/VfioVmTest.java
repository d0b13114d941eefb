package io.jhca.tests.vfio;

import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.jhca.tests.vfio.guest.ListPci;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The vfio lab's harness: {@code scripts/vfio-vm run-java --bind 1234:11e8 --bind 1b36:0010 --bind 1af4:1110}
 * boots the Debian guest (QEMU TCG, emulated Intel IOMMU) and lists, with {@link ListPci}, what the guest sees
 * before any check runs: QEMU's edu, nvme and ivshmem bound to vfio-pci, each alone in its IOMMU group with a
 * /dev/vfio group device, a VFIO container offering Type1v2, and no network controller.
 *
 * <p>In the default suite: the guest tests share one boot ({@link VfioVm#shared()}), which took 13 s under TCG on
 * 2 idle cores (boot 4 s, the guest JVM and every check 8 s) and 50-80 s when other builds kept them busy (boot
 * 9-22 s, JVM and checks 36-56 s), under the 3 minutes allowed. Skipped, with
 * the reason printed, when not root or without qemu-system-x86_64 (scripts/test installs it);
 * {@code -Djhca.vfio.vm=false} switches them off.
 */
class VfioVmTest {

    private static VfioVm.Shared guest;

    @BeforeAll
    @Timeout(value = 900, unit = TimeUnit.SECONDS)
    static void boot() throws Exception {
        guest = VfioVm.shared();
    }

    @BeforeEach
    void prerequisites() {
        assumeTrue(guest.skip() == null, guest.skip());
    }

    @Test
    void guestJavaRanAndExitedZero() {
        assertEquals(0, guest.run().exitStatus(), "guest run failed:\n" + guest.run().tail());
    }

    @Test
    void eduNvmeAndIvshmemAreBoundToVfioPciEachAloneInItsIommuGroup() {
        for (String id : List.of(VfioVm.EDU, VfioVm.NVME, VfioVm.IVSHMEM)) {
            String f = function(id).orElseGet(() -> fail("the guest saw no " + id + ":\n" + guest.run().tail()));
            assertEquals("vfio-pci", field(f, "driver"), id + " not bound to vfio-pci: " + f);
            String group = field(f, "group");
            assertFalse(group.equals("-"), id + " has no IOMMU group: " + f);
            assertEquals("1", field(f, "group-members"), id + " shares its IOMMU group: " + f);
            assertEquals("/dev/vfio/" + group, field(f, "group-dev"), "no VFIO group device for " + id + ": " + f);
        }
    }

    @Test
    void vfioContainerOffersType1v2() {
        // linux/vfio.h: VFIO_API_VERSION 0; VFIO_CHECK_EXTENSION answers 1 for a supported IOMMU type
        assertEquals(List.of("api=0 type1v2=1"), guest.run().lines("vfio"), guest.run().tail());
    }

    @Test
    void theGuestHasNoNetworkController() {
        List<String> functions = guest.run().lines("pci");
        assertTrue(functions.size() >= 3, "too few PCI functions listed:\n" + guest.run().tail());
        for (String f : functions) {
            assertFalse(field(f, "class").startsWith("02"), "a network controller in the guest: " + f);
        }
    }

    /** The "pci" line of the first function VENDOR:DEVICE. */
    private static Optional<String> function(final String vendorDevice) {
        return guest.run().lines("pci").stream().filter(l -> l.split(" ")[1].equals(vendorDevice)).findFirst();
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
