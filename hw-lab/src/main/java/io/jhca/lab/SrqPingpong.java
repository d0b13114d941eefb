package io.jhca.lab;

import io.jhca.memory.DmaRegion;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Context;
import io.jhca.verbs.CqFlags;
import io.jhca.verbs.Gid;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.PortAttributes;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SharedReceiveQueue;
import io.jhca.verbs.SrqInitAttributes;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.Arrays;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.IntConsumer;

/**
 * rdma-core's ibv_srq_pingpong, on jhca (libibverbs/examples/srq_pingpong.c): {@code num_qp} RC QPs whose receives
 * all come from one SRQ of rx_depth WRs, the same TCP exchange, QP attributes, traffic and output lines, so either
 * side can be the C tool.
 *
 * <p>Exchange: the tool always sends {@value #MAX_QP} rc_pingpong address messages (52 bytes each; the entries past
 * num_qp are all zero), the client first, the server after it moved its QPs to RTS, then the client's "done". Every
 * QP is connected to the peer's QP of the same index, with the first entry's GID (srq_pingpong.c pp_connect_ctx
 * uses {@code dest->gid}).
 *
 * <p>Traffic: rx_depth receives are posted to the SRQ and topped up when no more than num_qp are left; the client
 * sends once on every QP; each QP sends its next message once its previous send completed and a message arrived on
 * it, until {@code iters} sends and receives in all (not per QP) are done.
 */
public final class SrqPingpong {
    /** srq_pingpong.c: PINGPONG_RECV_WRID = 1, PINGPONG_SEND_WRID = 2, MAX_QP = 256. */
    static final int RECV_WRID = 1;
    static final int SEND_WRID = 2;
    static final int MAX_QP = 256;

    /** Everything the command line sets. {@code server} null means: be the server. */
    public record Options(String device, int ibPort, Integer gidIndex, int size, int iters, int mtu, int numQp,
                          int rxDepth, int tcpPort, int sl, String server, String bind, long stallMillis) {
    }

    private final Options o;
    private final PrintWriter out;
    private IntConsumer listening = p -> { };

    public SrqPingpong(Options options, PrintWriter out) {
        this.o = options;
        this.out = out;
    }

    /** Called with the TCP port once the server listens (tests use -p 0). */
    public SrqPingpong onListening(IntConsumer callback) {
        this.listening = callback;
        return this;
    }

    public RcPingpong.Result run() throws IOException {
        Mtu mtu = Mtu.ofBytes(o.mtu());
        int n = o.numQp();
        try (Context ctx = Devices.open(o.device())) {
            PortAttributes port = ctx.queryPort(o.ibPort());
            int gidIndex = GidChoice.choose(ctx, o.ibPort(), o.gidIndex());
            if (o.gidIndex() == null) {
                out.printf("  using GID index %d (RoCE needs a GID; pass -g to choose another)%n", gidIndex);
            }
            Gid myGid = ctx.queryGid(o.ibPort(), gidIndex);
            boolean inline = o.size() <= ctx.queryDevice().maxInlineData();
            QueuePair[] qps = new QueuePair[n];
            try (ProtectionDomain pd = ctx.allocatePd();
                 DmaRegion mem = LabMemory.allocate(ctx, o.size());
                 MemoryRegion mr = pd.register(mem, 0, o.size(), io.jhca.verbs.Access.LOCAL_WRITE.bit());
                 CompletionQueue cq = ctx.createCq(o.rxDepth() + n, CqFlags.SINGLE_THREADED);
                 SharedReceiveQueue srq = pd.createSrq(SrqInitAttributes.create().maxWr(o.rxDepth()).maxSge(1))) {
                try {
                    for (int i = 0; i < n; i++) {
                        qps[i] = pd.createQp(QpInitAttributes.rc(cq, cq).singleThreaded().maxSendWr(1).maxSendSge(1)
                                .srq(srq).maxInlineData(inline ? o.size() : 0));
                    }
                    for (QueuePair qp : qps) {
                        qp.modify(new QpAttributes().state(QpState.INIT).pkeyIndex(0).port(o.ibPort()).accessFlags(0));
                    }
                    return run(ctx, port, gidIndex, myGid, inline, mtu, mr, cq, srq, qps);
                } finally {
                    for (QueuePair qp : qps) {
                        if (qp != null) {
                            qp.close();
                        }
                    }
                }
            }
        }
    }

    private RcPingpong.Result run(Context ctx, PortAttributes port, int gidIndex, Gid myGid, boolean inline, Mtu mtu,
            MemoryRegion mr, CompletionQueue cq, SharedReceiveQueue srq, QueuePair[] qps) throws IOException {
        int n = qps.length;
        RecvWr rwr = new RecvWr(1).wrId(RECV_WRID).sge(mr, 0, o.size());
        int routs = postRecv(srq, rwr, o.rxDepth());
        if (routs < o.rxDepth()) {
            throw new IllegalStateException("Couldn't post receive (" + routs + ")");
        }
        PingpongDest[] me = new PingpongDest[MAX_QP];
        Arrays.fill(me, new PingpongDest(0, 0, 0, Gid.ZERO));
        for (int i = 0; i < n; i++) {
            me[i] = new PingpongDest(port.lid(), qps[i].qpn(), ThreadLocalRandom.current().nextInt(1 << 24), myGid);
            out.println(RcPingpong.addressLine("local", me[i]));
        }
        out.flush();
        PingpongDest[] rem = o.server() == null ? serverExchange(ctx, qps, me, mtu, gidIndex) : clientExchange(ctx, me);
        for (int i = 0; i < n; i++) {
            out.println(RcPingpong.addressLine("remote", rem[i]));
        }
        out.flush();
        if (o.server() != null) {
            connect(qps, me, rem, mtu, gidIndex);
        }
        JvmReport jvm = JvmReport.start();
        RcPingpong.Result r = traffic(ctx, cq, srq, qps, mr, rwr, routs, inline);
        jvm.stop();
        for (String line : RcPingpong.resultLines(r)) {
            out.println(line);
        }
        out.println(jvm.footer());
        out.flush();
        return r;
    }

    private RcPingpong.Result traffic(Context ctx, CompletionQueue cq, SharedReceiveQueue srq, QueuePair[] qps,
            MemoryRegion mr, RecvWr rwr, int routs, boolean inline) {
        int n = qps.length;
        Waiter waiter = new Waiter(ctx, o.stallMillis());
        UnsafeBuffer buf = mr.region().buffer(0, o.size());
        WorkCompletion[] wcs = new WorkCompletion[o.rxDepth() + n];
        for (int i = 0; i < wcs.length; i++) {
            wcs[i] = new WorkCompletion();
        }
        int[] qpns = new int[n];
        int[] pending = new int[n];
        for (int i = 0; i < n; i++) {
            qpns[i] = qps[i].qpn();
        }
        if (o.server() != null) {
            for (int i = 0; i < n; i++) {
                RcPingpong.postSend(qps[i].sendQueue(), mr, buf, inline, o.size());
                pending[i] = SEND_WRID | RECV_WRID;
            }
        } else {
            Arrays.fill(pending, RECV_WRID);
        }
        long start = System.nanoTime();
        int scnt = 0;
        int rcnt = 0;
        while (rcnt < o.iters() || scnt < o.iters()) {
            int ne = waiter.pollSome(cq, wcs, "a send or receive completion");
            for (int k = 0; k < ne; k++) {
                WorkCompletion wc = wcs[k];
                if (wc.status() != WcStatus.SUCCESS) {
                    throw new IllegalStateException("Failed status " + wc.status().description() + " (" + wc.status().value()
                            + ") for wr_id " + wc.wrId());
                }
                int qi = find(qpns, wc.qpNum());
                if (qi < 0) {
                    throw new IllegalStateException(CFormat.f("Couldn't find QPN %06x", wc.qpNum()));
                }
                if (wc.wrId() == SEND_WRID) {
                    scnt++;
                } else if (wc.wrId() == RECV_WRID) {
                    if (--routs <= n) {
                        routs += postRecv(srq, rwr, o.rxDepth() - routs);
                        if (routs < o.rxDepth()) {
                            throw new IllegalStateException("Couldn't post receive (" + routs + ")");
                        }
                    }
                    rcnt++;
                } else {
                    throw new IllegalStateException("Completion for unknown wr_id " + wc.wrId());
                }
                pending[qi] &= ~(int) wc.wrId();
                if (scnt < o.iters() && pending[qi] == 0) {
                    RcPingpong.postSend(qps[qi].sendQueue(), mr, buf, inline, o.size());
                    pending[qi] = RECV_WRID | SEND_WRID;
                }
            }
        }
        long micros = (System.nanoTime() - start) / 1000;
        return RcPingpong.result(micros, o.size(), o.iters());
    }

    private static int find(int[] qpns, int qpn) {
        for (int i = 0; i < qpns.length; i++) {
            if (qpns[i] == qpn) {
                return i;
            }
        }
        return -1;
    }

    private static int postRecv(SharedReceiveQueue srq, RecvWr rwr, int n) {
        int posted = 0;
        while (posted < n && srq.postRecv(rwr) == 1) {
            posted++;
        }
        return posted;
    }

    /** srq_pingpong.c pp_connect_ctx: rc_pingpong's attributes for QP i and the peer's QP i, the first entry's GID. */
    private void connect(QueuePair[] qps, PingpongDest[] me, PingpongDest[] rem, Mtu mtu, int gidIndex) {
        if (rem[0].gid().isZero()) {
            throw new IllegalStateException("the peer sent an all-zero GID: on RoCE run ibv_srq_pingpong with -g (e.g. -g 1)");
        }
        for (int i = 0; i < qps.length; i++) {
            PingpongDest d = new PingpongDest(rem[i].lid(), rem[i].qpn(), rem[i].psn(), rem[0].gid());
            RcPingpong.connect(qps[i], me[i], d, mtu, gidIndex, o.ibPort(), o.sl());
        }
    }

    private PingpongDest[] clientExchange(Context ctx, PingpongDest[] me) throws IOException {
        try (OobLink link = OobLink.connect(o.server(), o.tcpPort(), 30_000)) {
            link.readTimeout((int) Math.min(Integer.MAX_VALUE, Math.max(0, o.stallMillis()))).whileWaiting(ctx);
            for (PingpongDest d : me) {
                link.write(d.encode());
            }
            PingpongDest[] rem = new PingpongDest[MAX_QP];
            for (int i = 0; i < MAX_QP; i++) {
                rem[i] = PingpongDest.decode(link.read(PingpongDest.SIZE));
            }
            link.write(PingpongDest.DONE);
            return rem;
        }
    }

    private PingpongDest[] serverExchange(Context ctx, QueuePair[] qps, PingpongDest[] me, Mtu mtu, int gidIndex)
            throws IOException {
        InetAddress bind = GidChoice.serverListenAddress(o.bind());
        ServerSocket ss = OobLink.listen(bind, o.tcpPort());
        // on stderr: stdout stays line for line what ibv_srq_pingpong prints
        System.err.println("hwlab srq-pingpong: listening on " + OobLink.describe(ss));
        listening.accept(ss.getLocalPort());
        try (OobLink link = OobLink.accept(ss, 0)) {
            link.readTimeout((int) Math.min(Integer.MAX_VALUE, Math.max(0, o.stallMillis()))).whileWaiting(ctx);
            PingpongDest[] rem = new PingpongDest[MAX_QP];
            for (int i = 0; i < MAX_QP; i++) {
                rem[i] = PingpongDest.decode(link.read(PingpongDest.SIZE));
            }
            // the server moves to RTR/RTS before it answers, so the client may send as soon as it has the reply
            connect(qps, me, rem, mtu, gidIndex);
            for (PingpongDest d : me) {
                link.write(d.encode());
            }
            byte[] done = link.read(PingpongDest.DONE.length);
            if (!Arrays.equals(done, PingpongDest.DONE)) {
                throw new IOException("Couldn't send/recv local address: expected \"done\" from the client");
            }
            return rem;
        } finally {
            ss.close();
        }
    }
}
