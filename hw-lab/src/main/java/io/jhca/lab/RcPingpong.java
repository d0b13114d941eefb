package io.jhca.lab;

import io.jhca.memory.DmaRegion;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.CompletionChannel;
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
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendQueue;
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
 * rdma-core's ibv_rc_pingpong, on jhca: the same TCP exchange, QP attributes, traffic and output lines, so
 * either side can be the C tool (libibverbs/examples/rc_pingpong.c; facts in rocev2.md section 4.1).
 *
 * <p>Traffic: both sides pre-post rx_depth receives of {@code size} bytes; the client sends first; each side
 * sends its next message once its previous send has completed and a message has arrived (the
 * {@code pending} bits of rc_pingpong), until it has sent and received {@code iters} messages.
 */
public final class RcPingpong {
    /** rc_pingpong.c: PINGPONG_RECV_WRID = 1, PINGPONG_SEND_WRID = 2. */
    static final int RECV_WRID = 1;
    static final int SEND_WRID = 2;

    /** Everything the command line sets. {@code server} null means: be the server. */
    public record Options(String device, int ibPort, Integer gidIndex, int size, int iters, int mtu, int rxDepth,
                          int tcpPort, int sl, String server, String bind, long stallMillis, boolean events) {

        /** The options without -e (sleep on CQ events). */
        public Options(String device, int ibPort, Integer gidIndex, int size, int iters, int mtu, int rxDepth,
                       int tcpPort, int sl, String server, String bind, long stallMillis) {
            this(device, ibPort, gidIndex, size, iters, mtu, rxDepth, tcpPort, sl, server, bind, stallMillis, false);
        }
    }

    /** What a run measured. */
    public record Result(long bytes, double seconds, double mbitPerSec, int iters, double usecPerIter) {
    }

    private final Options o;
    private final PrintWriter out;
    private IntConsumer listening = p -> { };

    public RcPingpong(Options options, PrintWriter out) {
        this.o = options;
        this.out = out;
    }

    /** Called with the TCP port once the server listens (tests use -p 0). */
    public RcPingpong onListening(IntConsumer callback) {
        this.listening = callback;
        return this;
    }

    public Result run() throws IOException {
        Mtu mtu = Mtu.ofBytes(o.mtu());
        try (Context ctx = Devices.open(o.device())) {
            PortAttributes port = ctx.queryPort(o.ibPort());
            int gidIndex = GidChoice.choose(ctx, o.ibPort(), o.gidIndex());
            if (o.gidIndex() == null) {
                out.printf("  using GID index %d (RoCE needs a GID; pass -g to choose another)%n", gidIndex);
            }
            Gid myGid = ctx.queryGid(o.ibPort(), gidIndex);
            int maxInline = ctx.queryDevice().maxInlineData();
            boolean inline = o.size() <= maxInline;
            try (ProtectionDomain pd = ctx.allocatePd();
                 DmaRegion mem = LabMemory.allocate(ctx, o.size());
                 MemoryRegion mr = pd.register(mem, 0, o.size(), io.jhca.verbs.Access.LOCAL_WRITE.bit());
                 CompletionChannel channel = o.events() ? ctx.createCompletionChannel() : null;
                 CompletionQueue cq = ctx.createCq(o.rxDepth() + 1, channel, CqFlags.SINGLE_THREADED);
                 QueuePair qp = pd.createQp(QpInitAttributes.rc(cq, cq).singleThreaded().maxSendWr(1).maxRecvWr(o.rxDepth())
                         .maxInlineData(inline ? o.size() : 0))) {
                // rc_pingpong.c pp_init_ctx: INIT with pkey_index 0, the port and qp_access_flags 0
                qp.modify(new QpAttributes().state(QpState.INIT).pkeyIndex(0).port(o.ibPort()).accessFlags(0));
                RecvWr rwr = new RecvWr(1).wrId(RECV_WRID).sge(mr, 0, o.size());
                int routs = postRecv(qp, rwr, o.rxDepth());
                if (routs < o.rxDepth()) {
                    throw new IllegalStateException("Couldn't post receive (" + routs + ")");
                }
                if (o.events()) {
                    cq.requestNotify(false); // rc_pingpong.c: armed once the receives are posted
                }
                PingpongDest me = new PingpongDest(port.lid(), qp.qpn(), ThreadLocalRandom.current().nextInt(1 << 24), myGid);
                out.println(addressLine("local", me));
                out.flush();
                PingpongDest rem = o.server() == null ? serverExchange(ctx, qp, me, mtu, gidIndex) : clientExchange(ctx, me);
                out.println(addressLine("remote", rem));
                out.flush();
                if (o.server() != null) {
                    connect(qp, me, rem, mtu, gidIndex);
                }
                JvmReport jvm = JvmReport.start();
                Result r = traffic(ctx, cq, qp, mr, rwr, routs, inline);
                jvm.stop();
                for (String line : resultLines(r)) {
                    out.println(line);
                }
                out.println(jvm.footer()); // jhca's addition after rc_pingpong's own lines
                out.flush();
                return r;
            }
        }
    }

    private Result traffic(Context ctx, CompletionQueue cq, QueuePair qp, MemoryRegion mr, RecvWr rwr, int routs,
                           boolean inline) {
        Waiter waiter = new Waiter(ctx, o.stallMillis());
        SendQueue sq = qp.sendQueue();
        UnsafeBuffer buf = mr.region().buffer(0, o.size());
        WorkCompletion[] wcs = {new WorkCompletion(), new WorkCompletion()};
        int pending = RECV_WRID;
        if (o.server() != null) {
            postSend(sq, mr, buf, inline, o.size());
            pending |= SEND_WRID;
        }
        long start = System.nanoTime();
        int scnt = 0;
        int rcnt = 0;
        int cqEvents = 0;
        while (rcnt < o.iters() || scnt < o.iters()) {
            int ne;
            if (o.events()) {
                // rc_pingpong.c -e: sleep for the event, re-arm, then poll once (the event's completions, maybe none)
                CompletionQueue ev = waiter.takeEvent(cq.channel(), "a send or receive completion event", -1);
                cqEvents++;
                if (ev != cq) {
                    throw new IllegalStateException("CQ event for unknown CQ " + ev.describe());
                }
                cq.requestNotify(false);
                ne = cq.poll(wcs);
            } else {
                ne = waiter.pollSome(cq, wcs, "a send or receive completion");
            }
            for (int i = 0; i < ne; i++) {
                WorkCompletion wc = wcs[i];
                if (wc.status() != WcStatus.SUCCESS) {
                    throw new IllegalStateException("Failed status " + wc.status().description() + " (" + wc.status().value()
                            + ") for wr_id " + wc.wrId());
                }
                if (wc.wrId() == SEND_WRID) {
                    scnt++;
                } else if (wc.wrId() == RECV_WRID) {
                    if (--routs <= 1) {
                        routs += postRecv(qp, rwr, o.rxDepth() - routs);
                        if (routs < o.rxDepth()) {
                            throw new IllegalStateException("Couldn't post receive (" + routs + ")");
                        }
                    }
                    rcnt++;
                } else {
                    throw new IllegalStateException("Completion for unknown wr_id " + wc.wrId());
                }
                pending &= ~(int) wc.wrId();
                if (scnt < o.iters() && pending == 0) {
                    postSend(sq, mr, buf, inline, o.size());
                    pending = RECV_WRID | SEND_WRID;
                }
            }
        }
        long micros = (System.nanoTime() - start) / 1000;
        if (cqEvents > 0) {
            cq.ackEvents(cqEvents); // rc_pingpong.c acknowledges all its events at the end
        }
        return result(micros, o.size(), o.iters());
    }

    /** "%lld bytes in %.2f seconds = %.2f Mbit/sec" and "%d iters in %.2f seconds = %.2f usec/iter". */
    static String[] resultLines(Result r) {
        return new String[] {
            r.bytes() + " bytes in " + CFormat.fixed(r.seconds(), 2) + " seconds = " + CFormat.fixed(r.mbitPerSec(), 2) + " Mbit/sec",
            r.iters() + " iters in " + CFormat.fixed(r.seconds(), 2) + " seconds = " + CFormat.fixed(r.usecPerIter(), 2) + " usec/iter",
        };
    }

    /** "  local address:  LID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s" (side "local " or "remote"). */
    static String addressLine(String side, PingpongDest d) {
        return CFormat.f("  %s address: %sLID 0x%04x, QPN 0x%06x, PSN 0x%06x, GID %s", side, side.equals("local") ? " " : "",
                d.lid(), d.qpn(), d.psn(), Inet6Text.format(d.gid().bytes()));
    }

    /**
     * rc_pingpong.c's arithmetic, types included: the elapsed whole microseconds held in a {@code float},
     * seconds = usec / 1000000., Mbit/sec = bytes * 8. / usec, usec/iter = usec / iters (a float division).
     */
    static Result result(long micros, int size, int iters) {
        float usec = (float) micros;
        long bytes = (long) size * iters * 2;
        return new Result(bytes, usec / 1000000.0, bytes * 8.0 / usec, iters, usec / iters);
    }

    /** The tools' one signaled SEND of {@code size} bytes (inline or from {@code mr}); also srq-pingpong's. */
    static void postSend(SendQueue sq, MemoryRegion mr, UnsafeBuffer buf, boolean inline, int size) {
        sq.start();
        sq.wrId(SEND_WRID).flags(SendFlags.SIGNALED).send();
        if (inline) {
            sq.inlineData(buf, 0, size);
        } else {
            sq.sge(mr, 0, size);
        }
        if (sq.complete() != 0) {
            // max_send_wr is 1 and a QP sends again only after its previous send completed
            throw new IllegalStateException("Couldn't post send: send queue full");
        }
    }

    private static int postRecv(QueuePair qp, RecvWr rwr, int n) {
        int posted = 0;
        while (posted < n && qp.postRecv(rwr) == 1) {
            posted++;
        }
        return posted;
    }

    /** rc_pingpong.c pp_connect_ctx: RTR and RTS with the tool's fixed attributes. */
    static void connect(QueuePair qp, PingpongDest me, PingpongDest rem, Mtu mtu, int gidIndex, int port, int sl) {
        AhAttributes av = AhAttributes.to(rem.gid()).sgidIndex(gidIndex).hopLimit(1).sl(sl).portNum(port).dlid(rem.lid());
        // RTR: max_dest_rd_atomic 1, min_rnr_timer 12; RTS: timeout 14, retry_cnt 7, rnr_retry 7, max_rd_atomic 1
        qp.modify(QpAttributes.toRtr(rem.qpn(), rem.psn(), av, mtu));
        qp.modify(QpAttributes.toRts(me.psn()));
    }

    private void connect(QueuePair qp, PingpongDest me, PingpongDest rem, Mtu mtu, int gidIndex) {
        if (rem.gid().isZero()) {
            throw new IllegalStateException("the peer sent an all-zero GID: on RoCE run ibv_rc_pingpong with -g (e.g. -g 1)");
        }
        connect(qp, me, rem, mtu, gidIndex, o.ibPort(), o.sl());
    }

    private PingpongDest clientExchange(Context ctx, PingpongDest me) throws IOException {
        try (OobLink link = OobLink.connect(o.server(), o.tcpPort(), 30_000)) {
            link.readTimeout((int) Math.min(Integer.MAX_VALUE, Math.max(0, o.stallMillis()))).whileWaiting(ctx);
            link.write(me.encode());
            PingpongDest rem = PingpongDest.decode(link.read(PingpongDest.SIZE));
            link.write(PingpongDest.DONE);
            return rem;
        }
    }

    private PingpongDest serverExchange(Context ctx, QueuePair qp, PingpongDest me, Mtu mtu, int gidIndex) throws IOException {
        InetAddress bind = GidChoice.serverListenAddress(o.bind());
        ServerSocket ss = OobLink.listen(bind, o.tcpPort());
        // on stderr: stdout stays line for line what ibv_rc_pingpong prints
        System.err.println("hwlab rc-pingpong: listening on " + OobLink.describe(ss));
        listening.accept(ss.getLocalPort());
        try (OobLink link = OobLink.accept(ss, 0)) {
            link.readTimeout((int) Math.min(Integer.MAX_VALUE, Math.max(0, o.stallMillis()))).whileWaiting(ctx);
            PingpongDest rem = PingpongDest.decode(link.read(PingpongDest.SIZE));
            // the server moves to RTR/RTS before it answers, so the client may send as soon as it has the reply
            connect(qp, me, rem, mtu, gidIndex);
            link.write(me.encode());
            byte[] done = link.read(PingpongDest.DONE.length);
            if (!Arrays.equals(done, PingpongDest.DONE)) {
                throw new IOException("Couldn't send/recv local address: expected \"done\" from the client");
            }
            return rem;
        }
    }
}
