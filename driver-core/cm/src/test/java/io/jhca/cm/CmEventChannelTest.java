package io.jhca.cm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/** The event channel: order, poll, timed wait, the selector's level, close. */
class CmEventChannelTest {

    @Test
    void pollWaitAndSelectorSeeTheSameEvents() throws Exception {
        try (CmEventChannel ch = CmEventChannel.create(); Selector sel = Selector.open()) {
            CmId id = ch.createId();
            ch.selectableChannel().register(sel, SelectionKey.OP_READ);
            assertNull(ch.poll());
            assertNull(ch.get(10, TimeUnit.MILLISECONDS), "nothing within the timeout");
            assertEquals(0, sel.selectNow(), "not readable without events");
            CmEvent first = new CmEvent(CmEventType.ADDR_RESOLVED, id, null, 0, new byte[0]);
            CmEvent second = new CmEvent(CmEventType.ROUTE_RESOLVED, id, null, 0, new byte[0]);
            ch.post(first);
            ch.post(second);
            assertEquals(1, sel.selectNow(), "readable while events wait");
            sel.selectedKeys().clear();
            assertSame(first, ch.poll());
            assertEquals(1, sel.selectNow(), "still readable: one left");
            sel.selectedKeys().clear();
            assertSame(second, ch.get(1, TimeUnit.SECONDS));
            assertEquals(0, sel.selectNow(), "drained");
            CmException e = assertThrows(CmException.class, () -> {
                ch.post(first);
                ch.expect(CmEventType.ESTABLISHED, 100);
            });
            assertTrue(e.getMessage().contains("ADDR_RESOLVED"), e.getMessage());
        }
    }

    @Test
    void aWaitingThreadWakesForAnEventAndClosedChannelsRefuse() throws Exception {
        CmEventChannel ch = CmEventChannel.create();
        CmId id = ch.createId();
        Thread t = new Thread(() -> {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                return;
            }
            ch.post(new CmEvent(CmEventType.ESTABLISHED, id, null, 0, new byte[0]));
        });
        t.start();
        assertEquals(CmEventType.ESTABLISHED, ch.expect(CmEventType.ESTABLISHED, 10_000).type());
        t.join();
        ch.close();
        assertThrows(IllegalStateException.class, ch::createId);
        assertThrows(IllegalStateException.class, () -> ch.get(1, TimeUnit.MILLISECONDS));
    }
}
