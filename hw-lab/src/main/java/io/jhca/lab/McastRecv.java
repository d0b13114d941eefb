package io.jhca.lab;

import io.jhca.memory.DmaRegion;
import io.jhca.verbs.Access;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Context;
import io.jhca.verbs.Gid;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * {@code hwlab mcast recv}: attaches {@code --qps} UD QPs of the device to the group (each a receiver of its own,
 * with its own CQ) and counts, per receiver, the feed's messages from their sequence numbers: received, lost (never
 * seen up to the last one sent, which the publisher's last message names), duplicates, out of order, and the rate
 * between the first and the last message. It ends when every receiver saw the last message, or {@code -n} messages,
 * or nothing came for {@code --idle} seconds after the first message. Messages of another session (a restarted
 * publisher) start a new count.
 */
@Command(name = "recv", mixinStandardHelpOptions = true,
        description = "Subscribe to a multicast group and print per-receiver received, lost and rate.")
public final class McastRecv implements Runnable {
    static final int GRH = 40;

    @Spec
    CommandSpec spec;

    @Mixin
    McastCommand.Common common = new McastCommand.Common();

    @Option(names = "--qps", paramLabel = "K", description = "receiver QPs attached to the group (default ${DEFAULT-VALUE})")
    int qps = 1;

    @Option(names = {"-r", "--rx-depth"}, paramLabel = "DEP", description = "receives posted per QP (default ${DEFAULT-VALUE})")
    int rxDepth = 512;

    @Option(names = {"-n", "--iters"}, paramLabel = "N", description = "stop after N messages per receiver (default: at the publisher's last)")
    long iters;

    @Option(names = "--idle", paramLabel = "SECONDS", description = "stop when nothing came for this long after the first message (default ${DEFAULT-VALUE})")
    double idle = 5;

    @Option(names = "--no-seq", description = "count datagrams only: a feed without hwlab's sequence numbers (e.g. ib_send_bw --mcg); nothing is known lost")
    boolean noSeq;

    @Option(names = "--wait", paramLabel = "SECONDS", description = "give up when no first message came in this long; 0 = forever (default ${DEFAULT-VALUE})")
    double wait = 60;

    @Override
    public void run() {
        PrintWriter out = spec.commandLine().getOut();
        common.checkSize();
        if (qps < 1 || rxDepth < 1 || iters < 0) {
            throw new VerbsException(VerbsException.EINVAL, "--qps and -r must be at least 1, -n not negative");
        }
        Gid mgid = common.mgid();
        List<Receiver> rx = new ArrayList<>();
        try (Context ctx = Devices.open(common.device != null ? common.device : Devices.first());
             ProtectionDomain pd = ctx.allocatePd()) {
            // room for the longest UD message (the port's MTU): a longer one than the buffer would be dropped unseen
            int slot = GRH + Math.max(common.size, ctx.queryPort(1).activeMtu().bytes());
            try {
                for (int k = 0; k < qps; k++) {
                    rx.add(new Receiver(ctx, pd, slot, mgid));
                }
                StringBuilder names = new StringBuilder();
                for (Receiver r : rx) {
                    names.append(names.length() == 0 ? "" : ", ").append(String.format("0x%06x", r.qp.qpn()));
                }
                out.printf("mcast recv: %s QP %s attached to %s (%s)%n", ctx.name(), names,
                        mgid.toInetAddress().getHostAddress(), mgid);
                out.flush();
                receive(ctx, rx);
                for (Receiver r : rx) {
                    r.report(out);
                }
            } finally {
                for (Receiver r : rx) {
                    r.close(mgid);
                }
            }
        }
        out.flush();
    }

    private void receive(Context ctx, List<Receiver> rx) {
        WorkCompletion wc = new WorkCompletion();
        long begin = System.nanoTime();
        long lastActivity = 0;
        while (true) {
            int got = ctx.progress();
            boolean allDone = true;
            for (Receiver r : rx) {
                while (r.cq.poll(wc) == 1) {
                    got++;
                    r.onCompletion(wc, System.nanoTime());
                }
                allDone &= r.done(iters);
            }
            long now = System.nanoTime();
            if (got > 0) {
                lastActivity = now;
            }
            if (allDone) {
                return;
            }
            boolean any = rx.stream().anyMatch(r -> r.received > 0);
            if (any && now - lastActivity > (long) (idle * 1e9)) {
                return; // the publisher is gone, or its last message was lost
            }
            if (!any && wait > 0 && now - begin > (long) (wait * 1e9)) {
                throw new VerbsException(VerbsException.ETIMEDOUT, "no message in " + wait + " s");
            }
            if (got == 0) {
                Thread.onSpinWait();
            }
        }
    }

    /** One subscriber QP, its receive buffers and its counts. */
    private final class Receiver {
        final CompletionQueue cq;
        final DmaRegion mem;
        final MemoryRegion mr;
        final QueuePair qp;
        final int slot;
        final RecvWr wr = new RecvWr();
        long session = -1;
        long received;
        long duplicates;
        long outOfOrder;
        long maxSeq = -1;
        long total = -1;
        long first;
        long last;
        long bytes;
        BitSet seen = new BitSet();
        boolean attached;

        Receiver(Context ctx, ProtectionDomain pd, int slot, Gid mgid) {
            this.slot = slot;
            cq = ctx.createCq(rxDepth);
            mem = LabMemory.allocate(ctx, (long) rxDepth * slot);
            mr = pd.register(mem, 0, mem.length(), Access.LOCAL_WRITE.bit());
            qp = pd.createQp(QpInitAttributes.ud(cq, cq).maxSendWr(1).maxRecvWr(rxDepth));
            qp.modify(QpAttributes.toInitUd(1, common.qkey()));
            qp.modify(QpAttributes.toRtrUd());
            for (int i = 0; i < rxDepth; i++) {
                post(i);
            }
            qp.attachMcast(mgid, 0);
            attached = true;
        }

        void post(int i) {
            if (qp.postRecv(wr.wrId(i).sge(mr, (long) i * slot, slot)) != 1) {
                throw new VerbsException(VerbsException.ENOSPC, "receive queue of QP " + qp.qpn() + " full");
            }
        }

        void onCompletion(WorkCompletion wc, long now) {
            int i = (int) wc.wrId();
            if (wc.status() != WcStatus.SUCCESS) {
                throw new VerbsException(VerbsException.EIO, "receive on QP " + qp.qpn() + " completed with " + wc.status());
            }
            int at = i * slot + GRH;
            if (noSeq) {
                received++;
                bytes += Math.max(0, wc.byteLen() - GRH);
                if (received == 1) {
                    first = now;
                }
                last = now;
            } else if (wc.byteLen() >= GRH + FeedPayload.HEADER) {
                long seq = mem.buffer().getLong(at + FeedPayload.SEQ);
                long sess = mem.buffer().getLong(at + FeedPayload.SESSION);
                long tot = mem.buffer().getLong(at + FeedPayload.TOTAL);
                if (sess != session) {
                    restart(sess, now);
                }
                count(seq, tot, wc.byteLen() - GRH, now);
            } else {
                count(received, FeedPayload.NOT_LAST, Math.max(0, wc.byteLen() - GRH), now); // not a feed message
            }
            post(i);
        }

        private void restart(long sess, long now) {
            session = sess;
            received = duplicates = outOfOrder = bytes = 0;
            maxSeq = total = -1;
            seen = new BitSet();
            first = now;
        }

        private void count(long seq, long tot, int len, long now) {
            if (received == 0 && duplicates == 0) {
                first = now;
            }
            last = now;
            if (seq >= 0 && seq < Integer.MAX_VALUE && seen.get((int) seq)) {
                duplicates++;
                return;
            }
            if (seq >= 0 && seq < Integer.MAX_VALUE) {
                seen.set((int) seq);
            }
            received++;
            bytes += len;
            if (seq < maxSeq) {
                outOfOrder++;
            }
            maxSeq = Math.max(maxSeq, seq);
            if (tot >= 0) {
                total = tot;
            }
        }

        boolean done(long n) {
            return n > 0 ? received >= n : total >= 0 && received + lost() >= total;
        }

        long expected() {
            if (noSeq) {
                return received;
            }
            return total >= 0 ? total : iters > 0 ? Math.max(iters, maxSeq + 1) : maxSeq + 1;
        }

        long lost() {
            return Math.max(0, expected() - received);
        }

        void report(PrintWriter out) {
            double secs = (last - first) / 1e9;
            long exp = expected();
            out.printf("mcast recv: QP 0x%06x received %d of %d, lost %d (%.3f%%), duplicates %d, out of order %d%s%n",
                    qp.qpn(), received, exp, lost(), exp > 0 ? 100.0 * lost() / exp : 0.0, duplicates, outOfOrder,
                    total >= 0 || noSeq ? "" : " (the publisher's last message did not arrive)");
            if (received > 1 && secs > 0) {
                out.printf("mcast recv: QP 0x%06x %.4f Mpps, %.2f MB/s over %.3f s%n", qp.qpn(),
                        (received - 1) / secs / 1e6, bytes / secs / 1e6, secs);
            }
        }

        void close(Gid mgid) {
            if (attached) {
                qp.detachMcast(mgid, 0);
            }
            qp.close();
            mr.close();
            mem.close();
            cq.close();
        }
    }
}
