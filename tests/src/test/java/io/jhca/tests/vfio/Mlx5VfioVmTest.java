package io.jhca.tests.vfio;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * {@link Mlx5VfioVmRun} with ivshmem-plain: BAR2 is the model's BAR0 file as a memdev, the function has no MSI-X, so
 * the driver polls its EQ and never takes an interrupt.
 */
class Mlx5VfioVmTest extends Mlx5VfioVmRun {

    Mlx5VfioVmTest() {
        super(false, "127.0.0.71", "127.0.0.72", "plain");
    }

    @Test
    void guestSaysWhichEventModeAndIovaPolicyItUses() {
        List<String> mode = run.lines("mode");
        assertEquals(1, mode.size(), run.tail());
        // ivshmem-plain has no MSI-X: polling; the test mode maps IOVA = guest-physical address
        assertTrue(mode.get(0).startsWith("events=POLLING iova=PHYSICAL "), mode.get(0));
        assertArrayEquals(new long[] {0, 0, 0}, guestInterrupts(), "a polling driver is never woken by an interrupt");
        assertEquals(List.of("none"), run.lines("wake"), "no interrupt line to wake");
    }
}
