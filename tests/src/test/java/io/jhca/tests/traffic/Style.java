package io.jhca.tests.traffic;

import io.jhca.tests.harness.Peer;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendQueue;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WrOpcode;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The two ways to post a send WR: the classic {@code postSend(SendWr)} and the in-place builder. */
enum Style {
    POST_SEND, BUILDER;

    /**
     * Posts one signaled WR of {@code op}: {@code len} bytes at {@code off} of the local MR (no SGE at all when
     * {@code len} is 0 with POST_SEND; one 0-byte SGE with the builder, so both forms are covered), to
     * {@code remoteOff} of the remote's MR for RDMA and atomics.
     */
    void post(Peer local, long wrId, WrOpcode op, long off, int len, Peer remote, long remoteOff, int imm,
              long compareAdd, long swap) {
        int rkey = remote == null ? 0 : remote.mr().rkey();
        long raddr = remote == null ? 0 : remote.addr(remoteOff);
        if (this == POST_SEND) {
            SendWr wr = new SendWr().wrId(wrId).opcode(op).sendFlags(SendFlags.SIGNALED).immData(imm);
            if (len > 0 || op.isAtomic()) {
                wr.sge(local.mr(), off, len);
            } else {
                wr.numSge(0);
            }
            if (op.isAtomic()) {
                wr.atomic(raddr, rkey, compareAdd, swap);
            } else if (op.isRdma()) {
                wr.rdma(raddr, rkey);
            }
            local.post(wr);
            return;
        }
        SendQueue sq = local.qp().sendQueue();
        sq.start();
        sq.wrId(wrId).flags(SendFlags.SIGNALED);
        switch (op) {
            case SEND -> sq.send();
            case SEND_WITH_IMM -> sq.sendImm(imm);
            case RDMA_WRITE -> sq.rdmaWrite(rkey, raddr);
            case RDMA_WRITE_WITH_IMM -> sq.rdmaWriteImm(rkey, raddr, imm);
            case RDMA_READ -> sq.rdmaRead(rkey, raddr);
            case ATOMIC_CMP_AND_SWP -> sq.atomicCmpSwp(rkey, raddr, compareAdd, swap);
            case ATOMIC_FETCH_AND_ADD -> sq.atomicFetchAdd(rkey, raddr, compareAdd);
            default -> throw new AssertionError(op);
        }
        sq.sge(local.mr(), off, len);
        assertEquals(0, sq.complete(), "builder complete() of one " + op);
    }
}
