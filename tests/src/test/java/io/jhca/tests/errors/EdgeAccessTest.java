package io.jhca.tests.errors;

import io.jhca.tests.harness.DevicePair;
import io.jhca.tests.harness.Harness;
import io.jhca.tests.harness.Payloads;
import io.jhca.tests.harness.Peer;
import io.jhca.tests.harness.PeerSpec;
import io.jhca.tests.harness.RcParams;
import io.jhca.tests.harness.Wcs;
import io.jhca.verbs.Access;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

import java.time.Duration;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Memory access at the exact edges of a memory region, on every device pair: the last byte, one byte past it, the
 * whole region from offset 0, length 0; for remote access (WRITE, READ, both atomics, checked by the responder
 * against the rkey's MR) and for local SGEs (checked against the lkey's MR); the keys of a deregistered MR; and MR
 * and QP access rights one at a time. An off-by-one in a bounds check passes every test that stays a few bytes
 * inside or outside a region; these tests do not.
 *
 * <p>The region under test is {@value #MR_LEN} bytes (a multiple of 8 for the last atomic word, not of a page) at
 * {@value #MR_OFF} of each side's buffer, with guard bytes on both sides that no access, failed or not, may touch.
 * Expected statuses are those of verbs and Linux rxe: a remote span past the MR is a remote access error
 * (NAK 0x62, REM_ACCESS_ERR), a local SGE past its MR is LOC_PROT_ERR, a receive SGE past its MR is LOC_PROT_ERR at
 * the receiver and REM_OP_ERR at the sender (NAK 0x63), a missing QP access right is an invalid request (NAK 0x61,
 * REM_INV_REQ_ERR, rxe check_op_valid); a zero-length READ or WRITE checks no key at all (IBTA C9-88).
 */
class EdgeAccessTest {
    private static final int MR_OFF = 8192;
    private static final int MR_LEN = 4000;
    private static final int GUARD = 256;
    private static final byte GUARD_BYTE = (byte) 0xA5;
    /** A's scratch areas in its whole-buffer MR: sources, READ destinations, atomic results. */
    private static final int A_SRC = 0;
    private static final int A_DST = 64 * 1024;
    private static final int A_ATOMIC = 128 * 1024;

    private static final int ALL = Access.mask(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ,
            Access.REMOTE_ATOMIC);
    private static final WrOpcode[] REMOTE_OPS = {WrOpcode.RDMA_WRITE, WrOpcode.RDMA_READ,
        WrOpcode.ATOMIC_FETCH_AND_ADD, WrOpcode.ATOMIC_CMP_AND_SWP};

    /** A connected pair, each side with an extra MR over [MR_OFF, MR_OFF + MR_LEN) of its buffer, guards around both. */
    private static final class Edges {
        final Harness h;
        final Peer a;
        final Peer b;
        final MemoryRegion aEdge;
        final MemoryRegion bEdge;

        Edges(Harness h, int aAccess, int bAccess, RcParams p) {
            this.h = h;
            a = h.peerA(PeerSpec.rc());
            b = h.peerB(PeerSpec.rc());
            h.connect(a, b, p);
            aEdge = h.track(a.pd().register(a.mem(), MR_OFF, MR_LEN, aAccess));
            bEdge = h.track(b.pd().register(b.mem(), MR_OFF, MR_LEN, bAccess));
            for (UnsafeBuffer buf : new UnsafeBuffer[] {a.buf(), b.buf()}) {
                Payloads.set(buf, MR_OFF - GUARD, GUARD, GUARD_BYTE);
                Payloads.set(buf, MR_OFF + MR_LEN, GUARD, GUARD_BYTE);
            }
        }

        Edges(Harness h) {
            this(h, ALL, ALL, RcParams.defaults());
        }

        /** A signaled WR of {@code op} from A at {@code off} of B's edge MR; local side A's scratch in its big MR. */
        SendWr remote(long wrId, WrOpcode op, long off, int len) {
            return remote(wrId, op, bEdge.address() + off, bEdge.rkey(), len);
        }

        SendWr remote(long wrId, WrOpcode op, long va, int rkey, int len) {
            SendWr wr = new SendWr().wrId(wrId).opcode(op).sendFlags(SendFlags.SIGNALED);
            switch (op) {
                case RDMA_WRITE -> wr.sge(a.mr(), A_SRC, len).rdma(va, rkey);
                case RDMA_READ -> wr.sge(a.mr(), A_DST, len).rdma(va, rkey);
                case ATOMIC_FETCH_AND_ADD -> wr.sge(a.mr(), A_ATOMIC, 8).atomic(va, rkey, 5, 0);
                default -> wr.sge(a.mr(), A_ATOMIC, 8).atomic(va, rkey, 0x1111, 0x2222);
            }
            if (len == 0) {
                wr.numSge(0);
            }
            return wr;
        }

        /** A signaled WR of {@code op} from A whose one SGE is {@code [off, off + len)} of A's edge MR. */
        SendWr local(long wrId, WrOpcode op, long off, int len) {
            SendWr wr = new SendWr().wrId(wrId).opcode(op).sendFlags(SendFlags.SIGNALED).sge(aEdge, off, len);
            if (op.isAtomic()) {
                return wr.atomic(b.addr(0), b.mr().rkey(), 1, 0);
            }
            return op == WrOpcode.SEND ? wr : wr.rdma(b.addr(A_SRC), b.mr().rkey());
        }

        WorkCompletion run(SendWr wr, String what) {
            a.post(wr);
            return h.await(a.sendCq(), what);
        }

        void succeeds(SendWr wr, String what) {
            Wcs.assertSuccess(run(wr, what), wr.opcode().completionOpcode(), wr.wrId(), a.qpn(), what);
        }

        /** Posts {@code wr} on this fresh pair: {@code status} at A, the QP in ERR and the rest flushed, guards intact. */
        void fails(SendWr wr, WcStatus status, String what) {
            Wcs.assertStatus(run(wr, what), status, wr.wrId(), a.qpn(), what);
            ErrorPathTest.assertFlushesAfterError(h, a);
            guardsIntact(what);
        }

        void guardsIntact(String what) {
            for (Peer p : new Peer[] {a, b}) {
                Payloads.assertFilled(p.buf(), MR_OFF - GUARD, GUARD, GUARD_BYTE, "guard before " + p + "'s edge MR after " + what);
                Payloads.assertFilled(p.buf(), MR_OFF + MR_LEN, GUARD, GUARD_BYTE, "guard after " + p + "'s edge MR after " + what);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void remoteAccessAtTheEdgesSucceeds(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            Edges e = new Edges(h);
            UnsafeBuffer ab = e.a.buf();
            UnsafeBuffer bb = e.b.buf();
            Payloads.fill(ab, A_SRC, MR_LEN, 11);
            e.succeeds(e.remote(1, WrOpcode.RDMA_WRITE, MR_LEN - 1, 1), "WRITE of the last byte");
            assertEquals(ab.getByte(A_SRC), bb.getByte(MR_OFF + MR_LEN - 1), "the last byte written");
            e.succeeds(e.remote(2, WrOpcode.RDMA_WRITE, 0, MR_LEN), "WRITE of the whole MR from offset 0");
            Payloads.assertPayload(bb, MR_OFF, MR_LEN, 11, "the whole MR written");
            e.succeeds(e.remote(3, WrOpcode.RDMA_WRITE, 0, 0), "WRITE of 0 bytes at offset 0");
            e.succeeds(e.remote(4, WrOpcode.RDMA_WRITE, MR_LEN, 0), "WRITE of 0 bytes one past the end (C9-88: no check)");

            Payloads.set(ab, A_DST, MR_LEN + 16, (byte) 0);
            e.succeeds(e.remote(5, WrOpcode.RDMA_READ, MR_LEN - 1, 1), "READ of the last byte");
            assertEquals(bb.getByte(MR_OFF + MR_LEN - 1), ab.getByte(A_DST), "the last byte read");
            assertEquals(0, ab.getByte(A_DST + 1), "READ of 1 byte wrote 1 byte");
            WorkCompletion wc = e.run(e.remote(6, WrOpcode.RDMA_READ, 0, MR_LEN), "READ of the whole MR from offset 0");
            Wcs.assertSuccess(wc, WcOpcode.RDMA_READ, 6, e.a.qpn(), "READ of the whole MR");
            assertEquals(MR_LEN, wc.byteLen(), "byte_len of the READ of the whole MR: " + wc);
            Payloads.assertPayload(ab, A_DST, MR_LEN, 11, "the whole MR read");
            assertEquals(0, ab.getByte(A_DST + MR_LEN), "READ of the whole MR wrote no more");
            e.succeeds(e.remote(7, WrOpcode.RDMA_READ, 0, 0), "READ of 0 bytes at offset 0");
            e.succeeds(e.remote(8, WrOpcode.RDMA_READ, MR_LEN, 0), "READ of 0 bytes one past the end (C9-88: no check)");

            for (long off : new long[] {0, MR_LEN - 8}) {
                String at = " of the word at " + off + " of " + MR_LEN;
                bb.putLong(MR_OFF + (int) off, 1000);
                e.succeeds(e.remote(9, WrOpcode.ATOMIC_FETCH_AND_ADD, off, 8), "FETCH_ADD" + at);
                assertEquals(1000, ab.getLong(A_ATOMIC), "FETCH_ADD" + at + " returns the old value");
                assertEquals(1005, bb.getLong(MR_OFF + (int) off), "FETCH_ADD" + at + " adds");
                bb.putLong(MR_OFF + (int) off, 0x1111);
                e.succeeds(e.remote(10, WrOpcode.ATOMIC_CMP_AND_SWP, off, 8), "CMP_SWP" + at);
                assertEquals(0x1111, ab.getLong(A_ATOMIC), "CMP_SWP" + at + " returns the old value");
                assertEquals(0x2222, bb.getLong(MR_OFF + (int) off), "CMP_SWP" + at + " swaps");
            }
            e.guardsIntact("the accesses at the edges");
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void remoteAccessPastTheEdgesFails(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            h.expectErrors();
            for (WrOpcode op : REMOTE_OPS) {
                if (op.isAtomic()) {
                    // an aligned word starting right at the end; one ending past it would be misaligned (refused below)
                    pastEdge(h, op, MR_LEN, 8, "the word just past the end");
                    pastEdge(h, op, -8, 8, "the word just before the start");
                } else {
                    pastEdge(h, op, MR_LEN - 1, 2, "the last byte and one past it");
                    pastEdge(h, op, MR_LEN, 1, "the byte just past the end");
                    pastEdge(h, op, 0, MR_LEN + 1, "the whole MR and one byte more");
                    pastEdge(h, op, -1, 2, "the byte before the start and the first");
                }
                // the rkey of a deregistered MR (at an address the MR covered)
                Edges e = new Edges(h);
                MemoryRegion gone = e.b.pd().register(e.b.mem(), MR_OFF, MR_LEN, ALL);
                long va = gone.address();
                int rkey = gone.rkey();
                gone.close();
                e.fails(e.remote(1, op, va, rkey, 8), WcStatus.REM_ACCESS_ERR, op + " with the rkey of a deregistered MR");
            }
            // verbs: an atomic needs an 8-byte aligned remote address and one 8-byte SGE; refused at post, nothing is sent
            Edges e = new Edges(h);
            for (WrOpcode op : new WrOpcode[] {WrOpcode.ATOMIC_FETCH_AND_ADD, WrOpcode.ATOMIC_CMP_AND_SWP}) {
                for (long off : new long[] {MR_LEN - 4, MR_LEN - 9, 1}) {
                    SendWr wr = e.remote(1, op, off, 8);
                    VerbsException x = assertThrows(VerbsException.class, () -> e.a.qp().postSend(wr),
                            op + " at the misaligned offset " + off);
                    assertEquals(VerbsException.EINVAL, x.errno(), x.getMessage());
                }
                // ... and exactly 8 bytes: a result SGE of 0, 4 or 16 bytes is refused too
                for (int len : new int[] {0, 4, 16}) {
                    SendWr wr = e.remote(1, op, 0, 8);
                    wr.sge(0).set(e.a.mr(), A_ATOMIC, len);
                    VerbsException x = assertThrows(VerbsException.class, () -> e.a.qp().postSend(wr),
                            op + " with a " + len + "-byte SGE");
                    assertEquals(VerbsException.EINVAL, x.errno(), x.getMessage());
                }
            }
            h.assertNoCompletion(e.a.sendCq(), Duration.ofMillis(10), "refused atomics complete nothing");
            e.succeeds(e.remote(2, WrOpcode.ATOMIC_FETCH_AND_ADD, 0, 8), "an aligned atomic after the refusals");
        }
    }

    private static void pastEdge(Harness h, WrOpcode op, long off, int len, String where) {
        Edges e = new Edges(h);
        long before = e.b.buf().getLong(MR_OFF + MR_LEN - 8);
        e.fails(e.remote(1, op, off, len), WcStatus.REM_ACCESS_ERR, op + " of " + where + " of a " + MR_LEN + "-byte MR");
        assertEquals(before, e.b.buf().getLong(MR_OFF + MR_LEN - 8), op + " of " + where + ": the MR's last word untouched");
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void localSgesAtTheEdgesSucceed(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            Edges e = new Edges(h);
            UnsafeBuffer ab = e.a.buf();
            UnsafeBuffer bb = e.b.buf();
            Payloads.fill(ab, MR_OFF, MR_LEN, 21);
            Payloads.fill(bb, A_SRC, MR_LEN, 22);
            e.succeeds(e.local(1, WrOpcode.RDMA_WRITE, MR_LEN - 1, 1), "WRITE from the last byte of the local MR");
            assertEquals(ab.getByte(MR_OFF + MR_LEN - 1), bb.getByte(A_SRC), "the byte written from the local MR's last byte");
            e.succeeds(e.local(2, WrOpcode.RDMA_WRITE, 0, MR_LEN), "WRITE from the whole local MR");
            Payloads.assertPayload(bb, A_SRC, MR_LEN, 21, "the whole local MR written");
            e.succeeds(e.local(3, WrOpcode.RDMA_WRITE, MR_LEN, 0), "WRITE from a 0-byte SGE one past the local MR's end");

            Payloads.fill(bb, A_SRC, MR_LEN, 23);
            Payloads.set(ab, MR_OFF, MR_LEN, (byte) 0);
            e.succeeds(e.local(4, WrOpcode.RDMA_READ, MR_LEN - 1, 1), "READ into the last byte of the local MR");
            assertEquals(bb.getByte(A_SRC), ab.getByte(MR_OFF + MR_LEN - 1), "the byte read into the local MR's last byte");
            e.succeeds(e.local(5, WrOpcode.RDMA_READ, 0, MR_LEN), "READ into the whole local MR");
            Payloads.assertPayload(ab, MR_OFF, MR_LEN, 23, "the whole local MR read into");

            e.b.buf().putLong(0, 77);
            e.succeeds(e.local(6, WrOpcode.ATOMIC_FETCH_AND_ADD, MR_LEN - 8, 8), "FETCH_ADD into the last word of the local MR");
            assertEquals(77, ab.getLong(MR_OFF + MR_LEN - 8), "the atomic's result in the local MR's last word");

            // SEND from the local edge into a receive SGE at the remote edge, and the whole MR into the whole MR
            Payloads.fill(ab, MR_OFF, MR_LEN, 24);
            recvInto(e, 7, MR_LEN - 1, 1);
            e.succeeds(e.local(8, WrOpcode.SEND, MR_LEN - 1, 1), "SEND of the last byte");
            Wcs.assertRecv(h.await(e.b.recvCq(), "receive into the last byte"), WcOpcode.RECV, 7, e.b.qpn(), 1, null,
                    "receive into the last byte of the MR");
            assertEquals(ab.getByte(MR_OFF + MR_LEN - 1), bb.getByte(MR_OFF + MR_LEN - 1), "the byte received into the last byte");
            recvInto(e, 9, 0, MR_LEN);
            e.succeeds(e.local(10, WrOpcode.SEND, 0, MR_LEN), "SEND of the whole MR");
            Wcs.assertRecv(h.await(e.b.recvCq(), "receive into the whole MR"), WcOpcode.RECV, 9, e.b.qpn(), MR_LEN, null,
                    "receive into the whole MR");
            Payloads.assertPayload(bb, MR_OFF, MR_LEN, 24, "the whole MR received");
            e.guardsIntact("local SGEs at the edges");
        }
    }

    private static void recvInto(Edges e, long wrId, long off, int len) {
        assertEquals(1, e.b.qp().postRecv(new RecvWr(1).wrId(wrId).sge(e.bEdge, off, len)), "receive " + wrId + " posted");
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void localSgesPastTheEdgesFail(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            h.expectErrors();
            for (WrOpcode op : new WrOpcode[] {WrOpcode.RDMA_WRITE, WrOpcode.RDMA_READ, WrOpcode.SEND}) {
                localPast(h, op, MR_LEN - 1, 2, "the last byte and one past it");
                localPast(h, op, MR_LEN, 1, "the byte just past the end");
                localPast(h, op, 0, MR_LEN + 1, "the whole MR and one byte more");
                localPast(h, op, -1, 2, "the byte before the start and the first");
            }
            localPast(h, WrOpcode.ATOMIC_FETCH_AND_ADD, MR_LEN - 4, 8, "a result word running 4 bytes past the end");
            localPast(h, WrOpcode.ATOMIC_CMP_AND_SWP, MR_LEN, 8, "a result word just past the end");
            for (WrOpcode op : new WrOpcode[] {WrOpcode.RDMA_WRITE, WrOpcode.RDMA_READ}) {
                Edges e = new Edges(h);
                MemoryRegion gone = e.a.pd().register(e.a.mem(), MR_OFF, MR_LEN, ALL);
                SendWr wr = e.remote(1, op, e.b.addr(0), e.b.mr().rkey(), 64);
                wr.sge(0).set(gone, 0, 64);
                gone.close();
                e.fails(wr, WcStatus.LOC_PROT_ERR, op + " with the lkey of a deregistered MR");
            }
            // a receive SGE past its MR: LOC_PROT_ERR at the receiver, NAK remote operational error at the sender
            for (long[] span : new long[][] {{MR_LEN - 1, 2}, {MR_LEN, 1}}) {
                Edges e = new Edges(h);
                recvInto(e, 5, span[0], (int) span[1]);
                String what = "a " + span[1] + "-byte receive SGE at " + span[0] + " of a " + MR_LEN + "-byte MR";
                e.a.post(e.local(6, WrOpcode.SEND, 0, (int) span[1]));
                Wcs.assertStatus(h.await(e.b.recvCq(), what), WcStatus.LOC_PROT_ERR, 5, e.b.qpn(), what);
                Wcs.assertStatus(h.await(e.a.sendCq(), "SEND into " + what), WcStatus.REM_OP_ERR, 6, e.a.qpn(), "SEND into " + what);
                e.guardsIntact(what);
            }
        }
    }

    private static void localPast(Harness h, WrOpcode op, long off, int len, String where) {
        Edges e = new Edges(h);
        if (op == WrOpcode.SEND) {
            assertEquals(1, e.b.qp().postRecv(new RecvWr(1).wrId(99).sge(e.b.mr(), 0, MR_LEN + 8)), "receive posted");
        }
        e.fails(e.local(1, op, off, len), WcStatus.LOC_PROT_ERR, op + " with a local SGE of " + where + " of a "
                + MR_LEN + "-byte MR");
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void accessRightsOneAtATime(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            h.expectErrors();
            int lw = Access.LOCAL_WRITE.bit();
            // MR rights: verbs requires LOCAL_WRITE with REMOTE_WRITE and REMOTE_ATOMIC
            int[] mrRights = {lw, lw | Access.REMOTE_WRITE.bit(), Access.REMOTE_READ.bit(), lw | Access.REMOTE_ATOMIC.bit()};
            for (int rights : mrRights) {
                for (WrOpcode op : REMOTE_OPS) {
                    Edges e = new Edges(h, ALL, rights, RcParams.defaults());
                    String what = op + " on an MR with " + Access.describe(rights);
                    SendWr wr = e.remote(1, op, 0, 8);
                    if ((rights & needs(op)) != 0) {
                        e.succeeds(wr, what);
                    } else {
                        e.fails(wr, WcStatus.REM_ACCESS_ERR, what);
                    }
                }
            }
            // QP access flags, one at a time (the MR allows everything)
            int[] qpRights = {0, Access.REMOTE_WRITE.bit(), Access.REMOTE_READ.bit(), Access.REMOTE_ATOMIC.bit()};
            for (int rights : qpRights) {
                for (WrOpcode op : REMOTE_OPS) {
                    Edges e = new Edges(h, ALL, ALL, RcParams.defaults().qpAccess(rights));
                    String what = op + " to a QP with access " + Access.describe(rights);
                    SendWr wr = e.remote(1, op, 0, 8);
                    if ((rights & needs(op)) != 0) {
                        e.succeeds(wr, what);
                    } else {
                        e.fails(wr, WcStatus.REM_INV_REQ_ERR, what);
                    }
                }
            }
            // a local MR without LOCAL_WRITE: a fine source, never a destination
            int readOnly = Access.REMOTE_READ.bit();
            Edges src = new Edges(h, readOnly, ALL, RcParams.defaults());
            src.succeeds(src.local(1, WrOpcode.RDMA_WRITE, 0, 64), "WRITE from an MR without LOCAL_WRITE");
            for (WrOpcode op : new WrOpcode[] {WrOpcode.RDMA_READ, WrOpcode.ATOMIC_FETCH_AND_ADD}) {
                Edges e = new Edges(h, readOnly, ALL, RcParams.defaults());
                e.fails(e.local(1, op, 0, 8), WcStatus.LOC_PROT_ERR, op + " into an MR without LOCAL_WRITE");
            }
            Edges e = new Edges(h, ALL, readOnly, RcParams.defaults());
            recvInto(e, 5, 0, 64);
            e.a.post(e.local(6, WrOpcode.SEND, 0, 64));
            Wcs.assertStatus(h.await(e.b.recvCq(), "receive into an MR without LOCAL_WRITE"), WcStatus.LOC_PROT_ERR, 5,
                    e.b.qpn(), "receive into an MR without LOCAL_WRITE");
            Wcs.assertStatus(h.await(e.a.sendCq(), "SEND into it"), WcStatus.REM_OP_ERR, 6, e.a.qpn(),
                    "SEND into a receive MR without LOCAL_WRITE");
        }
    }

    private static int needs(WrOpcode op) {
        return switch (op) {
            case RDMA_WRITE -> Access.REMOTE_WRITE.bit();
            case RDMA_READ -> Access.REMOTE_READ.bit();
            default -> Access.REMOTE_ATOMIC.bit();
        };
    }
}
