package io.jhca.cm.ib;

import java.util.HashMap;
import java.util.Map;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.cm.mad.Mad;
import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import io.jhca.verbs.Access;
import io.jhca.verbs.AddressHandle;
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
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

/**
 * The general services interface of port 1 of a device: QP1 (IBTA 16.1), which sends and receives 256-byte MADs as
 * UD datagrams to and from QP1 of the peer with Q_Key 0x80010000. On RoCEv2 there are no LIDs: a MAD goes to the
 * peer's GID and a received one names its sender by the GRH (the IP header) in front of it (IBTA A17.4.5.2).
 * Used by one thread (the connection manager's); not thread safe.
 */
public final class GsiPort implements AutoCloseable {
    /** IBTA 16.1 (and rxe's GSI_QKEY): the well-known Q_Key of QP1. */
    public static final int GSI_QKEY = 0x80010000;
    public static final int GSI_QPN = 1;
    static final int GRH = 40;
    static final int RECV_SLOT = GRH + Mad.SIZE;
    static final int RECV_DEPTH = 64;
    static final int SEND_DEPTH = 64;
    /** MADs received while polling without a sink (from {@link #send}); handed over at the next poll. */
    private final java.util.ArrayDeque<Received> held = new java.util.ArrayDeque<>();

    private final Context context;
    private final ProtectionDomain pd;
    private final CompletionQueue cq;
    private final QueuePair qp;
    private final DmaRegion memory;
    private final MemoryRegion mr;
    private final UnsafeBuffer buffer;
    private final long sendBase;
    private final WorkCompletion wc = new WorkCompletion();
    private final RecvWr recvWr = new RecvWr();
    private final SendWr sendWr = new SendWr();
    private final Map<Gid, AddressHandle> ahs = new HashMap<>();
    private int sendHead;
    private int sendsInFlight;

    /** How long closing waits for MADs already posted to leave (a UD send completes without any answer). */
    static final long FLUSH_NANOS = 200_000_000L;

    /** A received MAD and who sent it. */
    public record Received(Mad mad, Gid source, int sourceQpn) {
    }

    public GsiPort(Context context) {
        this.context = context;
        ProtectionDomain p = null;
        CompletionQueue c = null;
        QueuePair q = null;
        DmaRegion m = null;
        try {
            p = context.allocatePd();
            c = context.createCq(RECV_DEPTH + SEND_DEPTH);
            q = p.createQp(QpInitAttributes.gsi(c, c).maxSendWr(SEND_DEPTH).maxRecvWr(RECV_DEPTH));
            m = DmaMemory.allocate((long) (RECV_DEPTH * RECV_SLOT + SEND_DEPTH * Mad.SIZE));
            this.mr = p.register(m, Access.LOCAL_WRITE);
            q.modify(QpAttributes.toInitUd(1, GSI_QKEY));
            q.modify(QpAttributes.toRtrUd());
            q.modify(QpAttributes.toRtsUd(0));
        } catch (RuntimeException e) {
            closeQuietly(q, m, c, p);
            throw e;
        }
        this.pd = p;
        this.cq = c;
        this.qp = q;
        this.memory = m;
        this.buffer = m.buffer();
        this.sendBase = (long) RECV_DEPTH * RECV_SLOT;
        for (int i = 0; i < RECV_DEPTH; i++) {
            postRecv(i);
        }
    }

    public Context context() {
        return context;
    }

    private void postRecv(int slot) {
        recvWr.wrId(slot).numSge(0).sge(mr, (long) slot * RECV_SLOT, RECV_SLOT);
        qp.postRecv(recvWr);
    }

    /**
     * Sends a MAD to QP1 at {@code dest} from the local GID at {@code sgidIndex}; false if every send slot is in
     * flight (the caller's retry timers cover a lost or unsent MAD, as they cover a dropped one).
     */
    public boolean send(Mad mad, Gid dest, int sgidIndex) {
        poll(null);
        if (sendsInFlight >= SEND_DEPTH) {
            return false;
        }
        AddressHandle ah = ahs.computeIfAbsent(dest, g -> pd.createAh(AhAttributes.to(g).sgidIndex(sgidIndex)
                .hopLimit(64)));
        int slot = sendHead;
        sendHead = (sendHead + 1) % SEND_DEPTH;
        long off = sendBase + (long) slot * Mad.SIZE;
        buffer.putBytes((int) off, mad.bytes(), 0, Mad.SIZE);
        sendWr.wrId(-1L - slot).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).numSge(0)
                .sge(mr, off, Mad.SIZE).ud(ah, GSI_QPN, GSI_QKEY);
        if (qp.postSend(sendWr) != 1) {   // the number of WRs posted (not ibv_post_send's errno): 0 = queue full
            return false;
        }
        sendsInFlight++;
        return true;
    }

    /**
     * Drives the device (in caller progress mode) and takes completions: send completions free their slots, each
     * received MAD goes to {@code sink}. Returns the number of MADs received.
     */
    public int poll(java.util.function.Consumer<Received> sink) {
        context.progress();
        int n = 0;
        if (sink != null) {
            for (Received r = held.poll(); r != null; r = held.poll()) {
                sink.accept(r);
                n++;
            }
        }
        while (cq.poll(wc) > 0) {
            if (wc.opcode() != WcOpcode.RECV) {
                sendsInFlight--;
                continue;
            }
            int slot = (int) wc.wrId();
            if (wc.isSuccess() && wc.byteLen() >= GRH + Mad.SIZE) {
                int base = slot * RECV_SLOT;
                byte[] raw = new byte[RECV_SLOT];
                buffer.getBytes(base, raw);
                Received r = new Received(Mad.wrap(raw, GRH, Mad.SIZE), sourceGid(raw), wc.srcQp());
                if (sink != null) {
                    sink.accept(r);
                    n++;
                } else {
                    held.add(r); // a send reclaiming its slots must not lose a MAD that came meanwhile
                }
            }
            if (!qp.isClosed()) {
                postRecv(slot);
            }
        }
        return n;
    }

    /**
     * Drives the device until every MAD posted has been sent, at most {@link #FLUSH_NANOS}: on a device that the
     * application progresses, a MAD posted just before QP1 closes (the DREP that answers a peer's DREQ, when the
     * application ends on its DISCONNECTED event) would otherwise never leave, and the peer would retry its DREQ into
     * a closed port until its CM gives up.
     */
    private void flushSends() {
        long deadline = System.nanoTime() + FLUSH_NANOS;
        while (sendsInFlight > 0 && !qp.isClosed() && !context.isClosed() && System.nanoTime() - deadline < 0) {
            poll(null);
            Thread.onSpinWait();
        }
    }

    /** The sender's GID from the GRH area: IPv4 as 20 zero bytes then the IPv4 header, else an IPv6 header. */
    static Gid sourceGid(byte[] grh) {
        byte[] g = new byte[16];
        if ((grh[20] & 0xF0) == 0x40) {
            g[10] = (byte) 0xFF;
            g[11] = (byte) 0xFF;
            System.arraycopy(grh, 20 + 12, g, 12, 4);
        } else {
            System.arraycopy(grh, 8, g, 0, 16);
        }
        return Gid.of(g);
    }

    @Override
    public void close() {
        flushSends();
        for (AddressHandle ah : ahs.values()) {
            ah.close();
        }
        ahs.clear();
        qp.close();
        mr.close();
        memory.close();
        cq.close();
        pd.close();
    }

    private static void closeQuietly(QueuePair q, DmaRegion m, CompletionQueue c, ProtectionDomain p) {
        for (AutoCloseable a : new AutoCloseable[] {q, m, c, p}) {
            try {
                if (a != null) {
                    a.close();
                }
            } catch (Exception ignored) {
                // the original failure is what the caller needs to see
            }
        }
    }
}
