package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.jhca.rxe.transport.RxeCounters.Counter;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QpType;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendQueue;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;

/**
 * Sixteen RC QPs of one device, each with four windows of 4 KiB-packet WRITEs to one peer device (16 x 128 packets in
 * flight would be 8 MiB): more than the peer's receive buffering holds (a 256-frame ring, a 4 MiB socket buffer). The
 * device keeps at most 256 PSNs unacknowledged across its QPs, so in CALLER mode, where a device runs whole duty
 * cycles before the other reads anything, the packets waiting for the receiver never pass 256, none is lost or resent,
 * every QP completes and every byte lands. The same with READs, whose PSNs count for their responses, which come
 * back into the requesting device's buffer.
 */
class DeviceWindowTest {

    private static final int QPS = 16;
    private static final int WRITES = 32;        // a QP's 128-PSN window of 4 KiB packets, four times over
    private static final int LENGTH = 16384;     // four packets at a 4 KiB MTU
    private static final int DEVICE_WINDOW = 256;

    /** Packets {@code from} sent that {@code to} has not received yet. */
    private static long waiting(final RxeContext from, final RxeContext to) {
        return from.counters().get(Counter.SENT_PKTS) - to.counters().get(Counter.RCVD_PKTS);
    }

    @ParameterizedTest(name = "{0}, receiver ring={1}")
    @CsvSource({"WRITE, true", "WRITE, false", "READ, true", "READ, false"})
    void sixteenQpsStayWithinTheDeviceWindow(final String verb, final boolean ring) {
        final boolean read = verb.equals("READ");
        final long seed = Rig.seed("DeviceWindowTest " + verb + " ring=" + ring);
        final long bytes = (long) QPS * WRITES * LENGTH;
        // the device that receives the data: B for WRITEs, A (the READ responses) for READs
        try (Rig r = new Rig(Rig.config("rxeA", ProgressMode.CALLER).ring(!read || ring).build(),
                Rig.config("rxeB", ProgressMode.CALLER).ring(read || ring).build(), QpType.RC, bytes, Mtu.MTU_4096,
                a -> a, 14)) {
            final byte[] pattern = new byte[(int) bytes];
            new Random(seed).nextBytes(pattern);
            final RxeContext to = read ? r.a : r.b;
            final RxeContext from = read ? r.b : r.a;
            (read ? r.memB : r.memA).buffer().putBytes(0, pattern);
            final QueuePair[] senders = new QueuePair[QPS];
            final QueuePair[] receivers = new QueuePair[QPS];
            try {
                for (int q = 0; q < QPS; q++) {
                    senders[q] = r.pdA.createQp(QpInitAttributes.of(QpType.RC, r.cqA, r.cqA).maxSendWr(WRITES)
                            .maxRecvWr(1).maxSendSge(1).maxRecvSge(1));
                    receivers[q] = r.pdB.createQp(QpInitAttributes.of(QpType.RC, r.cqB, r.cqB).maxSendWr(1)
                            .maxRecvWr(1).maxSendSge(1).maxRecvSge(1));
                    Rig.connect(senders[q], r.a, receivers[q], r.b, Mtu.MTU_4096, 0xFFFF00 + q, 0x100, 14);
                    Rig.connect(receivers[q], r.b, senders[q], r.a, Mtu.MTU_4096, 0x100, 0xFFFF00 + q, 14);
                }
                for (int q = 0; q < QPS; q++) {
                    final SendQueue sq = senders[q].sendQueue();
                    sq.start();
                    for (int w = 0; w < WRITES; w++) {
                        final long at = ((long) q * WRITES + w) * LENGTH;
                        sq.wrId(at).flags(SendFlags.SIGNALED);
                        if (read) {
                            sq.rdmaRead(r.mrB.rkey(), r.mrB.address() + at);
                        } else {
                            sq.rdmaWrite(r.mrB.rkey(), r.mrB.address() + at);
                        }
                        sq.sge(r.mrA, at, LENGTH);
                    }
                    assertEquals(0, sq.complete(), "posting QP " + q);
                }
                final WorkCompletion wc = new WorkCompletion();
                final int[] completed = new int[QPS];
                int total = 0;
                long mostWaiting = 0;
                final long end = System.nanoTime() + 30_000_000_000L;
                while (total < QPS * WRITES) {
                    assertTrue(System.nanoTime() < end, "30 s: " + total + " of " + QPS * WRITES
                            + " completions; counters A " + r.a.counters() + " B " + r.b.counters());
                    // the data's packets go one way, nothing else does (B acknowledges WRITEs; READ responses need
                    // no ACK): what the sending device sent and the other has not taken waits for it
                    r.a.progress();
                    mostWaiting = Math.max(mostWaiting, waiting(from, to));
                    r.b.progress();
                    mostWaiting = Math.max(mostWaiting, waiting(from, to));
                    while (r.cqA.poll(wc) == 1) {
                        assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
                        completed[(int) (wc.wrId() / ((long) WRITES * LENGTH))]++;
                        total++;
                    }
                }
                for (int q = 0; q < QPS; q++) {
                    assertEquals(WRITES, completed[q], "completions of QP " + q);
                }
                assertEquals(0, r.a.counters().get(Counter.RETRANSMITTED_PKTS), () -> "A resent: " + r.a.counters());
                assertEquals(0, r.b.counters().get(Counter.OUT_OF_SEQUENCE), () -> "B lost: " + r.b.counters());
                // a READ request takes its PSNs at once: the room may be passed by one READ's packets but one
                final int most = DEVICE_WINDOW + (read ? LENGTH / 4096 - 1 : 0);
                assertTrue(mostWaiting <= most, "packets waiting for the receiver at most " + mostWaiting);
                assertTrue(mostWaiting > DEVICE_WINDOW / 2, "the window was used: " + mostWaiting);
                final byte[] landed = new byte[(int) bytes];
                (read ? r.memA : r.memB).buffer().getBytes(0, landed);
                for (int i = 0; i < landed.length; i++) {
                    if (landed[i] != pattern[i]) {
                        throw new AssertionError("byte " + i + " (QP " + i / (WRITES * LENGTH) + "): "
                                + landed[i] + " != " + pattern[i]);
                    }
                }
            } finally {
                for (int q = 0; q < QPS; q++) {
                    if (senders[q] != null) {
                        senders[q].close();
                    }
                    if (receivers[q] != null) {
                        receivers[q].close();
                    }
                }
            }
        }
    }
}
