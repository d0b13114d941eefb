package io.jhca.tests.twojvm;

import io.jhca.lab.HwLab;
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
import io.jhca.verbs.Verbs;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.PrintWriter;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * One side of {@link Ipv6MulticastNamespaceTest}, in a JVM inside its network namespace: adds rxe9 on the veth end
 * ({@code hwlab link add}), then sends to an IPv6 group or receives from it on two UD QPs. Arguments:
 * {@code send IFACE MGID SOURCE DIR} or {@code recv IFACE MGID SOURCE DIR} (SOURCE: the sender's IPv6 address; DIR:
 * where the flag files go). Every check failing prints {@code FAIL: ...} and exits 1; the receiver prints
 * {@code OK: ...} lines for what it saw. {@code perf-server IFACE MGID PEER DIR} and {@code perf-client IFACE MGID
 * SERVER DIR} run {@code hwlab perf send-bw --mcg} from the device's IPv6 GID instead (the client once the server
 * listens).
 */
public final class Ipv6McastSide {
    static final int QKEY = 0x11111111;
    static final int GRH = 40;
    static final int MSG = 64;
    static final int SLOT = 256;
    static final int BATCH = 5;
    /** The second batch's first sequence number: sent once one receiving QP has detached. */
    static final long SECOND = 100;
    static final long WAIT_NANOS = 30_000_000_000L; // a hang guard, not a measurement

    private Ipv6McastSide() {
    }

    public static void main(String[] args) throws Exception {
        String role = args[0];
        String iface = args[1];
        Gid mgid = Gid.of(InetAddress.getByName(args[2]));
        Gid source = Gid.of(InetAddress.getByName(args[3]));
        Path dir = Path.of(args[4]);
        PrintWriter out = new PrintWriter(System.out, true);
        int rc = HwLab.execute(new String[] {"link", "add", "rxe9", "netdev", iface}, out, out);
        if (rc != 0) {
            fail("hwlab link add rxe9 netdev " + iface + " exited " + rc);
        }
        if (role.startsWith("perf-")) {
            perf(role.equals("perf-server"), args[2], args[3], dir, out);
            return;
        }
        try (Context ctx = Verbs.open("rxe9")) {
            int sgid = ipv6GidIndex(ctx);
            out.println("rxe9 GID[" + sgid + "] " + text(ctx.queryGid(1, sgid)));
            if (role.equals("send")) {
                send(ctx, sgid, mgid, dir, out);
            } else {
                receive(ctx, mgid, source, dir, out);
            }
        }
        out.println("DONE " + role);
        System.exit(0);
    }

    /** hwlab perf send-bw --mcg -M MGID -x (the IPv6 GID): the server flags when it listens, the client awaits that. */
    private static void perf(boolean server, String mgid, String peer, Path dir, PrintWriter out) throws Exception {
        int gidx;
        try (Context ctx = Verbs.open("rxe9")) {
            gidx = ipv6GidIndex(ctx);
        }
        Path listening = dir.resolve("perf-listening");
        java.util.List<String> a = new java.util.ArrayList<>(java.util.List.of("perf", "send-bw", "-d", "rxe9", "--mcg",
                "-M", mgid, "-x", Integer.toString(gidx), "-n", "200", "-s", "512", "-p", "18515"));
        PrintWriter w = out;
        if (server) {
            a.add("--server");
            w = new PrintWriter(new java.io.Writer() {
                private final StringBuilder line = new StringBuilder();

                @Override
                public void write(char[] c, int off, int len) {
                    for (int i = off; i < off + len; i++) {
                        out.write(c[i]);
                        if (c[i] != '\n') {
                            line.append(c[i]);
                            continue;
                        }
                        if (line.indexOf("(listening on") >= 0) {
                            out.flush();
                            try {
                                Files.createFile(listening);
                            } catch (java.io.IOException e) {
                                throw new java.io.UncheckedIOException(e);
                            }
                        }
                        line.setLength(0);
                    }
                }

                @Override
                public void flush() {
                    out.flush();
                }

                @Override
                public void close() {
                    out.flush();
                }
            }, true);
        } else {
            long end = System.nanoTime() + WAIT_NANOS;
            while (!Files.exists(listening)) {
                if (System.nanoTime() - end > 0) {
                    throw fail("the perf server did not listen within " + WAIT_NANOS / 1_000_000_000L + " s");
                }
                Thread.sleep(10);
            }
            a.add(peer);
        }
        int rc = HwLab.execute(a.toArray(new String[0]), w, out);
        w.flush();
        out.println("== exit " + rc + ": " + String.join(" ", a));
        out.flush();
        System.exit(rc == 0 ? 0 : 1);
    }

    /** The GID of the interface's global IPv6 address (not IPv4-mapped, not link-local fe80::/10). */
    static int ipv6GidIndex(Context ctx) {
        int n = ctx.queryPort(1).gidTblLen();
        for (int i = 0; i < n; i++) {
            Gid g = ctx.queryGid(1, i);
            if (!g.isZero() && !g.isIpv4Mapped() && !((g.get(0) & 0xFF) == 0xFE && (g.get(1) & 0xC0) == 0x80)) {
                return i;
            }
        }
        throw fail("rxe9 has no global IPv6 GID");
    }

    private static void send(Context ctx, int sgid, Gid mgid, Path dir, PrintWriter out) throws Exception {
        try (ProtectionDomain pd = ctx.allocatePd();
             CompletionQueue cq = ctx.createCq(64);
             DmaRegion mem = DmaMemory.allocate(SLOT * 16);
             MemoryRegion mr = pd.register(mem, Access.LOCAL_WRITE);
             QueuePair qp = pd.createQp(QpInitAttributes.ud(cq, cq).maxSendWr(16).maxRecvWr(1))) {
            ready(qp);
            try (AddressHandle ah = pd.createAh(AhAttributes.to(mgid).sgidIndex(sgid))) {
                Path tmp = Files.writeString(dir.resolve("sender-qpn.tmp"), Integer.toString(qp.qpn()));
                Files.move(tmp, dir.resolve("sender-qpn"), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
                await(ctx, dir.resolve("attached"));
                batch(ctx, qp, cq, mr, mem, ah, 0);
                out.println("sent " + BATCH + " from QP 0x" + Integer.toHexString(qp.qpn()));
                await(ctx, dir.resolve("detached"));
                batch(ctx, qp, cq, mr, mem, ah, SECOND);
                out.println("sent " + BATCH + " more");
            }
        }
    }

    private static void batch(Context ctx, QueuePair qp, CompletionQueue cq, MemoryRegion mr, DmaRegion mem,
            AddressHandle ah, long first) {
        UnsafeBuffer b = mem.buffer();
        for (int i = 0; i < BATCH; i++) {
            long seq = first + i;
            b.putLong(i * SLOT, seq);
            b.putLong(i * SLOT + 8, ~seq);
            if (qp.postSend(new SendWr().wrId(seq).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
                    .sge(mr, i * SLOT, MSG).ud(ah, QueuePair.MULTICAST_QPN, QKEY)) != 1) {
                throw fail("send " + seq + " not posted");
            }
        }
        WorkCompletion wc = new WorkCompletion();
        for (int i = 0; i < BATCH; i++) {
            poll(ctx, cq, wc, "send completion " + (first + i));
            if (wc.status() != WcStatus.SUCCESS) {
                throw fail("send " + wc.wrId() + " completed with " + wc.status());
            }
        }
    }

    private static void receive(Context ctx, Gid mgid, Gid source, Path dir, PrintWriter out) throws Exception {
        try (ProtectionDomain pd = ctx.allocatePd();
             CompletionQueue cqa = ctx.createCq(64);
             CompletionQueue cqb = ctx.createCq(64);
             DmaRegion mem = DmaMemory.allocate(SLOT * 64);
             MemoryRegion mr = pd.register(mem, Access.LOCAL_WRITE);
             QueuePair qa = pd.createQp(QpInitAttributes.ud(cqa, cqa).maxSendWr(1).maxRecvWr(32));
             QueuePair qb = pd.createQp(QpInitAttributes.ud(cqb, cqb).maxSendWr(1).maxRecvWr(32))) {
            ready(qa);
            ready(qb);
            for (int i = 0; i < 2 * BATCH; i++) {
                qa.postRecv(new RecvWr(1).wrId(i).sge(mr, (long) i * SLOT, GRH + MSG));
                qb.postRecv(new RecvWr(1).wrId(32 + i).sge(mr, (long) (32 + i) * SLOT, GRH + MSG));
            }
            qa.attachMcast(mgid, 0);
            qb.attachMcast(mgid, 0);
            Files.createFile(dir.resolve("attached"));
            await(ctx, dir.resolve("sender-qpn"));
            int senderQpn = Integer.parseInt(Files.readString(dir.resolve("sender-qpn")).trim());
            UnsafeBuffer b = mem.buffer();
            WorkCompletion wc = new WorkCompletion();
            for (int i = 0; i < BATCH; i++) {
                check(ctx, cqa, wc, b, i, i, senderQpn, source, mgid, "QP A");
                check(ctx, cqb, wc, b, 32 + i, i, senderQpn, source, mgid, "QP B");
            }
            out.println("OK: both QPs got sequence 0.." + (BATCH - 1) + " with the GRH's source " + text(source)
                    + " and destination " + text(mgid));
            qb.detachMcast(mgid, 0);
            Files.createFile(dir.resolve("detached"));
            for (int i = 0; i < BATCH; i++) {
                check(ctx, cqa, wc, b, BATCH + i, SECOND + i, senderQpn, source, mgid, "QP A");
            }
            // QP A's copies have arrived; B's would have come from the same datagrams: it must have none
            ctx.progress();
            if (cqb.poll(wc) != 0) {
                throw fail("QP B got wr_id " + wc.wrId() + " after it detached");
            }
            out.println("OK: after QP B detached, QP A got sequence " + SECOND + ".." + (SECOND + BATCH - 1)
                    + " and QP B nothing");
            qa.detachMcast(mgid, 0);
        }
    }

    /** The next receive completion of {@code cq}: slot, length, source QP, payload and the IPv6 GRH. */
    private static void check(Context ctx, CompletionQueue cq, WorkCompletion wc, UnsafeBuffer b, int slot, long seq,
            int senderQpn, Gid source, Gid mgid, String who) {
        String what = who + " message " + seq;
        poll(ctx, cq, wc, what);
        if (wc.status() != WcStatus.SUCCESS || wc.wrId() != slot || wc.byteLen() != GRH + MSG) {
            throw fail(what + ": status " + wc.status() + " wr_id " + wc.wrId() + " (expected " + slot + ") length "
                    + wc.byteLen() + " (expected " + (GRH + MSG) + ")");
        }
        if (wc.srcQp() != senderQpn) {
            throw fail(what + ": src_qp 0x" + Integer.toHexString(wc.srcQp()) + ", the sender is 0x"
                    + Integer.toHexString(senderQpn));
        }
        int at = slot * SLOT;
        if (b.getLong(at + GRH) != seq || b.getLong(at + GRH + 8) != ~seq) {
            throw fail(what + ": payload " + b.getLong(at + GRH) + ", expected " + seq);
        }
        // the GRH is the IPv6 header itself: version 6, next header UDP, source at 8, destination at 24 (RFC 8200)
        if ((b.getByte(at) & 0xF0) != 0x60 || b.getByte(at + 6) != 17) {
            throw fail(what + ": GRH is not an IPv6 header of a UDP datagram: first byte 0x"
                    + Integer.toHexString(b.getByte(at) & 0xFF) + ", next header " + b.getByte(at + 6));
        }
        for (int k = 0; k < 16; k++) {
            if (b.getByte(at + 8 + k) != source.get(k) || b.getByte(at + 24 + k) != mgid.get(k)) {
                throw fail(what + ": GRH byte " + k + " of source/destination differs from " + source + " / " + mgid);
            }
        }
    }

    /** An IPv6 GID in its shortest text (RFC 5952), as the test names it. */
    static String text(Gid g) {
        return io.jhca.lab.Inet6Text.format(g.bytes());
    }

    private static void ready(QueuePair qp) {
        qp.modify(QpAttributes.toInitUd(1, QKEY));
        qp.modify(QpAttributes.toRtrUd());
        qp.modify(QpAttributes.toRtsUd(0));
    }

    private static void poll(Context ctx, CompletionQueue cq, WorkCompletion wc, String what) {
        long end = System.nanoTime() + WAIT_NANOS;
        while (cq.poll(wc) == 0) {
            ctx.progress();
            if (System.nanoTime() - end > 0) {
                throw fail("no completion for " + what + " within " + WAIT_NANOS / 1_000_000_000L + " s; "
                        + diagnostics(ctx));
            }
            Thread.onSpinWait();
        }
    }

    /** The device's non-zero counters and this namespace's UDPv6 counters: where a datagram that never came went. */
    private static String diagnostics(Context ctx) {
        StringBuilder sb = new StringBuilder("device counters (non-zero): ")
                .append(io.jhca.tests.harness.Harness.nonZero(ctx));
        try {
            sb.append("; this namespace's IPv6 counters (non-zero):");
            for (String l : Files.readAllLines(Path.of("/proc/net/snmp6"))) {
                String[] f = l.trim().split("\\s+");
                if (f.length == 2 && !f[1].equals("0")) {
                    sb.append(' ').append(f[0]).append('=').append(f[1]);
                }
            }
        } catch (java.io.IOException | RuntimeException e) {
            sb.append(" (unavailable: ").append(e).append(')');
        }
        return sb.toString();
    }

    private static void await(Context ctx, Path f) throws InterruptedException {
        long end = System.nanoTime() + WAIT_NANOS;
        while (!Files.exists(f)) {
            ctx.progress();
            if (System.nanoTime() - end > 0) {
                throw fail(f.getFileName() + " did not appear within " + WAIT_NANOS / 1_000_000_000L + " s; "
                        + diagnostics(ctx));
            }
            Thread.sleep(5);
        }
    }

    private static IllegalStateException fail(String message) {
        System.out.println("FAIL: " + message);
        System.out.flush();
        System.exit(1);
        return new IllegalStateException(message);
    }
}
