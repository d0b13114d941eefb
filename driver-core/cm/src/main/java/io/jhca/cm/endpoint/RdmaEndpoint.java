package io.jhca.cm.endpoint;

import java.net.InetSocketAddress;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.cm.CmDevices;
import io.jhca.cm.CmEvent;
import io.jhca.cm.CmEventChannel;
import io.jhca.cm.CmEventType;
import io.jhca.cm.CmException;
import io.jhca.cm.CmId;
import io.jhca.memory.DmaMemory;
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

/**
 * One end of an RC connection made by RDMA CM, in the spirit of DiSNI's endpoints: it owns its CM ID, PD, CQ, QP
 * and registered buffers: a send buffer, {@link EndpointConfig#recvDepth} posted receive buffers of
 * {@link EndpointConfig#messageSize} bytes each, and a {@link #data()} buffer the peer may RDMA READ and WRITE (its
 * address and rkey are {@link #dataAddress()} and {@link #dataRkey()}). Calls block (polling) until done, with
 * the configured timeout; one thread at a time.
 */
public final class RdmaEndpoint implements AutoCloseable {
    private final CmId id;
    private final CmEventChannel channel;
    private final boolean ownsChannel;
    private final EndpointConfig config;
    private final Context ctx;
    private final ProtectionDomain pd;
    private final CompletionQueue cq;
    private final QueuePair qp;
    private final DmaRegion memory;
    private final MemoryRegion mr;
    private final UnsafeBuffer all;
    private final UnsafeBuffer data;
    private final WorkCompletion wc = new WorkCompletion();
    private final SendWr sendWr = new SendWr();
    private final RecvWr recvWr = new RecvWr();
    private final long sendOffset;
    private final long recvOffset;
    private final long dataOffset;
    private boolean closed;
    /** Receives completed while a send, read or write was awaited: slot << 32 | length, in arrival order. */
    private final java.util.ArrayDeque<Long> arrived = new java.util.ArrayDeque<>();

    /** Creates the resources on the ID's device; the caller then connects or accepts. */
    RdmaEndpoint(CmId id, CmEventChannel channel, boolean ownsChannel, EndpointConfig config) {
        this.id = id;
        this.channel = channel;
        this.ownsChannel = ownsChannel;
        this.config = config;
        this.ctx = id.context();
        CmDevices.attach(ctx);
        this.pd = ctx.allocatePd();
        this.cq = ctx.createCq(config.recvDepth() + 16);
        this.qp = id.createQp(pd, QpInitAttributes.rc(cq, cq).maxSendWr(16).maxRecvWr(config.recvDepth()));
        int m = config.messageSize();
        this.sendOffset = 0;
        this.recvOffset = m;
        this.dataOffset = (long) m * (1 + config.recvDepth());
        this.memory = DmaMemory.allocate(dataOffset + config.dataSize());
        this.mr = pd.register(memory, Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
        this.all = memory.buffer();
        this.data = memory.buffer(dataOffset, config.dataSize());
        for (int i = 0; i < config.recvDepth(); i++) {
            postRecv(i);
        }
    }

    private void postRecv(int slot) {
        recvWr.wrId(slot).numSge(0).sge(mr, recvOffset + (long) slot * config.messageSize(), config.messageSize());
        qp.postRecv(recvWr);
    }

    /** Waits for ESTABLISHED on the channel (anything else for this ID is an error naming it). */
    void awaitEstablished() {
        long until = System.currentTimeMillis() + config.timeoutMillis();
        if (!ownsChannel) {
            // a server's channel is shared by its endpoints: its events are left for the server to take
            while (!id.isConnected() && System.currentTimeMillis() < until) {
                if (id.cmState() == io.jhca.cm.ib.CmState.IDLE) {
                    throw new CmException("accepting " + id.remoteAddress() + ": the client went away");
                }
                Thread.onSpinWait();
            }
        }
        while (!id.isConnected() && System.currentTimeMillis() < until) {
            CmEvent e;
            try {
                e = channel.get(20, TimeUnit.MILLISECONDS);
            } catch (InterruptedException ie) {
                Thread.currentThread().interrupt();
                throw new CmException("interrupted while connecting");
            }
            if (e == null) {
                if (id.isConnected()) {
                    return;
                }
                continue;
            }
            if (e.id() != id) {
                continue;
            }
            if (e.type() == CmEventType.ESTABLISHED) {
                return;
            }
            if (e.type() != CmEventType.ADDR_RESOLVED && e.type() != CmEventType.ROUTE_RESOLVED) {
                throw new CmException("connecting " + id.remoteAddress() + ": " + e);
            }
        }
        if (!id.isConnected()) {
            throw new CmException("connecting " + id.remoteAddress() + ": not established within "
                    + config.timeoutMillis() + " ms");
        }
    }

    public CmId id() {
        return id;
    }

    public QueuePair qp() {
        return qp;
    }

    public InetSocketAddress localAddress() {
        return id.localAddress();
    }

    public InetSocketAddress remoteAddress() {
        return id.remoteAddress();
    }

    /** The buffer the peer may RDMA READ and WRITE. */
    public UnsafeBuffer data() {
        return data;
    }

    public long dataAddress() {
        return mr.address() + dataOffset;
    }

    public int dataRkey() {
        return mr.rkey();
    }

    /** Sends a message (at most messageSize bytes) and waits until it is acknowledged. */
    public void send(byte[] message) {
        if (message.length > config.messageSize()) {
            throw new IllegalArgumentException("message of " + message.length + " bytes; the endpoint sends at most "
                    + config.messageSize());
        }
        all.putBytes((int) sendOffset, message);
        sendWr.wrId(-1).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).numSge(0).sge(mr, sendOffset,
                message.length);
        qp.postSend(sendWr);
        await(WcOpcode.SEND);
    }

    /** Waits for the next message and returns a copy of it. */
    public byte[] receive() {
        int slot;
        int len;
        if (!arrived.isEmpty()) {
            long a = arrived.poll();
            slot = (int) (a >>> 32);
            len = (int) a;
        } else {
            WorkCompletion c = await(WcOpcode.RECV);
            slot = (int) c.wrId();
            len = c.byteLen();
        }
        byte[] m = new byte[len];
        all.getBytes((int) (recvOffset + (long) slot * config.messageSize()), m);
        postRecv(slot);
        return m;
    }

    /** RDMA WRITEs {@code length} bytes of {@link #data()} from {@code offset} to the peer's address. */
    public void write(int offset, int length, long remoteAddress, int rkey) {
        rdma(WrOpcode.RDMA_WRITE, WcOpcode.RDMA_WRITE, offset, length, remoteAddress, rkey);
    }

    /** RDMA READs {@code length} bytes from the peer's address into {@link #data()} at {@code offset}. */
    public void read(int offset, int length, long remoteAddress, int rkey) {
        rdma(WrOpcode.RDMA_READ, WcOpcode.RDMA_READ, offset, length, remoteAddress, rkey);
    }

    private void rdma(WrOpcode op, WcOpcode done, int offset, int length, long remoteAddress, int rkey) {
        data.boundsCheck(offset, length);
        sendWr.wrId(-2).opcode(op).sendFlags(SendFlags.SIGNALED).numSge(0).sge(mr, dataOffset + offset, length)
                .rdma(remoteAddress, rkey);
        qp.postSend(sendWr);
        await(done);
    }

    private WorkCompletion await(WcOpcode op) {
        long until = System.nanoTime() + config.timeoutMillis() * 1_000_000L;
        while (true) {
            ctx.progress();
            if (cq.poll(wc) > 0) {
                if (!wc.isSuccess()) {
                    throw new CmException(wc.opcode() + " on " + qp.describe() + " completed with " + wc.status()
                            + (id.isConnected() ? "" : " (the connection is down)"));
                }
                if (wc.opcode() == WcOpcode.RECV && op != WcOpcode.RECV) {
                    // a message arrived while we wait for our own work: kept for the next receive()
                    arrived.add(((long) wc.wrId() << 32) | (wc.byteLen() & 0xFFFFFFFFL));
                    continue;
                }
                if (wc.opcode() != op) {
                    throw new CmException("expected a " + op + " completion, got " + wc.opcode());
                }
                return wc;
            }
            if (System.nanoTime() > until) {
                throw new CmException("no " + op + " completion within " + config.timeoutMillis() + " ms");
            }
            Thread.onSpinWait();
        }
    }

    /** Waits until the peer disconnects (its DREQ arrived); false if it did not within the timeout. */
    public boolean awaitDisconnected(long millis) {
        long until = System.currentTimeMillis() + millis;
        while (id.isConnected() || id.cmState() == io.jhca.cm.ib.CmState.ESTABLISHED) {
            if (System.currentTimeMillis() > until) {
                return false;
            }
            ctx.progress();
            Thread.onSpinWait();
        }
        return true;
    }

    /** Disconnects (if connected) and frees everything the endpoint owns. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (id.isConnected()) {
            id.disconnect();
        }
        qp.close();
        mr.close();
        memory.close();
        cq.close();
        pd.close();
        id.close();
        if (ownsChannel) {
            channel.close();
        }
        CmDevices.detach(ctx);
    }
}
