package io.jhca.cm;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.jhca.cm.ib.CmState;
import io.jhca.cm.mad.RejectReason;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Context;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.Verbs;

/** rdma_cm over two rxe devices: connect, accept, reject, no listener, disconnect, time wait. */
class CmRxeTest {
    static final long WAIT = 10_000;
    Context c0;
    Context c1;
    CmEventChannel ch;
    final java.util.ArrayDeque<AutoCloseable> opened = new java.util.ArrayDeque<>();

    @BeforeEach
    void open() {
        c0 = Verbs.open("rxe0");
        c1 = Verbs.open("rxe1");
        CmDevices.attach(c0);
        CmDevices.attach(c1);
        ch = CmEventChannel.create();
    }

    @AfterEach
    void close() throws Exception {
        while (!opened.isEmpty()) {
            opened.pop().close();
        }
        ch.close();
        CmDevices.detach(c0);
        CmDevices.detach(c1);
        c0.close();
        c1.close();
    }

    static InetAddress ip(String s) throws Exception {
        return InetAddress.getByName(s);
    }

    static ConnParam fast() {
        return ConnParam.defaults().cmResponseTimeout(14).localAckTimeout(12);
    }

    CmId client(int port) throws Exception {
        CmId id = ch.createId();
        id.resolveAddr(ip("127.0.0.2"), new InetSocketAddress(ip("127.0.0.1"), port), 1000);
        ch.expect(CmEventType.ADDR_RESOLVED, WAIT);
        id.resolveRoute(1000);
        ch.expect(CmEventType.ROUTE_RESOLVED, WAIT);
        return id;
    }

    /** An ID listening on 127.0.0.1:{@code port} (rxe0). */
    CmId listener(int port, int backlog) throws Exception {
        CmId id = ch.createId();
        id.bindAddr(new InetSocketAddress(ip("127.0.0.1"), port));
        id.listen(backlog);
        return id;
    }

    QueuePair qpFor(CmId id) {
        ProtectionDomain pd = id.context().allocatePd();
        opened.push(pd);
        CompletionQueue cq = id.context().createCq(16);
        opened.push(cq);
        QueuePair qp = id.createQp(pd, QpInitAttributes.rc(cq, cq));
        opened.push(qp);
        opened.push(id);
        return qp;
    }

    @Test
    void connectAcceptDisconnect() throws Exception {
        CmId listener = listener(7471, 4);
        CmId cl = client(7471);
        QueuePair cq = qpFor(cl);
        cl.connect(fast().privateData("hello".getBytes(StandardCharsets.US_ASCII)));
        CmEvent req = ch.expect(CmEventType.CONNECT_REQUEST, WAIT);
        assertEquals(listener, req.listenId());
        assertEquals("hello", new String(req.privateData(), 0, 5, StandardCharsets.US_ASCII));
        CmId sv = req.id();
        assertEquals(cl.localAddress(), sv.remoteAddress());
        assertEquals(new InetSocketAddress(ip("127.0.0.1"), 7471), sv.localAddress());
        QueuePair sq = qpFor(sv);
        sv.accept(fast());
        CmEvent e1 = ch.expect(CmEventType.ESTABLISHED, WAIT);
        CmEvent e2 = ch.expect(CmEventType.ESTABLISHED, WAIT);
        assertTrue((e1.id() == cl && e2.id() == sv) || (e1.id() == sv && e2.id() == cl));
        assertEquals(QpState.RTS, cq.state());
        assertEquals(QpState.RTS, sq.state());
        assertEquals(sq.qpn(), cq.query().destQpn());
        assertEquals(cq.qpn(), sq.query().destQpn());
        assertEquals(cq.query().sqPsn(), sq.query().rqPsn());
        assertEquals(sq.query().sqPsn(), cq.query().rqPsn());
        cl.disconnect();
        // per ID: DISCONNECTED, then TIMEWAIT_EXIT; the two IDs' events may interleave
        java.util.Map<CmId, java.util.List<CmEventType>> seen = new java.util.HashMap<>();
        for (int i = 0; i < 4; i++) {
            CmEvent e = ch.get(WAIT, java.util.concurrent.TimeUnit.MILLISECONDS);
            assertTrue(e != null, "4 events expected, got " + seen);
            seen.computeIfAbsent(e.id(), k -> new java.util.ArrayList<>()).add(e.type());
        }
        java.util.List<CmEventType> order = java.util.List.of(CmEventType.DISCONNECTED, CmEventType.TIMEWAIT_EXIT);
        assertEquals(order, seen.get(cl));
        assertEquals(order, seen.get(sv));
        assertEquals(QpState.ERR, cq.state());
        assertEquals(QpState.ERR, sq.state());
        assertEquals(CmState.IDLE, cl.cmState());
        listener.close();
    }

    /**
     * Once a connection is established and no MAD comes, each device's CM thread looks seldom (every
     * {@value CmAgent#IDLE_PARK_MILLIS} ms at most, where it looked every {@value CmAgent#BUSY_PARK_MICROS} us: about
     * 2500 looks in the half second below), and the first MAD after the quiet spell, the DREQ, is still answered.
     */
    @Test
    void anIdleConnectionLeavesTheCmThreadsQuietAndADisconnectAfterItIsAnswered() throws Exception {
        CmId listener = listener(7475, 1);
        CmId cl = client(7475);
        QueuePair cq = qpFor(cl);
        cl.connect(fast());
        CmId sv = ch.expect(CmEventType.CONNECT_REQUEST, WAIT).id();
        QueuePair sq = qpFor(sv);
        sv.accept(fast());
        ch.expect(CmEventType.ESTABLISHED, WAIT);
        ch.expect(CmEventType.ESTABLISHED, WAIT);
        Thread.sleep(100); // the threads back off: 0.2 + 0.4 + ... + 6.4 ms, then the longest park
        long looks0 = CmDevices.agent(c0).looks() + CmDevices.agent(c1).looks();
        Thread.sleep(500);
        long looks = CmDevices.agent(c0).looks() + CmDevices.agent(c1).looks() - looks0;
        assertTrue(looks <= 2 * (500 / CmAgent.IDLE_PARK_MILLIS + 25), "two idle CM threads looked " + looks
                + " times in 500 ms");
        cl.disconnect();
        for (int i = 0; i < 4; i++) {
            CmEvent e = ch.get(WAIT, java.util.concurrent.TimeUnit.MILLISECONDS);
            assertTrue(e != null && (e.type() == CmEventType.DISCONNECTED || e.type() == CmEventType.TIMEWAIT_EXIT),
                    "event " + i + " after the disconnect: " + e);
        }
        assertEquals(QpState.ERR, cq.state());
        assertEquals(QpState.ERR, sq.state());
        listener.close();
    }

    @Test
    void noListenerIsRejectedWithInvalidServiceId() throws Exception {
        CmId cl = client(7472);
        qpFor(cl);
        cl.connect(fast());
        CmEvent e = ch.expect(CmEventType.REJECTED, WAIT);
        assertEquals(RejectReason.INVALID_SERVICE_ID, e.rejectReason());
        assertEquals(8, e.status());
    }

    @Test
    void rejectCarriesConsumerDefinedAndPrivateData() throws Exception {
        CmId listener = listener(7473, 1);
        CmId cl = client(7473);
        qpFor(cl);
        cl.connect(fast());
        CmEvent req = ch.expect(CmEventType.CONNECT_REQUEST, WAIT);
        req.id().reject(new byte[] {1, 2, 3});
        CmEvent e = ch.expect(CmEventType.REJECTED, WAIT);
        assertEquals(cl, e.id());
        assertEquals(RejectReason.CONSUMER_DEFINED, e.rejectReason());
        assertArrayEquals(new byte[] {1, 2, 3}, java.util.Arrays.copyOf(e.privateData(), 3));
        listener.close();
    }
}
