package io.jhca.tests.vfio;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import io.jhca.tests.vfio.guest.VfioChecks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * jhca's vfio layer (io.jhca.vfio) against QEMU devices that do DMA and interrupts under the emulated Intel IOMMU:
 * the guest runs {@link VfioChecks} and each of its checks is one test here. edu: identification, liveness and
 * factorial registers; DMA RAM -> device -> RAM with the bytes compared; an MSI (raised by register, and by a
 * finished DMA) seen on an eventfd; a read through an IOVA never mapped and a write through one unmapped again,
 * both refused (a DMAR fault in the guest's kernel log, RAM unchanged). nvme: CAP/VS registers, MSI-X vectors
 * reported with eventfd support, and an Identify Controller admin command whose completion arrives on MSI-X vector
 * 0 with the controller's data written by DMA. ivshmem, the way a device model on the host will serve the guest:
 * BAR2 is a file {@link HostBarServer} owns (a word it wrote before boot is read in the guest, the guest's answer is
 * read on the host), and the server reads and writes guest RAM in the RAM file at the guest-physical address the
 * guest published (and mapped as IOVA).
 *
 * <p>Each check can fail: {@code VfioChecks --wrong=NAME,...} flips its expectation, and with all of them named
 * every check reports FAIL. The seed of the DMA patterns is printed; {@code -Djhca.vfio.seed=N} replays it.
 *
 * <p>In the default suite, sharing one boot with {@link VfioVmTest} (timings there); skipped likewise.
 */
class VfioDevicesTest {

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

    static Stream<String> checks() {
        return VfioChecks.names().stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("checks")
    void check(final String name) {
        List<String> lines = guest.run().lines("check").stream().filter(l -> l.startsWith(name + " ")).toList();
        assertEquals(1, lines.size(), "expected one result of check " + name + " (seed " + guest.seed() + "):\n"
                + guest.run().tail());
        assertTrue(lines.get(0).startsWith(name + " ok"), lines.get(0) + " (seed " + guest.seed() + ")\n\n"
                + guest.run().tail());
    }

    @Test
    void hostSawTheGuestsBarWriteAndServedOneRequest() {
        assertNull(guest.hostError(), "host side failed");
        assertEquals(~guest.hostWord(), guest.guestWord(), "the guest's answer at BAR2 0x08, read in the host's file");
        assertEquals(1, guest.served(), "requests the host answered from guest RAM");
    }

    @Test
    void guestRunPassedEveryCheck() {
        assertEquals(0, guest.run().exitStatus(), "guest run failed:\n" + guest.run().tail());
        assertEquals(List.of("done, 0 failed"), guest.run().lines("checks"), guest.run().tail());
    }
}
