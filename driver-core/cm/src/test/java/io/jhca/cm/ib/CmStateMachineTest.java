package io.jhca.cm.ib;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.jhca.cm.mad.CmMessages;
import io.jhca.cm.mad.CmaHeader;
import io.jhca.cm.mad.RejectReason;
import io.jhca.cm.mad.RepMessage;
import io.jhca.cm.mad.ReqMessage;
import io.jhca.cm.mad.ShortMessages;
import io.jhca.verbs.Gid;

/**
 * The IB CM state machine between connection managers on an in-memory wire with a manual clock: every exchange,
 * lost messages and their retries, MRA, REJ reasons, the backlog, time wait, many connections at once under loss.
 */
class CmStateMachineTest {
    static final Gid A = Gid.parse("00000000000000000000ffff0a000001");
    static final Gid B = Gid.parse("00000000000000000000ffff0a000002");
    static final Gid C = Gid.parse("00000000000000000000ffff0a000003");
    static final int TIMEOUT_CODE = 14; // 67 ms
    static final long TIMEOUT = CmTimeouts.nanos(TIMEOUT_CODE);
    static final long SID = CmaHeader.serviceId(7471);

    MemoryWire wire = new MemoryWire(1);
    ConnectionManager a = wire.add(A, 0xA);
    ConnectionManager b = wire.add(B, 0xB);

    static ReqMessage req(CmConnection c, long sid, int retries) {
        return new ReqMessage(c.localCommId(), sid, 0xA, 0x11, 1, 1, TIMEOUT_CODE, 0, 0x123456, TIMEOUT_CODE, 7,
                0xFFFF, 3, 7, retries, false, 0xFFFF, 0xFFFF, new byte[16], new byte[16], 0, 3, 0, 64, 0, false, 12,
                new byte[] {1, 2, 3});
    }

    static RepMessage rep(CmConnection c) {
        return new RepMessage(c.localCommId(), c.remoteCommId(), 0, 0x22, 0x654321, 1, 1, 0, 0, false, 7, false, 0xB,
                new byte[] {4, 5});
    }

    CmConnection connect(ConnectionManager from, Recorder r, int retries) {
        CmConnection c = from.create(B, 0, r);
        from.connect(c, req(c, SID, retries), wire.now);
        return c;
    }

    @Test
    void reqRepRtuEstablishesBothSides() {
        Recorder server = new Recorder();
        b.listen(SID, 4, server);
        Recorder client = new Recorder();
        CmConnection c = connect(a, client, 3);
        assertEquals(CmState.REQ_SENT, c.state());
        wire.drain();
        assertEquals(List.of("REQUEST"), server.events);
        CmConnection s = server.requests.get(0);
        assertEquals(CmState.REQ_RCVD, s.state());
        assertArrayEquals(new byte[] {1, 2, 3}, java.util.Arrays.copyOf(s.req().privateData(), 3));
        s.accept(rep(s), wire.now);
        wire.drain();
        assertEquals(List.of("REPLY", "ESTABLISHED"), client.events);
        assertEquals(List.of("REQUEST", "ESTABLISHED"), server.events);
        assertEquals(CmState.ESTABLISHED, c.state());
        assertEquals(CmState.ESTABLISHED, s.state());
        assertEquals(s.localCommId(), c.remoteCommId());
        assertEquals(c.localCommId(), s.remoteCommId());
        assertEquals(List.of("REQ", "REP", "RTU"), wire.names());
        // the REP answers with the REQ's transaction ID (Linux cm.c: the passive side keeps the REQ's TID)
        assertEquals(wire.log.get(0).mad().tid(), wire.log.get(1).mad().tid());
    }

    /**
     * A message a connection is not waiting for changes nothing: an RTU before the passive side sent its REP, a REP
     * to the passive side (as if reflected back to it). A disconnect before the connection is established is refused.
     * The exchange then completes as usual.
     */
    @Test
    void messagesOutOfTurnChangeNothingAndAnEarlyDisconnectIsRefused() {
        Recorder server = new Recorder();
        b.listen(SID, 4, server);
        Recorder client = new Recorder();
        CmConnection c = connect(a, client, 3);
        assertThrows(IllegalStateException.class, () -> c.disconnect(new byte[0], wire.now), "a disconnect in REQ_SENT");
        wire.drain();
        CmConnection s = server.requests.get(0);
        long tid = wire.log.get(0).mad().tid();

        b.deliver(ShortMessages.rtu(tid, c.localCommId(), s.localCommId(), new byte[0]), A, wire.now);
        assertEquals(CmState.REQ_RCVD, s.state(), "an RTU before the REP");
        assertEquals(List.of("REQUEST"), server.events);

        s.accept(rep(s), wire.now);
        RepMessage reflected = new RepMessage(c.localCommId(), s.localCommId(), 0, 0x11, 0x123456, 1, 1, 0, 0, false, 7,
                false, 0xA, new byte[0]);
        b.deliver(reflected.encode(tid), A, wire.now);
        assertEquals(CmState.REP_SENT, s.state(), "a REP to the side that sent one");
        assertEquals(List.of("REQUEST"), server.events);

        wire.drain();
        assertEquals(CmState.ESTABLISHED, c.state());
        assertEquals(CmState.ESTABLISHED, s.state());
        assertEquals(List.of("REQUEST", "ESTABLISHED"), server.events);
    }

    @Test
    void lostReqIsSentAgainAfterTheResponseTimeout() {
        Recorder server = new Recorder();
        b.listen(SID, 4, server);
        int[] reqs = {0};
        wire.dropIf = f -> f.mad().attributeId() == CmMessages.REQ && reqs[0]++ == 0;
        CmConnection c = connect(a, new Recorder(), 3);
        wire.drain();
        assertTrue(server.requests.isEmpty());
        wire.advance(TIMEOUT - 1);
        assertEquals(1, wire.sent(CmMessages.REQ), "not before the timeout");
        wire.advance(1);
        assertEquals(2, wire.sent(CmMessages.REQ));
        assertEquals(wire.log.get(0).mad().tid(), wire.log.get(1).mad().tid(), "a retry keeps its TID");
        assertEquals(1, server.requests.size());
        assertEquals(1, a.retries());
        assertEquals(CmState.REQ_SENT, c.state());
    }

    @Test
    void unansweredReqEndsUnreachableAfterMaxCmRetries() {
        Recorder client = new Recorder();
        wire.dropIf = f -> true;
        CmConnection c = connect(a, client, 2);
        for (int i = 0; i < 10; i++) {
            wire.advance(TIMEOUT);
        }
        assertEquals(3, wire.sent(CmMessages.REQ), "the first send and MaxCMRetries = 2 more");
        assertEquals(List.of("UNREACHABLE"), client.events);
        assertEquals(CmState.IDLE, c.state());
        assertEquals(0, a.connections());
        assertEquals(1, wire.sent(CmMessages.REJ), "the REQ is withdrawn with REJ(TIMEOUT)");
    }

    @Test
    void lostRepAndLostRtuAreRecovered() {
        Recorder server = new Recorder();
        b.listen(SID, 4, server);
        int[] reps = {0};
        int[] rtus = {0};
        wire.dropIf = f -> (f.mad().attributeId() == CmMessages.REP && reps[0]++ == 0)
                || (f.mad().attributeId() == CmMessages.RTU && rtus[0]++ == 0);
        Recorder client = new Recorder();
        CmConnection c = connect(a, client, 3);
        wire.drain();
        CmConnection s = server.requests.get(0);
        s.accept(rep(s), wire.now);
        wire.drain();
        assertEquals(CmState.REQ_SENT, c.state(), "first REP lost");
        // the active side's REQ retry is a duplicate for the passive side, which sends its REP again
        wire.advance(TIMEOUT);
        assertEquals(CmState.ESTABLISHED, c.state());
        wire.advance(TIMEOUT);
        assertEquals(CmState.ESTABLISHED, s.state(), "REP retried, RTU sent again");
        assertTrue(wire.sent(CmMessages.RTU) >= 2, "the first RTU was lost, another followed a repeated REP");
        assertEquals(List.of("REPLY", "ESTABLISHED"), client.events);
    }

    @Test
    void mraStretchesTheWaitOfASlowAccept() {
        Recorder server = new Recorder();
        b.listen(SID, 4, server);
        Recorder client = new Recorder();
        CmConnection c = connect(a, client, 1);
        wire.drain();
        wire.advance(TIMEOUT); // retry: a duplicate REQ for a request not answered yet -> MRA
        assertEquals(1, wire.sent(CmMessages.MRA));
        assertEquals(CmState.MRA_REQ_RCVD, c.state());
        wire.advance(TIMEOUT); // would have given up without the MRA (1 retry)
        wire.advance(TIMEOUT);
        assertEquals(CmState.MRA_REQ_RCVD, c.state());
        CmConnection s = server.requests.get(0);
        s.accept(rep(s), wire.now);
        wire.drain();
        assertEquals(CmState.ESTABLISHED, c.state());
        assertEquals(CmState.ESTABLISHED, s.state());
    }

    @Test
    void noListenerRejectsWithInvalidServiceId() {
        Recorder client = new Recorder();
        CmConnection c = connect(a, client, 3);
        wire.drain();
        assertEquals(List.of("REJECTED"), client.events);
        assertEquals(RejectReason.INVALID_SERVICE_ID, client.rejected);
        assertEquals(CmState.IDLE, c.state());
    }

    @Test
    void consumerRejectCarriesItsPrivateData() {
        Recorder server = new Recorder();
        b.listen(SID, 4, server);
        Recorder client = new Recorder();
        connect(a, client, 3);
        wire.drain();
        server.requests.get(0).reject(RejectReason.CONSUMER_DEFINED, new byte[] {9, 8, 7}, wire.now);
        wire.drain();
        assertEquals(RejectReason.CONSUMER_DEFINED, client.rejected);
        assertEquals(28, client.rejectCode);
        assertArrayEquals(new byte[] {9, 8, 7}, java.util.Arrays.copyOf(client.rejectData, 3));
        assertEquals(0, b.connections());
    }

    @Test
    void aFullBacklogRejectsWithNoResourcesUntilARequestIsAnswered() {
        Recorder server = new Recorder();
        b.listen(SID, 2, server);
        List<Recorder> clients = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            Recorder r = new Recorder();
            clients.add(r);
            connect(a, r, 3);
        }
        wire.drain();
        assertEquals(2, server.requests.size());
        assertEquals(List.of(), clients.get(0).events);
        assertEquals(List.of(), clients.get(1).events);
        assertEquals(RejectReason.NO_RESOURCES, clients.get(2).rejected);
        CmConnection s = server.requests.get(0);
        s.accept(rep(s), wire.now);
        wire.drain();
        Recorder late = new Recorder();
        connect(a, late, 3);
        wire.drain();
        assertEquals(3, server.requests.size(), "one place freed by the accept");
        assertEquals(List.of(), late.events);
    }

    @Test
    void disconnectWithALostDreqEndsInTimewaitThenIdle() {
        Recorder server = new Recorder();
        b.listen(SID, 4, server);
        Recorder client = new Recorder();
        CmConnection c = connect(a, client, 3);
        wire.drain();
        CmConnection s = server.requests.get(0);
        s.accept(rep(s), wire.now);
        wire.drain();
        int[] dreqs = {0};
        wire.dropIf = f -> f.mad().attributeId() == CmMessages.DREQ && dreqs[0]++ == 0;
        c.disconnect(new byte[0], wire.now);
        wire.drain();
        assertEquals(CmState.DREQ_SENT, c.state());
        wire.advance(TIMEOUT);
        assertEquals(2, wire.sent(CmMessages.DREQ));
        assertEquals(CmState.TIMEWAIT, c.state());
        assertEquals(CmState.TIMEWAIT, s.state());
        assertEquals(List.of("REPLY", "ESTABLISHED", "DISCONNECTED"), client.events);
        assertEquals(List.of("REQUEST", "ESTABLISHED", "DISCONNECTED"), server.events);
        wire.advance(CmTimeouts.nanos(12));
        assertEquals(CmState.IDLE, c.state());
        assertEquals(CmState.IDLE, s.state());
        assertEquals("TIMEWAIT_EXIT", client.events.get(3));
        assertEquals(0, a.connections());
        assertEquals(0, b.connections());
    }

    @Test
    void dreqForAnUnknownConnectionGetsADrep() {
        b.deliver(io.jhca.cm.mad.ShortMessages.dreq(5, 0x77, 0x1234, 0x11, new byte[0]), A, wire.now);
        wire.drain();
        assertEquals(1, wire.sent(CmMessages.DREP));
        assertEquals(5, wire.log.get(0).mad().tid());
    }

    @Test
    void manyClientsConnectAtOnceUnderLoss() {
        long seed = System.nanoTime();
        System.out.println("CmStateMachineTest.manyClientsConnectAtOnceUnderLoss seed " + seed);
        wire = new MemoryWire(seed);
        a = wire.add(A, 0xA);
        b = wire.add(B, 0xB);
        ConnectionManager c3 = wire.add(C, 0xC);
        wire.loss = 0.2;
        Recorder server = new Recorder() {
            @Override
            public void onRequest(CmConnection c, ReqMessage req, Gid source) {
                super.onRequest(c, req, source);
                c.accept(rep(c), wire.now); // accept at once
            }
        };
        b.listen(SID, 64, server);
        List<CmConnection> clients = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            ConnectionManager from = i % 2 == 0 ? a : c3;
            CmConnection c = from.create(B, 0, new Recorder());
            from.connect(c, req(c, SID, 15), wire.now);
            clients.add(c);
        }
        for (int i = 0; i < 200; i++) {
            wire.advance(TIMEOUT);
        }
        for (CmConnection c : clients) {
            assertEquals(CmState.ESTABLISHED, c.state(), c + " (seed " + seed + ")");
        }
        assertEquals(20, server.requests.size(), "each connection is one request (retries are duplicates)");
        for (CmConnection s : server.requests) {
            assertEquals(CmState.ESTABLISHED, s.state(), s + " (seed " + seed + ")");
        }
        assertNotEquals(0, a.retries() + c3.retries() + b.retries(), "20% loss caused retries (seed " + seed + ")");
    }

    @Test
    void anAbandonedConnectionIsRejectedOrDisconnected() {
        Recorder server = new Recorder();
        b.listen(SID, 4, server);
        Recorder client = new Recorder();
        CmConnection c = connect(a, client, 3);
        wire.drain();
        server.requests.get(0).abandon(wire.now); // the passive owner went away before answering
        wire.drain();
        assertEquals(RejectReason.CONSUMER_DEFINED, client.rejected);
        assertEquals(CmState.IDLE, c.state());

        Recorder client2 = new Recorder();
        CmConnection c2 = connect(a, client2, 3);
        wire.drain();
        CmConnection s2 = server.requests.get(1);
        s2.accept(rep(s2), wire.now);
        wire.drain();
        c2.abandon(wire.now); // established: a DREQ, no more events for the owner
        wire.drain();
        assertEquals(CmState.TIMEWAIT, c2.state());
        assertEquals(CmState.TIMEWAIT, s2.state());
        assertEquals(List.of("REPLY", "ESTABLISHED"), client2.events);
        assertEquals("DISCONNECTED", server.events.get(server.events.size() - 1));

        Recorder client3 = new Recorder();
        CmConnection c3 = connect(a, client3, 3);
        c3.abandon(wire.now); // our own REQ withdrawn
        wire.drain();
        assertEquals(CmState.IDLE, c3.state());
        assertEquals(CmState.IDLE, server.requests.get(2).state(), "the REJ withdrew the request");
    }
}
