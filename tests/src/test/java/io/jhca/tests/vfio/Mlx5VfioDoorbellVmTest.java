package io.jhca.tests.vfio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * {@link Mlx5VfioVmRun} with ivshmem-doorbell: the model process is the ivshmem server, so the guest's BAR2 is the
 * model's BAR0 file passed over its socket and BAR1 is an MSI-X table. VFIO reports MSI-X, the driver wires vector 0
 * to an eventfd and its event thread sleeps there with the async EQ armed; the model raises vector 0 (the EQ's
 * eqc.intr) through the eventfd the server passed QEMU, and the guest kernel's vfio-pci signals the driver's
 * eventfd. Command completions and the completion event of an armed CQ then reach the driver as MSI-X interrupts.
 */
class Mlx5VfioDoorbellVmTest extends Mlx5VfioVmRun {

    Mlx5VfioDoorbellVmTest() {
        super(true, "127.0.0.73", "127.0.0.74", "doorbell");
    }

    @Test
    void guestTakesTheEqEventsByMsixVector0() {
        List<String> mode = run.lines("mode");
        assertEquals(1, mode.size(), run.tail());
        assertTrue(mode.get(0).startsWith("events=MSIX_VECTOR_0 iova=PHYSICAL "), mode.get(0));
    }

    @Test
    void commandCompletionsArrivedAsInterrupts() {
        long[] irq = guestInterrupts();
        assertTrue(irq[0] > 0, "the event thread was woken by MSI-X vector 0: " + run.lines("irq"));
        assertTrue(irq[1] > 0 && irq[1] <= irq[0], "wake-ups that found command completions: " + run.lines("irq"));
    }

    @Test
    void aCqEventArrivedAsAnInterrupt() {
        assertEquals(List.of("guest ok"), run.lines("check cq-event"), "the guest's armed CQ raised its event");
        long[] irq = guestInterrupts();
        assertTrue(irq[2] > 0 && irq[2] <= irq[0], "wake-ups that found completion events: " + run.lines("irq"));
    }

    /**
     * The line can be woken early: a wake-up from the guest check's thread ended an await of the event thread by the
     * line's wake eventfd (the line counts only awaits that found it signalled, so this holds whatever the timing).
     * The stop's own wake-up at the close may add one, but is not asserted: it ends an await only when it meets the
     * thread in one, not when the thread is between two.
     */
    @Test
    void aWakeUpFromAnotherThreadEndedTheEventThreadsAwait() {
        List<String> wake = run.lines("wake");
        assertEquals(2, wake.size(), run.tail());
        assertTrue(wake.get(0).startsWith("asked=ended-await woken="), wake.toString());
        assertTrue(wake.get(1).startsWith("woken="), wake.toString());
        long asked = Long.parseLong(wake.get(0).substring(wake.get(0).indexOf("woken=") + 6));
        long closed = Long.parseLong(wake.get(1).substring(6));
        assertTrue(asked >= 1 && closed >= asked, wake.toString());
    }

    @Test
    void theModelServedQemuAndRaisedVector0AtLeastAsOftenAsTheGuestWoke() {
        List<String> tail = modelTail();
        String line = tail.stream().filter(l -> l.startsWith("ivshmem ")).findFirst().orElse(null);
        assertTrue(line != null && !line.contains("error="), "model process said: " + tail);
        Map<String, String> f = new HashMap<>();
        for (String kv : line.substring("ivshmem ".length()).split(" ")) {
            f.put(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
        }
        // one QEMU; two when scripts/vfio-vm booted once more after a guest that died before its job
        assertTrue(f.get("served").equals("1") || f.get("served").equals("2"), line);
        assertEquals("0", f.get("connected"), "QEMU exited and the server dropped it: " + line);
        String[] raised = f.get("raised").split(",");
        assertEquals(VECTORS, raised.length, line);
        long vector0 = Long.parseLong(raised[0]);
        // several raises before the guest's read are one wake-up (an eventfd counts; MSI-X may coalesce too)
        assertTrue(vector0 >= guestInterrupts()[0], line + " vs guest " + run.lines("irq"));
        for (int v = 1; v < VECTORS; v++) {
            assertEquals("0", raised[v], "the driver's EQs all use vector 0: " + line);
        }
    }
}
