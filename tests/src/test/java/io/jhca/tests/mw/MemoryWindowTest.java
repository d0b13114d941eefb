package io.jhca.tests.mw;

import io.jhca.tests.harness.DevicePair;
import io.jhca.tests.harness.Harness;
import io.jhca.tests.harness.Payloads;
import io.jhca.tests.harness.Peer;
import io.jhca.tests.harness.PeerSpec;
import io.jhca.tests.harness.Wcs;
import io.jhca.verbs.Access;
import io.jhca.verbs.Context;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.MemoryWindow;
import io.jhca.verbs.MwBind;
import io.jhca.verbs.MwType;
import io.jhca.verbs.QpState;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendQueue;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WcFlags;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

import java.time.Duration;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Memory windows on every device pair (IBTA 10.6.7, Linux rxe's rxe_mw.c): side B owns the windows, side A reaches
 * B's memory only through their rkeys. A window grants exactly its span: the last byte works, one byte past it and one
 * byte before it are remote access errors (NAK 0x62: REM_ACCESS_ERR at A, A's QP in ERR, and B's QP in ERR too, as
 * rxe's responder moves to ERR after a class C error). A type 1 window is bound with bindMw and unbound by a bind of
 * length 0; a type 2 window by a BIND_MW WR, invalidated by LOCAL_INV or by A's SEND_WITH_INV; after each the old
 * rkey fails and a rebind with a new key byte works. Binds the device refuses complete with MW_BIND_ERR.
 *
 * <p>Each error kills the connection, so each scenario runs on a fresh one. Pairs whose side B offers no windows
 * skip, saying so.
 */
class MemoryWindowTest {
    private static final int WIN_OFF = 64 * 1024;
    private static final int WIN_LEN = 8192 + 100;
    /** A's scratch: WRITE sources and READ destinations. */
    private static final int A_SRC = 0;
    private static final int A_DST = 256 * 1024;
    private static final int B_MR_ACCESS = Access.mask(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ,
            Access.REMOTE_ATOMIC, Access.MW_BIND);
    private static final int RW = Access.mask(Access.REMOTE_WRITE, Access.REMOTE_READ);
    private static final Duration STATE_WAIT = Duration.ofSeconds(10);

    /** A connected pair; B's MR allows binding. */
    private static final class Link {
        final Harness h;
        final Peer a;
        final Peer b;
        long wrId = 100;

        Link(Harness h) {
            this.h = h;
            a = h.peerA(PeerSpec.rc());
            b = h.peerB(PeerSpec.rc().mrAccess(B_MR_ACCESS));
            h.connect(a, b);
        }

        long winAddr() {
            return b.addr(WIN_OFF);
        }

        MemoryWindow alloc(MwType type) {
            return h.track(b.pd().allocMw(type));
        }

        /** Binds a type 1 window over [off, off + len) of B's MR; waits for the bind's completion. */
        int bind1(MemoryWindow mw, long off, long len, int access) {
            long id = ++wrId;
            int rkey = b.qp().bindMw(mw, new MwBind().set(b.mr(), b.addr(off), len, access), id, SendFlags.SIGNALED);
            assertEquals(rkey, mw.rkey(), "the window's rkey after bindMw");
            Wcs.assertSuccess(h.await(b.sendCq(), "type 1 bind"), WcOpcode.BIND_MW, id, b.qpn(), "bind");
            return rkey;
        }

        /** Binds a type 2 window with the key byte after {@code prevRkey}'s; waits for the completion. */
        int bind2(MemoryWindow mw, int prevRkey, long off, long len, int access) {
            long id = ++wrId;
            int rkey = MemoryWindow.incRkey(prevRkey);
            b.post(new SendWr(0).wrId(id).opcode(WrOpcode.BIND_MW).sendFlags(SendFlags.SIGNALED)
                    .bindMw(mw, rkey, new MwBind().set(b.mr(), b.addr(off), len, access)));
            Wcs.assertSuccess(h.await(b.sendCq(), "type 2 bind"), WcOpcode.BIND_MW, id, b.qpn(), "bind WR");
            return rkey;
        }

        /** A WRITE of {@code len} bytes from A to {@code raddr} through {@code rkey}; returns A's completion. */
        WorkCompletion write(int rkey, long raddr, int len, long seed) {
            long id = ++wrId;
            Payloads.fill(a.buf(), A_SRC, len, seed);
            a.post(a.wr(id, WrOpcode.RDMA_WRITE, A_SRC, len).rdma(raddr, rkey));
            WorkCompletion wc = h.await(a.sendCq(), "WRITE of " + len + " at 0x" + Long.toHexString(raddr));
            assertEquals(id, wc.wrId());
            return wc;
        }

        WorkCompletion read(int rkey, long raddr, int len) {
            long id = ++wrId;
            a.post(a.wr(id, WrOpcode.RDMA_READ, A_DST, len).rdma(raddr, rkey));
            WorkCompletion wc = h.await(a.sendCq(), "READ of " + len + " at 0x" + Long.toHexString(raddr));
            assertEquals(id, wc.wrId());
            return wc;
        }

        /** WRITE then READ back through the window, checked at B and at A. */
        void writeAndReadBack(int rkey, long off, int len, long seed) {
            WorkCompletion w = write(rkey, b.addr(off), len, seed);
            Wcs.assertSuccess(w, WcOpcode.RDMA_WRITE, w.wrId(), a.qpn(), "WRITE through the window");
            Payloads.assertPayload(b.buf(), (int) off, len, seed, "B's memory after a WRITE through the window");
            Payloads.set(a.buf(), A_DST, len, (byte) 0);
            WorkCompletion r = read(rkey, b.addr(off), len);
            Wcs.assertSuccess(r, WcOpcode.RDMA_READ, r.wrId(), a.qpn(), "READ through the window");
            Payloads.assertPayload(a.buf(), A_DST, len, seed, "A's memory after a READ through the window");
        }

        /**
         * The access error of a refused rkey or span: REM_ACCESS_ERR at A and A's QP in ERR; B's QP in ERR too, seen
         * as verbs sees it: a receive posted now is flushed (and rxe's QP says ERR).
         */
        void assertRefused(WorkCompletion wc, String what) {
            Wcs.assertStatus(wc, WcStatus.REM_ACCESS_ERR, wc.wrId(), a.qpn(), what);
            assertEquals(QpState.ERR, a.qp().state(), "A's QP after " + what);
            long id = ++wrId;
            b.postRecv(id, 0, 8);
            Wcs.assertStatus(h.await(b.recvCq(), "B's receive after " + what), WcStatus.WR_FLUSH_ERR, id, b.qpn(),
                    "a receive B posted after " + what);
            if ("rxe".equals(b.ctx().device().provider())) {
                assertEquals(QpState.ERR, b.qp().state(), "B's QP after " + what);
            }
        }
    }

    private static Harness open(DevicePair pair, MwType type) {
        Harness h = Harness.open(pair).expectErrors();
        Context b = h.b();
        if (!b.queryDevice().supports(type)) {
            h.close();
            Assumptions.abort(b.name() + " does not offer " + type + " memory windows (device_cap_flags 0x"
                    + Long.toHexString(b.queryDevice().deviceCapFlags()) + ")");
        }
        return h;
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void type1WindowGrantsItsSpanToTheLastByte(DevicePair pair) {
        try (Harness h = open(pair, MwType.TYPE_1)) {
            Link l = new Link(h);
            MemoryWindow mw = l.alloc(MwType.TYPE_1);
            int initial = mw.rkey();
            int rkey = l.bind1(mw, WIN_OFF, WIN_LEN, RW);
            assertEquals(MemoryWindow.incRkey(initial), rkey, "ibv_bind_mw takes the next key byte");
            assertNotEquals(l.b.mr().rkey(), rkey, "the window's rkey is not the MR's");
            l.writeAndReadBack(rkey, WIN_OFF, WIN_LEN, 11);
            l.writeAndReadBack(rkey, WIN_OFF + WIN_LEN - 1, 1, 12);
            l.assertRefused(l.write(rkey, l.winAddr() + WIN_LEN, 1, 13), "a WRITE one byte past the window");
            Payloads.assertPayload(l.b.buf(), WIN_OFF + WIN_LEN - 1, 1, 12, "the window's last byte, untouched");
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void type1ReadOneBytePastOrBeforeIsRefused(DevicePair pair) {
        try (Harness h = open(pair, MwType.TYPE_1)) {
            Link l = new Link(h);
            MemoryWindow mw = l.alloc(MwType.TYPE_1);
            int rkey = l.bind1(mw, WIN_OFF, WIN_LEN, RW);
            l.assertRefused(l.read(rkey, l.winAddr() + 1, WIN_LEN), "a READ one byte past the window");
            Link m = new Link(h);
            MemoryWindow mw2 = m.alloc(MwType.TYPE_1);
            int rkey2 = m.bind1(mw2, WIN_OFF, WIN_LEN, RW);
            m.assertRefused(m.read(rkey2, m.winAddr() - 1, 1), "a READ of the byte before the window");
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void type1RebindMovesTheKeyAndUnbindRevokesIt(DevicePair pair) {
        try (Harness h = open(pair, MwType.TYPE_1)) {
            Link l = new Link(h);
            MemoryWindow mw = l.alloc(MwType.TYPE_1);
            int first = l.bind1(mw, WIN_OFF, WIN_LEN, RW);
            l.writeAndReadBack(first, WIN_OFF, 64, 21);
            int second = l.bind1(mw, WIN_OFF + WIN_LEN, 4096, RW);
            assertNotEquals(first, second, "a rebind changes the key byte");
            l.writeAndReadBack(second, WIN_OFF + WIN_LEN, 4096, 22);
            l.assertRefused(l.write(first, l.winAddr(), 64, 23), "a WRITE with the key before the rebind");

            Link m = new Link(h);
            MemoryWindow w2 = m.alloc(MwType.TYPE_1);
            int k = m.bind1(w2, WIN_OFF, WIN_LEN, RW);
            m.writeAndReadBack(k, WIN_OFF, 128, 24);
            int unbound = m.bind1(w2, 0, 0, 0);
            long id = ++m.wrId;
            assertThrows(VerbsException.class, () -> m.b.qp().bindMw(w2, new MwBind().set(null, 4096, 1, 0), id, 0),
                    "no MR with a length");
            assertEquals(0, m.b.mr().boundWindows(), "an unbound window holds no MR");
            m.assertRefused(m.write(unbound, m.winAddr(), 8, 25), "a WRITE through an unbound type 1 window");
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void type1WindowGrantsOnlyItsRights(DevicePair pair) {
        try (Harness h = open(pair, MwType.TYPE_1)) {
            Link l = new Link(h);
            MemoryWindow mw = l.alloc(MwType.TYPE_1);
            int rkey = l.bind1(mw, WIN_OFF, WIN_LEN, Access.mask(Access.REMOTE_READ));
            Payloads.fill(l.b.buf(), WIN_OFF, 256, 31);
            WorkCompletion r = l.read(rkey, l.winAddr(), 256);
            Wcs.assertSuccess(r, WcOpcode.RDMA_READ, r.wrId(), l.a.qpn(), "READ through a read-only window");
            Payloads.assertPayload(l.a.buf(), A_DST, 256, 31, "READ through a read-only window");
            l.assertRefused(l.write(rkey, l.winAddr(), 8, 32), "a WRITE through a read-only window");
            Payloads.assertPayload(l.b.buf(), WIN_OFF, 256, 31, "B's memory behind a read-only window");
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void type2LocalInvalidateRevokesTheKeyAndARebindWorks(DevicePair pair) {
        try (Harness h = open(pair, MwType.TYPE_2)) {
            Link l = new Link(h);
            MemoryWindow mw = l.alloc(MwType.TYPE_2);
            int rkey = l.bind2(mw, mw.rkey(), WIN_OFF, WIN_LEN, RW);
            l.writeAndReadBack(rkey, WIN_OFF, WIN_LEN, 41);
            l.writeAndReadBack(rkey, WIN_OFF + WIN_LEN - 8, 8, 42);
            if ("rxe".equals(h.b().device().provider())) {
                // rxe_dereg_mr refuses an MR with windows bound (mlx5 lets it go and the window grants nothing)
                assertEquals(1, l.b.mr().boundWindows());
                VerbsException busy = assertThrows(VerbsException.class, () -> l.b.mr().close());
                assertEquals(VerbsException.EBUSY, busy.errno(), busy.getMessage());
            }

            long id = ++l.wrId;
            l.b.post(new SendWr(0).wrId(id).opcode(WrOpcode.LOCAL_INV).sendFlags(SendFlags.SIGNALED).invalidateRkey(rkey));
            Wcs.assertSuccess(h.await(l.b.sendCq(), "LOCAL_INV"), WcOpcode.LOCAL_INV, id, l.b.qpn(), "LOCAL_INV");
            assertEquals(0, l.b.mr().boundWindows(), "an invalidated window holds no MR");

            int again = l.bind2(mw, rkey, WIN_OFF, 4096, RW);
            assertNotEquals(rkey, again);
            l.writeAndReadBack(again, WIN_OFF, 4096, 43);
            l.assertRefused(l.write(rkey, l.winAddr(), 8, 44), "a WRITE with the rkey LOCAL_INV invalidated");
        }
    }

    /**
     * Where the device lets an MR with a window bound be deregistered (mlx5; rxe refuses with EBUSY, above), the
     * window grants nothing afterwards: a WRITE through its rkey is a remote access error and B's memory stays as it
     * was.
     */
    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void type2WindowOverADeregisteredMrGrantsNothing(DevicePair pair) {
        try (Harness h = open(pair, MwType.TYPE_2)) {
            Assumptions.assumeFalse("rxe".equals(h.b().device().provider()),
                    "rxe refuses to deregister an MR with a window bound (EBUSY)");
            Link l = new Link(h);
            MemoryWindow mw = l.alloc(MwType.TYPE_2);
            int rkey = l.bind2(mw, mw.rkey(), WIN_OFF, WIN_LEN, RW);
            l.writeAndReadBack(rkey, WIN_OFF, 8, 61);
            l.b.mr().close();
            l.assertRefused(l.write(rkey, l.winAddr(), 8, 62), "a WRITE through a window whose MR is deregistered");
            Payloads.assertPayload(l.b.buf(), WIN_OFF, 8, 61, "B's memory behind the window after its MR went");
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void type2OneBytePastTheWindowIsRefused(DevicePair pair) {
        try (Harness h = open(pair, MwType.TYPE_2)) {
            Link l = new Link(h);
            MemoryWindow mw = l.alloc(MwType.TYPE_2);
            int rkey = l.bind2(mw, mw.rkey(), WIN_OFF, WIN_LEN, RW);
            l.writeAndReadBack(rkey, WIN_OFF + WIN_LEN - 1, 1, 51);
            l.assertRefused(l.write(rkey, l.winAddr() + WIN_LEN - 1, 2, 52), "a WRITE of the last byte and one past");
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void type2SendWithInvalidateRevokesTheKey(DevicePair pair) {
        try (Harness h = open(pair, MwType.TYPE_2)) {
            Assumptions.assumeTrue(h.a().queryDevice().supports(MwType.TYPE_2),
                    h.a().name() + " cannot send SEND_WITH_INV (no type 2 windows)");
            Link l = new Link(h);
            MemoryWindow mw = l.alloc(MwType.TYPE_2);
            int rkey = l.bind2(mw, mw.rkey(), WIN_OFF, WIN_LEN, RW);
            l.writeAndReadBack(rkey, WIN_OFF, 512, 61);

            l.b.postRecv(7, 0, 64);
            long id = ++l.wrId;
            Payloads.fill(l.a.buf(), A_SRC, 40, 62);
            l.a.post(l.a.wr(id, WrOpcode.SEND_WITH_INV, A_SRC, 40).invalidateRkey(rkey));
            Wcs.assertSuccess(h.await(l.a.sendCq(), "SEND_WITH_INV"), WcOpcode.SEND, id, l.a.qpn(), "SEND_WITH_INV");
            WorkCompletion recv = h.await(l.b.recvCq(), "receive of SEND_WITH_INV");
            Wcs.assertRecv(recv, WcOpcode.RECV, 7, l.b.qpn(), 40, null, "receive of SEND_WITH_INV");
            assertTrue((recv.wcFlags() & WcFlags.WITH_INV) != 0, "WITH_INV on " + recv);
            assertEquals(Integer.toHexString(rkey), Integer.toHexString(recv.invalidatedRkey()), "invalidated_rkey");
            Payloads.assertPayload(l.b.buf(), 0, 40, 62, "SEND_WITH_INV payload");
            assertEquals(0, l.b.mr().boundWindows(), "a window invalidated by the peer holds no MR");

            int again = l.bind2(mw, rkey, WIN_OFF, WIN_LEN, RW);
            l.writeAndReadBack(again, WIN_OFF + 8, 8, 63);
            l.assertRefused(l.write(rkey, l.winAddr(), 8, 64), "a WRITE with the rkey SEND_WITH_INV invalidated");
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void aType2WindowAnswersOnlyItsQpWhileType1AnswersAny(DevicePair pair) {
        try (Harness h = open(pair, MwType.TYPE_2)) {
            Link l = new Link(h);
            Peer a2 = h.peerA(PeerSpec.rc());
            Peer b2 = h.peerSharing(l.b, PeerSpec.rc());
            h.connect(a2, b2);
            MemoryWindow t2 = l.alloc(MwType.TYPE_2);
            int k2 = l.bind2(t2, t2.rkey(), WIN_OFF, 4096, RW);
            l.writeAndReadBack(k2, WIN_OFF, 4096, 91);
            if (h.b().queryDevice().supports(MwType.TYPE_1)) {
                MemoryWindow t1 = l.alloc(MwType.TYPE_1);
                int k1 = l.bind1(t1, WIN_OFF + 4096, 4096, RW);
                Payloads.fill(a2.buf(), A_SRC, 64, 92);
                a2.post(a2.wr(301, WrOpcode.RDMA_WRITE, A_SRC, 64).rdma(l.b.addr(WIN_OFF + 4096), k1));
                Wcs.assertSuccess(h.await(a2.sendCq(), "WRITE through a type 1 window on another QP"),
                        WcOpcode.RDMA_WRITE, 301, a2.qpn(), "type 1 window from another QP of its PD");
                Payloads.assertPayload(l.b.buf(), WIN_OFF + 4096, 64, 92, "type 1 window from another QP");
            }
            a2.post(a2.wr(302, WrOpcode.RDMA_WRITE, A_SRC, 64).rdma(l.winAddr(), k2));
            Wcs.assertStatus(h.await(a2.sendCq(), "WRITE through a type 2 window bound to another QP"),
                    WcStatus.REM_ACCESS_ERR, 302, a2.qpn(), "type 2 window from a QP it is not bound to");
            Payloads.assertPayload(l.b.buf(), WIN_OFF, 64, 91, "B's memory behind the type 2 window, untouched");
            l.writeAndReadBack(k2, WIN_OFF + 64, 64, 93);   // its own QP still gets through
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void builderBindsInvalidatesAndSendsWithInvalidate(DevicePair pair) {
        try (Harness h = open(pair, MwType.TYPE_2)) {
            Assumptions.assumeTrue(h.a().queryDevice().supports(MwType.TYPE_2),
                    h.a().name() + " cannot send SEND_WITH_INV (no type 2 windows)");
            Link l = new Link(h);
            MemoryWindow mw = l.alloc(MwType.TYPE_2);
            int k1 = MemoryWindow.incRkey(mw.rkey());
            SendQueue bsq = l.b.qp().sendQueue();
            bsq.start();
            bsq.wrId(201).flags(SendFlags.SIGNALED).bindMw(mw, k1, new MwBind(l.b.mr(), l.winAddr(), WIN_LEN,
                    Access.REMOTE_WRITE, Access.REMOTE_READ));
            assertEquals(0, bsq.complete());
            Wcs.assertSuccess(h.await(l.b.sendCq(), "builder bind"), WcOpcode.BIND_MW, 201, l.b.qpn(), "builder bind");
            l.writeAndReadBack(k1, WIN_OFF, 300, 81);

            bsq.start();
            bsq.wrId(202).flags(SendFlags.SIGNALED).localInv(k1);
            assertEquals(0, bsq.complete());
            Wcs.assertSuccess(h.await(l.b.sendCq(), "builder LOCAL_INV"), WcOpcode.LOCAL_INV, 202, l.b.qpn(), "inv");

            int k2 = MemoryWindow.incRkey(k1);
            bsq.start();
            bsq.wrId(203).flags(SendFlags.SIGNALED).bindMw(mw, k2, new MwBind(l.b.mr(), l.winAddr(), 64,
                    Access.REMOTE_WRITE));
            assertEquals(0, bsq.complete());
            Wcs.assertSuccess(h.await(l.b.sendCq(), "builder rebind"), WcOpcode.BIND_MW, 203, l.b.qpn(), "rebind");
            WorkCompletion w = l.write(k2, l.winAddr() + 56, 8, 82);
            Wcs.assertSuccess(w, WcOpcode.RDMA_WRITE, w.wrId(), l.a.qpn(), "WRITE of the rebound window's last 8 B");
            Payloads.assertPayload(l.b.buf(), WIN_OFF + 56, 8, 82, "last 8 bytes of the rebound window");

            l.b.postRecv(9, 0, 64);
            Payloads.fill(l.a.buf(), A_SRC, 16, 83);
            SendQueue asq = l.a.qp().sendQueue();
            asq.start();
            asq.wrId(204).flags(SendFlags.SIGNALED).sendInv(k2).sge(l.a.mr(), A_SRC, 16);
            assertEquals(0, asq.complete());
            Wcs.assertSuccess(h.await(l.a.sendCq(), "builder SEND_WITH_INV"), WcOpcode.SEND, 204, l.a.qpn(), "send inv");
            WorkCompletion recv = h.await(l.b.recvCq(), "receive of the builder's SEND_WITH_INV");
            Wcs.assertRecv(recv, WcOpcode.RECV, 9, l.b.qpn(), 16, null, "receive of SEND_WITH_INV");
            assertEquals(Integer.toHexString(k2), Integer.toHexString(recv.invalidatedRkey()), "invalidated_rkey");

            bsq.start();
            assertThrows(VerbsException.class, () -> bsq.wrId(205).localInv(k2).sge(l.b.mr(), 0, 8),
                    "LOCAL_INV takes no SGEs");
            l.assertRefused(l.write(k2, l.winAddr(), 8, 84), "a WRITE with the key the peer invalidated");
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void bindsAgainstTheMrRulesAreRefusedAtPost(DevicePair pair) {
        try (Harness h = open(pair, MwType.TYPE_1)) {
            Link l = new Link(h);
            MemoryRegion noBind = h.track(l.b.pd().register(l.b.mem(), WIN_OFF, WIN_LEN, Access.mask(Access.LOCAL_WRITE,
                    Access.REMOTE_WRITE, Access.REMOTE_READ)));
            MemoryRegion noLocalWrite = h.track(l.b.pd().register(l.b.mem(), WIN_OFF, WIN_LEN,
                    Access.mask(Access.REMOTE_READ, Access.MW_BIND)));
            MemoryRegion edge = h.track(l.b.pd().register(l.b.mem(), WIN_OFF, WIN_LEN, B_MR_ACCESS));
            MemoryWindow mw = l.alloc(MwType.TYPE_1);
            int before = mw.rkey();
            Object[][] bad = {
                {"an MR without MW_BIND", new MwBind().set(noBind, noBind.address(), 64, RW)},
                {"a writable window on an MR without LOCAL_WRITE", new MwBind().set(noLocalWrite, noLocalWrite.address(),
                        64, RW)},
                {"an atomic window on an MR without LOCAL_WRITE", new MwBind().set(noLocalWrite,
                        noLocalWrite.address(), 64, Access.mask(Access.REMOTE_ATOMIC))},
                {"a span one byte past the MR", new MwBind().set(edge, edge.address() + 1, WIN_LEN, RW)},
                {"a span one byte before the MR", new MwBind().set(edge, edge.address() - 1, 2, RW)},
            };
            for (Object[] b : bad) {
                VerbsException e = assertThrows(VerbsException.class,
                        () -> l.b.qp().bindMw(mw, (MwBind) b[1], 9, SendFlags.SIGNALED), "bind to " + b[0]);
                assertEquals(VerbsException.EINVAL, e.errno(), b[0] + ": " + e.getMessage());
                assertEquals(before, mw.rkey(), "a refused bind leaves the key as it was");
            }
            assertEquals(QpState.RTS, l.b.qp().state(), "nothing was posted");
            // the edges themselves are fine: the whole MR, read-only on an MR without local write
            int k = l.bind1(mw, WIN_OFF, WIN_LEN, RW);
            l.writeAndReadBack(k, WIN_OFF, WIN_LEN, 71);
            long id = ++l.wrId;
            l.b.qp().bindMw(h.track(l.b.pd().allocMw(MwType.TYPE_1)), new MwBind().set(noLocalWrite,
                    noLocalWrite.address(), WIN_LEN, Access.mask(Access.REMOTE_READ)), id, SendFlags.SIGNALED);
            Wcs.assertSuccess(h.await(l.b.sendCq(), "read-only bind"), WcOpcode.BIND_MW, id, l.b.qpn(), "bind");
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void bindingABoundType2WindowCompletesWithMwBindErr(DevicePair pair) {
        try (Harness h = open(pair, MwType.TYPE_2)) {
            Link l = new Link(h);
            MemoryWindow mw = l.alloc(MwType.TYPE_2);
            int rkey = l.bind2(mw, mw.rkey(), WIN_OFF, WIN_LEN, RW);
            long id = ++l.wrId;
            l.b.post(new SendWr(0).wrId(id).opcode(WrOpcode.BIND_MW).sendFlags(SendFlags.SIGNALED)
                    .bindMw(mw, MemoryWindow.incRkey(rkey), new MwBind().set(l.b.mr(), l.winAddr(), 64, RW)));
            WorkCompletion wc = h.await(l.b.sendCq(), "second bind of a bound type 2 window");
            Wcs.assertStatus(wc, WcStatus.MW_BIND_ERR, id, l.b.qpn(), "bind of a window not in the free state");
            h.awaitCondition(() -> l.b.qp().state() == QpState.ERR, "B's QP in ERR after MW_BIND_ERR", STATE_WAIT);

            Link m = new Link(h);
            long id2 = ++m.wrId;
            m.b.post(new SendWr(0).wrId(id2).opcode(WrOpcode.LOCAL_INV).sendFlags(SendFlags.SIGNALED)
                    .invalidateRkey(m.b.mr().rkey()));
            WorkCompletion inv = h.await(m.b.sendCq(), "LOCAL_INV of an MR's rkey");
            assertNotEquals(WcStatus.SUCCESS, inv.status(), "an MR's rkey is not a window's: " + inv);
            h.awaitCondition(() -> m.b.qp().state() == QpState.ERR, "B's QP in ERR after a refused LOCAL_INV", STATE_WAIT);
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void sendWithInvalidateOfAnRkeyThatIsNoWindowFailsAtTheReceiver(DevicePair pair) {
        try (Harness h = open(pair, MwType.TYPE_2)) {
            Assumptions.assumeTrue(h.a().queryDevice().supports(MwType.TYPE_2),
                    h.a().name() + " cannot send SEND_WITH_INV (no type 2 windows)");
            Link l = new Link(h);
            l.b.postRecv(5, 0, 64);
            Payloads.fill(l.a.buf(), A_SRC, 16, 101);
            l.a.post(l.a.wr(401, WrOpcode.SEND_WITH_INV, A_SRC, 16).invalidateRkey(l.b.mr().rkey()));
            // rxe_resp.c class J: the message is taken and acknowledged, the receive fails, the responder goes to ERR
            Wcs.assertSuccess(h.await(l.a.sendCq(), "SEND_WITH_INV of an MR's rkey"), WcOpcode.SEND, 401, l.a.qpn(),
                    "the sender of a SEND_WITH_INV the receiver cannot honour");
            Wcs.assertStatus(h.await(l.b.recvCq(), "receive of a SEND_WITH_INV of an MR's rkey"),
                    WcStatus.REM_INV_REQ_ERR, 5, l.b.qpn(), "receive of a SEND_WITH_INV naming no window");
            l.b.postRecv(6, 0, 8);
            Wcs.assertStatus(h.await(l.b.recvCq(), "receive posted after the failed invalidation"),
                    WcStatus.WR_FLUSH_ERR, 6, l.b.qpn(), "a receive posted after the failed invalidation");
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void postTimeRefusals(DevicePair pair) {
        try (Harness h = open(pair, MwType.TYPE_1)) {
            Link l = new Link(h);
            MemoryWindow t1 = l.alloc(MwType.TYPE_1);
            MwBind ok = new MwBind().set(l.b.mr(), l.winAddr(), 64, RW);
            if (h.b().queryDevice().supports(MwType.TYPE_2)) {
                MemoryWindow t2 = l.alloc(MwType.TYPE_2);
                VerbsException e = assertThrows(VerbsException.class, () -> l.b.qp().bindMw(t2, ok, 1, 0));
                assertEquals(VerbsException.EINVAL, e.errno(), e.getMessage());
                VerbsException key = assertThrows(VerbsException.class, () -> l.b.qp().postSend(new SendWr(0)
                        .opcode(WrOpcode.BIND_MW).bindMw(t2, t2.rkey() + 0x100, ok)));
                assertEquals(VerbsException.EINVAL, key.errno(), key.getMessage());
            }
            MemoryRegion otherPd = h.track(h.track(h.b().allocatePd()).register(l.b.mem(), 0, 4096, B_MR_ACCESS));
            VerbsException perm = assertThrows(VerbsException.class,
                    () -> l.b.qp().bindMw(t1, new MwBind().set(otherPd, otherPd.address(), 64, RW), 1, 0));
            assertEquals(VerbsException.EPERM, perm.errno(), perm.getMessage());
            VerbsException bits = assertThrows(VerbsException.class,
                    () -> l.b.qp().bindMw(t1, new MwBind().set(l.b.mr(), l.winAddr(), 64, 1 << 5), 1, 0));
            assertEquals(VerbsException.EINVAL, bits.errno(), bits.getMessage());
            VerbsException pdBusy = assertThrows(VerbsException.class, () -> l.b.pd().close());
            assertEquals(VerbsException.EBUSY, pdBusy.errno(), pdBusy.getMessage());
            assertTrue(pdBusy.getMessage().contains("MW"), pdBusy.getMessage());
        }
    }
}
