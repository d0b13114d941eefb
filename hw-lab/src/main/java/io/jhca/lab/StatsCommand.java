package io.jhca.lab;

import io.jhca.memory.DmaRegion;
import io.jhca.verbs.Access;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Context;
import io.jhca.verbs.DeviceInfo;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.Verbs;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code rdma statistic show}: a device's counters ({@code Context.statistics()}) as one line per port,
 * {@code link DEV/1 name value ...}, and with {@code --qp N} a QP's ({@code QueuePair.statistics()}) as
 * {@code link DEV/1 lqpn N qp-type RC name value ...} (iproute2 rdma/stat.c prints name-value pairs the same way).
 *
 * <p>A user-space driver's counters live in the process that drives the device, so a fresh process sees only what
 * it did itself: {@code --exchange N} first runs N signaled 4 KiB RDMA WRITEs from DEV to its peer device in this
 * process (as {@code perf} picks it) over one RC QP per side, then prints both devices and, with {@code --qp},
 * that QP of DEV (its number is printed too).
 */
@Command(name = "stats", mixinStandardHelpOptions = true,
        description = "Show device and QP counters, as rdma statistic show does.")
public final class StatsCommand implements Runnable {
    private static final int WRITE_BYTES = 4096;

    @Spec
    CommandSpec spec;

    @Parameters(index = "0", arity = "0..1", paramLabel = "DEV", description = "device (default: every device)")
    String device;

    @Option(names = "--qp", paramLabel = "QPN", description = "also show the counters of this QP of DEV")
    Integer qpn;

    @Option(names = "--exchange", paramLabel = "N", description = "first send N RDMA WRITEs from DEV to its peer")
    int exchange;

    @Override
    public void run() {
        PrintWriter out = spec.commandLine().getOut();
        if (exchange < 0) {
            throw new VerbsException(VerbsException.EINVAL, "--exchange " + exchange + " must not be negative");
        }
        if (exchange == 0) {
            if (qpn != null) {
                throw new VerbsException(VerbsException.ENOENT, "no QP " + qpn + " in this process: a user-space "
                        + "driver's QPs and counters live in the process that runs them; --exchange N makes traffic here");
            }
            List<String> names = new ArrayList<>();
            if (device != null) {
                names.add(device);
            } else {
                for (DeviceInfo d : Verbs.devices()) {
                    names.add(d.name());
                }
            }
            for (String n : names) {
                try (Context ctx = Verbs.open(n)) {
                    link(out, ctx, ctx.statistics());
                }
            }
            out.flush();
            return;
        }
        String[] pair = Devices.pair(device, null);
        try (Context a = Verbs.open(pair[0]); Context b = pair[1].equals(pair[0]) ? null : Verbs.open(pair[1])) {
            Context peer = b != null ? b : a;
            try (Side sa = new Side(a); Side sb = new Side(peer)) {
                sa.connect(sb);
                sb.connect(sa);
                write(sa, sb, a, b);
                out.printf("# %d RDMA WRITEs of %d B from %s QP %d to %s QP %d%n", exchange, WRITE_BYTES, a.name(),
                        sa.qp.qpn(), peer.name(), sb.qp.qpn());
                link(out, a, a.statistics());
                if (b != null) {
                    link(out, b, b.statistics());
                }
                if (qpn != null) {
                    QueuePair q = qpn == sa.qp.qpn() ? sa.qp : b == null && qpn == sb.qp.qpn() ? sb.qp : null;
                    if (q == null) {
                        throw new VerbsException(VerbsException.ENOENT, "no QP " + qpn + " on " + a.name()
                                + " in this process (it has QP " + sa.qp.qpn() + ")");
                    }
                    qp(out, a, q);
                }
            }
        }
        out.flush();
    }

    /** {@code link DEV/1 name value ...}. */
    static void link(PrintWriter out, Context ctx, Map<String, Long> counters) {
        StringBuilder sb = new StringBuilder("link ").append(ctx.name()).append("/1");
        for (Map.Entry<String, Long> e : counters.entrySet()) {
            sb.append(' ').append(e.getKey()).append(' ').append(e.getValue());
        }
        out.println(sb);
    }

    /** {@code link DEV/1 lqpn N qp-type T name value ...}. */
    static void qp(PrintWriter out, Context ctx, QueuePair q) {
        StringBuilder sb = new StringBuilder("link ").append(ctx.name()).append("/1 lqpn ").append(q.qpn())
                .append(" qp-type ").append(q.type());
        for (Map.Entry<String, Long> e : q.statistics().entrySet()) {
            sb.append(' ').append(e.getKey()).append(' ').append(e.getValue());
        }
        out.println(sb);
    }

    private void write(Side sa, Side sb, Context a, Context b) {
        WorkCompletion wc = new WorkCompletion();
        SendWr wr = new SendWr().opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                .sge(sa.mr, 0, WRITE_BYTES).rdma(sb.mr.address(), sb.mr.rkey());
        long deadline = System.nanoTime() + 30_000_000_000L;
        for (int i = 0; i < exchange; i++) {
            sa.qp.postSend(wr.wrId(i));
            while (sa.cq.poll(wc) == 0) {
                a.progress();
                if (b != null) {
                    b.progress();
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new VerbsException(VerbsException.ETIMEDOUT, "RDMA WRITE " + i + " did not complete in 30 s");
                }
            }
            if (wc.status() != WcStatus.SUCCESS) {
                throw new VerbsException(VerbsException.EIO, "RDMA WRITE " + i + " completed with " + wc.status());
            }
        }
    }

    /** One end: PD, CQ, a registered buffer and an RC QP. */
    private static final class Side implements AutoCloseable {
        final Context ctx;
        final ProtectionDomain pd;
        final CompletionQueue cq;
        final DmaRegion mem;
        final MemoryRegion mr;
        final QueuePair qp;

        Side(Context ctx) {
            this.ctx = ctx;
            pd = ctx.allocatePd();
            cq = ctx.createCq(16);
            mem = LabMemory.allocate(ctx, WRITE_BYTES);
            mr = pd.register(mem, 0, WRITE_BYTES, Access.LOCAL_WRITE.bit() | Access.REMOTE_WRITE.bit());
            qp = pd.createQp(QpInitAttributes.rc(cq, cq).maxSendWr(4).maxRecvWr(1));
        }

        void connect(Side remote) {
            int gid = GidChoice.choose(remote.ctx, 1, null);
            int sgid = GidChoice.choose(ctx, 1, null);
            qp.modify(QpAttributes.toInit(1, Access.REMOTE_WRITE));
            qp.modify(QpAttributes.toRtr(remote.qp.qpn(), 0, AhAttributes.to(remote.ctx.queryGid(1, gid)).sgidIndex(sgid),
                    Mtu.MTU_1024));
            qp.modify(QpAttributes.toRts(0));
        }

        @Override
        public void close() {
            qp.close();
            mr.close();
            mem.close();
            cq.close();
            pd.close();
        }
    }
}
