package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.jhca.rxe.transport.RxeCounters.Counter;
import io.jhca.rxe.wire.Bth;
import io.jhca.rxe.wire.Opcode;
import io.jhca.verbs.Access;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;

/**
 * Requests from the network that no verbs consumer could post, each at the PSN the responder expects (0x1000), so
 * that only its own fault can refuse it: an invalid request (NAK syndrome 0x61), as Linux rxe's responder refuses it
 * (rxe_resp.c check_length: FIRST and MIDDLE packets carry one MTU, a RETH at most 2^31 bytes; an atomic's address
 * 8-byte aligned; check_resource: a READ needs responder resources). Each is NAKed, the responder QP goes to ERR, and no byte of the target changes.
 * A verbs post refuses the same requests before they are sent, so only a forged or broken peer reaches these checks.
 */
class InvalidRequestTest {

    private static final int MTU = 1024;

    @Test
    void readLongerThanTwoToThe31IsInvalid() throws Exception {
        try (Rig r = Rig.rc(ProgressMode.CALLER, 1 << 16, Mtu.MTU_1024); Forger peer = new Forger(r.a, r.b)) {
            // 2^31 + 1 bytes (a DMA length past IBTA's 2^31), from the MR's start: refused for its length, not as an
            // access error for running past the MR
            peer.readRequest(r.qpB.qpn(), 0x1000, r.mrB.address(), r.mrB.rkey(), (1 << 31) + 1);
            refusedAsInvalid(r, r.qpB, 0);
        }
    }

    /** A READ to a QP that keeps no responder resources (max_dest_rd_atomic 0): rxe_resp.c check_resource. */
    @Test
    void readToAQpWithoutResponderResourcesIsInvalid() throws Exception {
        try (Rig r = Rig.rc(ProgressMode.CALLER, 1 << 16, Mtu.MTU_1024); Forger peer = new Forger(r.a, r.b);
             QueuePair c = r.pdB.createQp(QpInitAttributes.rc(r.cqB, r.cqB))) {
            c.modify(QpAttributes.toInit(1, Access.REMOTE_READ));
            c.modify(QpAttributes.toRtr(r.qpA.qpn(), 0x3000, AhAttributes.to(Rig.gid(r.a)).sgidIndex(1), Mtu.MTU_1024)
                    .maxDestRdAtomic(0).minRnrTimer(1));
            c.modify(QpAttributes.toRts(0x4000));
            peer.readRequest(c.qpn(), 0x3000, r.mrB.address(), r.mrB.rkey(), 64);
            refusedAsInvalid(r, c, 0);
            assertEquals(QpState.RTS, r.qpB.state(), "B's other QP");
        }
    }

    @Test
    void atomicAtAnAddressNotEightByteAlignedIsInvalid() throws Exception {
        try (Rig r = Rig.rc(ProgressMode.CALLER, 1 << 16, Mtu.MTU_1024); Forger peer = new Forger(r.a, r.b)) {
            peer.fetchAdd(r.qpB.qpn(), 0x1000, r.mrB.address() + 4, r.mrB.rkey(), 0x0101010101010101L);
            refusedAsInvalid(r, r.qpB, 16);
        }
    }

    /** A SEND's or WRITE's MIDDLE packet one byte short of the MTU (padded to it): MIDDLE packets carry one MTU. */
    @ParameterizedTest
    @ValueSource(strings = {"SEND", "WRITE"})
    void middlePacketShorterThanTheMtuIsInvalid(final String kind) throws Exception {
        try (Rig r = Rig.rc(ProgressMode.CALLER, 1 << 16, Mtu.MTU_1024); Forger peer = new Forger(r.a, r.b)) {
            final boolean send = kind.equals("SEND");
            final int qpn = r.qpB.qpn();
            if (send) {
                r.qpB.postRecv(new RecvWr().wrId(1).sge(r.mrB, 0, 3 * MTU));
            }
            peer.request(send ? Opcode.RC_SEND_FIRST : Opcode.RC_RDMA_WRITE_FIRST, qpn, 0x1000, r.mrB.address(),
                    r.mrB.rkey(), 3 * MTU, MTU, 0);
            peer.request(send ? Opcode.RC_SEND_MIDDLE : Opcode.RC_RDMA_WRITE_MIDDLE, qpn, 0x1001, 0, 0, 0, MTU - 1,
                    Bth.padFor(MTU - 1));
            refusedAsInvalid(r, r.qpB, 0);
            for (int i = MTU; i < 3 * MTU; i++) {
                assertEquals(0, r.memB.buffer().getByte(i), "byte " + i + " past the FIRST packet was written");
            }
        }
    }

    /**
     * Waits for B's invalid-request NAK, then expects {@code qp} (B's) in ERR and the first {@code untouched} bytes of
     * B's memory still 0.
     */
    static void refusedAsInvalid(final Rig r, final QueuePair qp, final int untouched) {
        r.await(() -> r.b.counters().get(Counter.SENT_NAK_INV_REQ) > 0, "the invalid request's NAK (QP "
                + qp.qpn() + ")");
        assertEquals(QpState.ERR, qp.state());
        for (int i = 0; i < untouched; i++) {
            assertEquals(0, r.memB.buffer().getByte(i), "byte " + i + " of the target was written");
        }
    }
}
