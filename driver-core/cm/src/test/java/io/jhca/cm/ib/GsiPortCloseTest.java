package io.jhca.cm.ib;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.jhca.cm.mad.CmMessages;
import io.jhca.cm.mad.Mad;
import io.jhca.cm.mad.ShortMessages;
import io.jhca.rxe.ProgressMode;
import io.jhca.rxe.RxeDeviceConfig;
import io.jhca.rxe.RxeProvider;
import io.jhca.verbs.Context;
import io.jhca.verbs.Gid;

/**
 * Closing QP1 sends what was posted first. On a device the application progresses, the DREP a CM posts in answer to
 * a peer's DREQ is still in the send queue when an application that ends on its DISCONNECTED event closes the
 * device's CM; without the flush it never left, and the peer (Linux rping -c against hwlab rping -s) retried its
 * DREQ into a closed port until its CM gave up.
 */
class GsiPortCloseTest {

    @Test
    void aMadPostedJustBeforeCloseLeavesOnADeviceTheApplicationProgresses() throws Exception {
        InetAddress ipA = InetAddress.getByName("127.0.0.1");
        InetAddress ipB = InetAddress.getByName("127.0.0.2");
        try (Context a = open("gsiclose_a", ipA); Context b = open("gsiclose_b", ipB)) {
            GsiPort receiver = new GsiPort(b);
            try {
                GsiPort sender = new GsiPort(a);
                long tid = 0x5eed_d0e5L;
                assertTrue(sender.send(ShortMessages.drep(tid, 0x11, 0x22, new byte[0]), Gid.of(ipB), gidIndex(a, ipA)),
                        "a send slot");
                sender.close(); // a is never progressed between the post and the close

                List<Mad> got = new ArrayList<>();
                long deadline = System.nanoTime() + 5_000_000_000L;
                while (got.isEmpty() && System.nanoTime() < deadline) {
                    receiver.poll(r -> got.add(r.mad()));
                    Thread.onSpinWait();
                }
                if (got.isEmpty()) {
                    fail("the DREP posted before close never arrived");
                }
                assertEquals(tid, got.get(0).tid());
                assertEquals(CmMessages.DREP, got.get(0).attributeId());
            } finally {
                receiver.close();
            }
        }
    }

    private static Context open(String name, InetAddress ip) {
        return RxeProvider.open(RxeDeviceConfig.builder(name).address(ip).progressMode(ProgressMode.CALLER).build());
    }

    private static int gidIndex(Context c, InetAddress ip) {
        Gid g = Gid.of(ip);
        for (int i = 0; i < c.queryPort(1).gidTblLen(); i++) {
            if (g.equals(c.queryGid(1, i))) {
                return i;
            }
        }
        throw new IllegalStateException(ip + " is not in " + c.name() + "'s GID table");
    }
}
