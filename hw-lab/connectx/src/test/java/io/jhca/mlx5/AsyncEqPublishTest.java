package io.jhca.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jhca.mlx5.eq.Eqe;
import io.jhca.mlx5.eq.EventType;
import io.jhca.mlx5.init.AsyncEq;
import io.jhca.mlx5.testdev.ScriptedFirmware;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The async EQ's consumer index reaches the device while one poll keeps consuming: entries that keep coming during
 * a poll (commands issued from another thread while it consumes their CMD entries) must never find the EQ full in
 * the device's view, which is the last index published. Here each entry the poll hands over makes the firmware write
 * the next, 300 in one poll of a 256-entry EQ; before each write the device's free room is checked.
 */
@Timeout(60)
class AsyncEqPublishTest {

    private static final int IN_ONE_POLL = 300;

    @Test
    void entriesArrivingDuringOnePollNeverFindTheEqFull() throws Exception {
        ScriptedFirmware fw = Fixtures.firmware().start();
        try (Mlx5Context ctx = Fixtures.open(fw)) {
            AsyncEq eq = ctx.hca().eq();
            assertTrue(IN_ONE_POLL > eq.entries(), "the run must outlast the ring");
            int[] handled = new int[1];
            int[] worstLag = new int[1];
            long[] posted = {0};
            AsyncEq.Handler chain = (eqes, offset) -> {
                handled[0]++;
                if (handled[0] < IN_ONE_POLL) {
                    int lag = (int) (posted[0] - publishedCi(fw, eq.eqn()));
                    worstLag[0] = Math.max(worstLag[0], lag);
                    assertTrue(lag < eq.entries(), "entry " + handled[0] + ": " + lag
                            + " entries unacknowledged in the device's view of a " + eq.entries() + "-entry EQ");
                    post(fw, posted);
                }
            };
            // the event thread polls too: post until this thread's poll is the one that takes an entry
            long end = System.nanoTime() + 20_000_000_000L;
            while (handled[0] == 0 && System.nanoTime() < end) {
                if (!eq.pending()) {
                    post(fw, posted);
                }
                eq.poll(chain);
            }
            assertEquals(IN_ONE_POLL, handled[0], "entries handed over in this thread's poll");
            assertTrue(worstLag[0] <= 2 * 32, "worst unacknowledged run " + worstLag[0]);
            while (ctx.asyncEventChannel().getEvent(0) != null) {
                continue;   // the port events the event thread took, if any
            }
        }
    }

    /** A port-active event: harmless to whichever thread takes it. */
    private static void post(ScriptedFirmware fw, long[] posted) {
        fw.postEqe(e -> Eqe.setPortChange(e, 0, EventType.PORT_CHANGE_ACTIVE, 1));
        posted[0]++;
    }

    /** The consumer index of the last update doorbell (UAR + 0x48, be32(eqn << 24 | ci)) the firmware saw. */
    private static long publishedCi(ScriptedFirmware fw, int eqn) {
        synchronized (fw.stores) {
            for (int i = fw.stores.size() - 1; i >= 0; i--) {
                ScriptedFirmware.Store s = fw.stores.get(i);
                int v = s.value();
                if ((s.offset() & 0xfff) == AsyncEq.DOORBELL_UPDATE && v >>> 24 == eqn) {
                    return v & 0xffffff;
                }
            }
        }
        return 0;
    }
}
