package io.jhca.lab;

import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.cm.CmDevices;
import io.jhca.cm.CmEvent;
import io.jhca.cm.CmEventChannel;
import io.jhca.cm.CmEventType;
import io.jhca.cm.CmId;
import io.jhca.cm.ConnParam;
import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import io.jhca.verbs.Access;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Context;
import io.jhca.verbs.DeviceInfo;
import io.jhca.verbs.Gid;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.Verbs;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

/**
 * rping's test over jhca's RDMA CM, with rping.c's wire behaviour: the client puts "rdma-ping-N: " and a rotating
 * alphabet into its start buffer and SENDs its address, rkey and size (struct rping_rdma_info: be64 buf, be32 rkey,
 * be32 size); the server RDMA READs it, SENDs a go-ahead, the client SENDs its rdma buffer's info, the server RDMA
 * WRITEs the ping back (strlen + 1 bytes) and SENDs again; the client checks (-V) and prints (-v). The client
 * disconnects after -C pings; the server ends when the connection goes down.
 */
final class Rping {
    /** rping.c RPING_MIN_BUFSIZE: room for "rdma-ping-%d: " with the largest int. */
    static final int MIN_SIZE = 26;
    static final int INFO = 16;

    record Options(boolean server, String address, String source, int port, int count, int size, boolean verbose,
            boolean validate, boolean debug, long stallMillis) {
    }

    private final Options o;
    private final PrintWriter out;
    private final Deque<AutoCloseable> resources = new ArrayDeque<>();
    private final WorkCompletion wc = new WorkCompletion();
    private Context ctx;
    private CmEventChannel channel;
    private QueuePair qp;
    private CompletionQueue cq;
    private MemoryRegion recvMr;
    private MemoryRegion sendMr;
    private MemoryRegion rdmaMr;
    private MemoryRegion startMr;
    private UnsafeBuffer recvBuf;
    private UnsafeBuffer sendBuf;
    private UnsafeBuffer rdmaBuf;
    private UnsafeBuffer startBuf;
    private boolean disconnected;
    /** Completions taken from the CQ before their wait, by opcode (see {@link #waitCompletion}). */
    private final int[] done = new int[WcOpcode.values().length];

    Rping(Options o, PrintWriter out) {
        this.o = o;
        this.out = out;
    }

    int run() throws Exception {
        try {
            InetAddress addr = InetAddress.getByName(o.address());
            InetAddress want = o.server() ? addr : o.source() != null ? InetAddress.getByName(o.source()) : null;
            ctx = openDevice(want);
            CmDevices.attach(ctx);
            channel = CmEventChannel.create();
            return o.server() ? server(addr) : client(addr, want);
        } finally {
            while (!resources.isEmpty()) {
                try {
                    resources.pop().close();
                } catch (Exception e) {
                    debug("cleanup: " + e);
                }
            }
            if (ctx != null) {
                CmDevices.detach(ctx);
                ctx.close();
            }
            out.flush();
        }
    }

    /** The first device that opens and, if {@code want} is given, has it in its GID table (and has a QP1). */
    private Context openDevice(InetAddress want) {
        StringBuilder tried = new StringBuilder();
        for (DeviceInfo d : Verbs.devices()) {
            Context c;
            try {
                c = Verbs.open(d.name());
            } catch (RuntimeException e) {
                tried.append(' ').append(d.name()).append(" (").append(e.getMessage()).append(')');
                continue;
            }
            boolean ok = c.supportsGsi() && (want == null || hasGid(c, Gid.of(want)));
            if (ok) {
                debug("using device " + d.name());
                return c;
            }
            tried.append(' ').append(d.name());
            c.close();
        }
        throw new IllegalStateException("no RDMA device with a QP1" + (want == null ? "" : " and the address "
                + want.getHostAddress()) + " could be opened; tried:" + tried);
    }

    private static boolean hasGid(Context c, Gid g) {
        for (int i = 0; i < c.queryPort(1).gidTblLen(); i++) {
            if (g.equals(c.queryGid(1, i))) {
                return true;
            }
        }
        return false;
    }

    private <T extends AutoCloseable> T keep(T r) {
        resources.push(r);
        return r;
    }

    private void setupQp(CmId id) {
        ProtectionDomain pd = keep(ctx.allocatePd());
        cq = keep(ctx.createCq(16));
        qp = keep(id.createQp(pd, QpInitAttributes.rc(cq, cq).maxSendWr(16).maxRecvWr(2)));
        DmaRegion mem = keep(DmaMemory.allocate(2L * INFO + 2L * o.size() + 64));
        recvMr = keep(pd.register(mem, 0, INFO, Access.mask(Access.LOCAL_WRITE)));
        sendMr = keep(pd.register(mem, INFO, INFO, Access.mask(Access.LOCAL_WRITE)));
        rdmaMr = keep(pd.register(mem, 2 * INFO, o.size(),
                Access.mask(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ)));
        startMr = keep(pd.register(mem, 2 * INFO + o.size(), o.size(),
                Access.mask(Access.LOCAL_WRITE, Access.REMOTE_READ, Access.REMOTE_WRITE)));
        recvBuf = mem.buffer(0, INFO);
        sendBuf = mem.buffer(INFO, INFO);
        rdmaBuf = mem.buffer(2 * INFO, o.size());
        startBuf = mem.buffer(2 * INFO + o.size(), o.size());
        postRecv();
    }

    private void postRecv() {
        qp.postRecv(new RecvWr().wrId(1).sge(recvMr, 0, INFO));
    }

    private int server(InetAddress addr) throws Exception {
        CmId listener = keep(channel.createId());
        listener.bindAddr(new InetSocketAddress(addr, o.port()));
        listener.listen(3);
        debug("listening on " + addr.getHostAddress() + ":" + o.port());
        CmEvent req = waitEvent(CmEventType.CONNECT_REQUEST, 0);
        CmId id = keep(req.id());
        debug("child cma " + id.remoteAddress());
        setupQp(id);
        id.accept(ConnParam.defaults());
        waitEvent(CmEventType.ESTABLISHED, o.stallMillis());
        while (true) {
            if (!waitRecv()) {
                break;
            }
            long remoteAddr = recvBuf.getLong(0, ByteOrder.BIG_ENDIAN);
            int rkey = recvBuf.getInt(8, ByteOrder.BIG_ENDIAN);
            int len = recvBuf.getInt(12, ByteOrder.BIG_ENDIAN);
            if (Integer.compareUnsigned(len, o.size()) > 0) { // a be32: bit 31 set is a length, not a sign
                throw new IllegalStateException("the client advertises " + Integer.toUnsignedString(len)
                        + " bytes, more than -S " + o.size());
            }
            postRecv();
            rdma(WrOpcode.RDMA_READ, rdmaMr, len, remoteAddr, rkey);
            if (o.verbose()) {
                out.println("server ping data: " + cString(rdmaBuf));
                out.flush();
            }
            send();
            if (!waitRecv()) {
                break;
            }
            remoteAddr = recvBuf.getLong(0, ByteOrder.BIG_ENDIAN);
            rkey = recvBuf.getInt(8, ByteOrder.BIG_ENDIAN);
            postRecv();
            int pingLength = cString(rdmaBuf).length();
            if (pingLength == o.size()) {
                // rping.c writes strlen + 1 bytes back; that NUL would lie past the buffer
                throw new IllegalStateException("the client's ping has no NUL in its " + o.size() + " bytes");
            }
            rdma(WrOpcode.RDMA_WRITE, rdmaMr, pingLength + 1, remoteAddr, rkey);
            send();
        }
        debug("server DISCONNECT EVENT");
        if (!disconnected) {
            id.disconnect();
        }
        return 0;
    }

    private int client(InetAddress addr, InetAddress src) throws Exception {
        CmId id = keep(channel.createId());
        id.resolveAddr(src, new InetSocketAddress(addr, o.port()), 2000);
        waitEvent(CmEventType.ADDR_RESOLVED, o.stallMillis());
        id.resolveRoute(2000);
        waitEvent(CmEventType.ROUTE_RESOLVED, o.stallMillis());
        setupQp(id);
        id.connect(ConnParam.defaults());
        waitEvent(CmEventType.ESTABLISHED, o.stallMillis());
        int start = 65;
        int rc = 0;
        for (int ping = 0; o.count() == 0 || ping < o.count(); ping++) {
            byte[] text = ("rdma-ping-" + ping + ": ").getBytes(StandardCharsets.US_ASCII);
            int cc = Math.min(text.length, o.size());
            startBuf.putBytes(0, text, 0, cc);
            for (int i = cc, c = start; i < o.size(); i++) {
                startBuf.putByte(i, (byte) c);
                if (++c > 122) {
                    c = 65;
                }
            }
            if (++start > 122) {
                start = 65;
            }
            startBuf.putByte(o.size() - 1, (byte) 0);
            formatSend(startMr);
            send();
            if (!waitRecv()) {
                throw new IllegalStateException("the server went away before ping " + ping + " was read");
            }
            postRecv();
            formatSend(rdmaMr);
            send();
            if (!waitRecv()) {
                throw new IllegalStateException("the server went away before ping " + ping + " was written back");
            }
            postRecv();
            if (o.validate()) {
                for (int i = 0; i < o.size(); i++) {
                    if (startBuf.getByte(i) != rdmaBuf.getByte(i)) {
                        out.println("data mismatch!");
                        rc = 1;
                        break;
                    }
                }
                if (rc != 0) {
                    break;
                }
            }
            if (o.verbose()) {
                out.println("ping data: " + cString(rdmaBuf));
                out.flush();
            }
        }
        id.disconnect();
        waitEvent(CmEventType.DISCONNECTED, o.stallMillis());
        return rc;
    }

    private void formatSend(MemoryRegion mr) {
        sendBuf.putLong(0, mr.address(), ByteOrder.BIG_ENDIAN);
        sendBuf.putInt(8, mr.rkey(), ByteOrder.BIG_ENDIAN);
        sendBuf.putInt(12, o.size(), ByteOrder.BIG_ENDIAN);
    }

    private void send() {
        qp.postSend(new SendWr().wrId(2).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(sendMr, 0, INFO));
        waitCompletion(WcOpcode.SEND);
    }

    private void rdma(WrOpcode op, MemoryRegion local, int len, long remoteAddr, int rkey) {
        qp.postSend(new SendWr().wrId(3).opcode(op).sendFlags(SendFlags.SIGNALED).sge(local, 0, len)
                .rdma(remoteAddr, rkey));
        waitCompletion(op == WrOpcode.RDMA_READ ? WcOpcode.RDMA_READ : WcOpcode.RDMA_WRITE);
    }

    /** Waits for the next receive; false if the connection went down first (flushed receive or event). */
    private boolean waitRecv() {
        return waitCompletion(WcOpcode.RECV);
    }

    /**
     * Waits for the next completion of kind {@code op}; false once the connection is down. A completion of another
     * kind that comes first is kept for its own wait, not an error: RC orders each direction, not the two, so the
     * peer's next SEND (after it saw ours) can complete our receive before the ACK that completes our SEND arrives
     * (Linux rxe answers that way now and then; rping.c's completion handler takes them in any order too).
     */
    private boolean waitCompletion(WcOpcode op) {
        long last = System.nanoTime();
        while (true) {
            if (done[op.ordinal()] > 0) {
                done[op.ordinal()]--;
                return true;
            }
            ctx.progress();
            if (cq.poll(wc) > 0) {
                if (!wc.isSuccess()) {
                    // a flushed WR: the QP is in ERR, so the connection is going down (rping.c counts it as
                    // "flushed", not as an error); the peer's DREQ moves the QP to ERR before its DISCONNECTED event
                    // is queued, so a flush can be polled before the event
                    if (wc.status() == WcStatus.WR_FLUSH_ERR || disconnected || pollDisconnect()) {
                        return false;
                    }
                    throw new IllegalStateException(wc.opcode() + " completed with " + wc.status());
                }
                switch (wc.opcode()) {
                    case RECV:
                        if (wc.byteLen() != INFO) {
                            throw new IllegalStateException("received " + wc.byteLen() + " bytes, rping's buffer info"
                                    + " has " + INFO);
                        }
                        break;
                    case SEND:
                    case RDMA_READ:
                    case RDMA_WRITE:
                        break;
                    default:
                        throw new IllegalStateException("an unexpected " + wc.opcode() + " completion");
                }
                done[wc.opcode().ordinal()]++;
                continue;
            }
            if (pollDisconnect()) {
                return false;
            }
            if (o.stallMillis() > 0 && System.nanoTime() - last > o.stallMillis() * 1_000_000L) {
                throw new IllegalStateException("no " + op + " completion within " + o.stallMillis() + " ms");
            }
            Thread.onSpinWait();
        }
    }

    private boolean pollDisconnect() {
        CmEvent e = channel.poll();
        if (e == null) {
            return disconnected;
        }
        debug("cma event " + e);
        if (e.type() == CmEventType.DISCONNECTED) {
            disconnected = true;
        }
        return disconnected;
    }

    private CmEvent waitEvent(CmEventType type, long millis) throws InterruptedException {
        long until = millis == 0 ? Long.MAX_VALUE : System.currentTimeMillis() + millis;
        while (System.currentTimeMillis() < until) {
            CmEvent e = channel.get(50, java.util.concurrent.TimeUnit.MILLISECONDS);
            if (e == null) {
                continue;
            }
            debug("cma event " + e);
            if (e.type() == type) {
                return e;
            }
            if (e.type() == CmEventType.TIMEWAIT_EXIT) {
                continue;
            }
            throw new IllegalStateException("waiting for " + type + ": " + e);
        }
        throw new IllegalStateException("no " + type + " event within " + millis + " ms");
    }

    private static String cString(UnsafeBuffer b) {
        int n = 0;
        while (n < b.capacity() && b.getByte(n) != 0) {
            n++;
        }
        byte[] s = new byte[n];
        b.getBytes(0, s);
        return new String(s, StandardCharsets.US_ASCII);
    }

    private void debug(String s) {
        if (o.debug()) {
            out.println(s);
            out.flush();
        }
    }
}
