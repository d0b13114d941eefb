package io.jhca.lab;

import io.jhca.cm.CmEvent;
import io.jhca.cm.CmEventChannel;
import io.jhca.cm.CmEventType;
import io.jhca.cm.CmId;
import io.jhca.cm.ConnParam;
import io.jhca.memory.DmaRegion;
import io.jhca.verbs.Access;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Context;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

/**
 * perftest's exchange channel with -R (perftest_communication.c create_comm_struct, rdma_server_connect,
 * rdma_client_connect): an RC QP of its own, one send and one receive deep, that rdma_cm connects on the -p port
 * before anything else; every exchange message is one signaled SEND (wr_id SYNC_SPEC_ID) into a receive of
 * sizeof(struct pingpong_dest) bytes that is posted again once read. The server stops listening once connected,
 * so the test QPs can listen on the same port afterwards.
 */
final class CmCommLink implements PerftestWire {
    /** perftest_communication.h SYNC_SPEC_ID. */
    static final int SYNC_SPEC_ID = 5;
    /** The receive buffer: sizeof(struct pingpong_dest), the largest exchange message. */
    static final int RECV_SIZE = PerftestDest.SIZE_BINARY;

    private final Context ctx;
    private final long stallMillis;
    private final CmEventChannel channel;
    private CmId listener;
    private CmId id;
    private ProtectionDomain pd;
    private DmaRegion mem;
    private MemoryRegion mr;
    private CompletionQueue sendCq;
    private CompletionQueue recvCq;
    private QueuePair qp;
    private UnsafeBuffer recvBuf;
    private UnsafeBuffer sendBuf;
    private final WorkCompletion wc = new WorkCompletion();

    private CmCommLink(Context ctx, long stallMillis) {
        this.ctx = ctx;
        this.stallMillis = stallMillis;
        this.channel = CmEventChannel.create();
    }

    /** Server: binds and listens on {@code address} now (so an in-process client may connect at once). */
    static CmCommLink listen(Context ctx, InetSocketAddress address, long stallMillis) {
        CmCommLink l = new CmCommLink(ctx, stallMillis);
        try {
            l.listener = l.channel.createId();
            l.listener.bindAddr(address);
            l.listener.listen(1);
        } catch (RuntimeException e) {
            l.close();
            throw e;
        }
        return l;
    }

    /** Server: takes the first connection request, accepts it and stops listening (rdma_server_connect). */
    CmCommLink accept(long timeoutMillis) throws IOException {
        CmEvent req = await(CmEventType.CONNECT_REQUEST, timeoutMillis);
        id = req.id();
        setUp();
        // conn_param zeroed for the SEND-only QP; retry and RNR retry counts 7 (DEF_RETRY_COUNT)
        id.accept(ConnParam.defaults().responderResources(0).initiatorDepth(0).retryCount(7).rnrRetryCount(7));
        listener.close();
        listener = null;
        return this;
    }

    /** Client: resolves, connects and waits for ESTABLISHED (rdma_client_connect). */
    static CmCommLink connect(Context ctx, InetAddress source, InetSocketAddress server, long stallMillis)
            throws IOException {
        CmCommLink l = new CmCommLink(ctx, stallMillis);
        try {
            l.id = l.channel.createId();
            l.id.resolveAddr(source, server, 2000);
            l.await(CmEventType.ADDR_RESOLVED, 5000);
            l.id.resolveRoute(2000);
            l.await(CmEventType.ROUTE_RESOLVED, 5000);
            l.setUp();
            l.id.connect(ConnParam.defaults().responderResources(0).initiatorDepth(0).retryCount(7).rnrRetryCount(7));
            l.await(CmEventType.ESTABLISHED, 30_000);
        } catch (IOException | RuntimeException e) {
            l.close();
            throw e;
        }
        return l;
    }

    private void setUp() {
        pd = ctx.allocatePd();
        mem = LabMemory.allocate(ctx, 2L * RECV_SIZE);
        mr = pd.register(mem, 0, 2L * RECV_SIZE, Access.mask(Access.LOCAL_WRITE));
        recvBuf = mem.buffer(0, RECV_SIZE);
        sendBuf = mem.buffer(RECV_SIZE, RECV_SIZE);
        sendCq = ctx.createCq(1);
        recvCq = ctx.createCq(1);
        qp = id.createQp(pd, QpInitAttributes.rc(sendCq, recvCq).maxSendWr(1).maxRecvWr(1));
        postRecv(); // before connecting: the peer's first SEND may come at once
    }

    private void postRecv() {
        qp.postRecv(new RecvWr(1).wrId(SYNC_SPEC_ID).sge(mr, 0, RECV_SIZE));
    }

    @Override
    public void write(byte[] msg) throws IOException {
        if (msg.length > RECV_SIZE) {
            throw new IllegalArgumentException("exchange message of " + msg.length + " bytes; the peer receives "
                    + RECV_SIZE);
        }
        sendBuf.putBytes(0, msg);
        qp.postSend(new SendWr().wrId(SYNC_SPEC_ID).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
                .sge(mr, RECV_SIZE, msg.length));
        poll(sendCq, WcOpcode.SEND);
    }

    @Override
    public byte[] read(int n) throws IOException {
        if (n > RECV_SIZE) {
            throw new IllegalArgumentException("exchange message of " + n + " bytes; the receive holds " + RECV_SIZE);
        }
        poll(recvCq, WcOpcode.RECV);
        if (wc.byteLen() != n) {
            // perftest sends each step's message at its exact size (rdma_write_data, rdma_write_keys): another size
            // is a peer out of step, whose bytes (and the stale rest of the buffer) must not be taken as this step's
            throw new IOException("exchange QP: received a message of " + wc.byteLen() + " bytes where this step's has "
                    + n);
        }
        byte[] b = new byte[n];
        recvBuf.getBytes(0, b);
        postRecv();
        return b;
    }

    private void poll(CompletionQueue cq, WcOpcode op) throws IOException {
        long last = System.nanoTime();
        long idle = 0;
        while (cq.poll(wc) == 0) {
            if (ctx.progress() > 0) {
                idle = 0;
                last = System.nanoTime();
            } else if (++idle > Spin.SPINS_BEFORE_YIELD) {
                Thread.yield();
            }
            if (stallMillis > 0 && (idle & 255) == 0 && System.nanoTime() - last > stallMillis * 1_000_000L) {
                throw new IOException("no " + op + " completion on the rdma_cm exchange QP within " + stallMillis + " ms");
            }
        }
        if (!wc.isSuccess() || wc.opcode() != op || wc.wrId() != SYNC_SPEC_ID) {
            throw new IOException("exchange QP: expected a " + op + " completion, got " + wc.opcode() + " " + wc.status()
                    + " wr_id " + wc.wrId());
        }
    }

    private CmEvent await(CmEventType type, long millis) throws IOException {
        long until = millis <= 0 ? Long.MAX_VALUE : System.currentTimeMillis() + millis;
        try {
            while (System.currentTimeMillis() < until) {
                CmEvent e = channel.get(50, TimeUnit.MILLISECONDS);
                if (e == null) {
                    ctx.progress();
                    continue;
                }
                if (e.type() == type) {
                    return e;
                }
                throw new IOException("rdma_cm exchange connection: waiting for " + type + ", got " + e);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted waiting for " + type, e);
        }
        throw new IOException("rdma_cm exchange connection: no " + type + " within " + millis + " ms");
    }

    @Override
    public void close() {
        AutoCloseable[] all = {id, listener, qp, sendCq, recvCq, mr, mem, pd, channel};
        for (AutoCloseable c : all) {
            if (c == null) {
                continue;
            }
            try {
                c.close();
            } catch (Exception ignored) {
                // best effort: the run's result is already known
            }
        }
    }
}
