package io.jhca.tests.twojvm;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import io.jhca.tests.harness.Gids;
import io.jhca.verbs.Access;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Context;
import io.jhca.verbs.Gid;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

import java.util.concurrent.ThreadLocalRandom;

/**
 * One JVM's side of the two-JVM test, plain verbs with no JUnit: a device, a PD, one buffer, one CQ, one RC QP.
 * Used by the parent test and by {@link RemotePeerMain} alike, so both run the same code.
 */
final class Side implements AutoCloseable {
    static final int BUFFER = 4 << 20;
    static final int MESSAGES = 100;
    static final int MAX_MESSAGE = 10_000;
    /** Where the child RDMA WRITEs into the parent's buffer, and how much. */
    static final int WRITE_OFF = 2 << 20;
    static final int WRITE_LEN = 1 << 20;
    static final int IMM_WRITE_DONE = 0x0D0E_0001;

    final Context ctx;
    final ProtectionDomain pd;
    final DmaRegion mem;
    final MemoryRegion mr;
    final CompletionQueue cq;
    final QueuePair qp;
    final int psn = ThreadLocalRandom.current().nextInt() & 0xFFFFFF;
    private final WorkCompletion wc = new WorkCompletion();

    Side(Context ctx) {
        this.ctx = ctx;
        pd = ctx.allocatePd();
        mem = DmaMemory.allocate(BUFFER);
        mr = pd.register(mem, Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
        cq = ctx.createCq(512);
        qp = pd.createQp(QpInitAttributes.rc(cq, cq).maxSendWr(256).maxRecvWr(256));
        qp.modify(QpAttributes.toInit(1, Access.REMOTE_WRITE, Access.REMOTE_READ));
    }

    Endpoint endpoint() {
        Gid gid = ctx.queryGid(1, Gids.roceIndex(ctx));
        return new Endpoint(qp.qpn(), psn, gid, mr.rkey(), mr.address());
    }

    void connect(Endpoint remote) {
        AhAttributes av = AhAttributes.to(remote.gid()).sgidIndex(Gids.roceIndex(ctx)).hopLimit(64);
        qp.modify(QpAttributes.toRtr(remote.qpn(), remote.psn(), av, ctx.queryPort(1).activeMtu()));
        qp.modify(QpAttributes.toRts(psn));
    }

    void postRecv(long wrId, long off, int len) {
        if (qp.postRecv(new RecvWr(1).wrId(wrId).sge(mr, off, len)) != 1) {
            throw new IllegalStateException("receive queue full");
        }
    }

    void post(SendWr wr) {
        if (qp.postSend(wr) != 1) {
            throw new IllegalStateException("send queue full");
        }
    }

    SendWr send(long wrId, long off, int len) {
        return new SendWr().wrId(wrId).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(mr, off, len);
    }

    /** The next completion, successful, within {@code millis}; anything else throws with the completion in full. */
    WorkCompletion await(String what, long millis) {
        long deadline = System.nanoTime() + millis * 1_000_000L;
        while (cq.poll(wc) == 0) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("timed out after " + millis + " ms waiting for " + what);
            }
            Thread.yield();
        }
        if (wc.status() != WcStatus.SUCCESS) {
            throw new IllegalStateException(what + " failed: " + wc);
        }
        return new WorkCompletion().copyFrom(wc);
    }

    /** The size of message {@code i} (0 to {@link #MAX_MESSAGE} bytes; the first three are 0, 1 and the maximum). */
    static int size(int i) {
        return i == 0 ? 0 : i == 1 ? 1 : i == 2 ? MAX_MESSAGE : (int) ((i * 2654435761L) % MAX_MESSAGE);
    }

    @Override
    public void close() {
        qp.close();
        cq.close();
        mr.close();
        mem.close();
        pd.close();
        ctx.close();
    }
}
