package io.jhca.lab;

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
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.security.SecureRandom;

/**
 * {@code hwlab mcast send}: publishes {@code -n} numbered UD SENDs to the group (QPN 0xFFFFFF), as fast as the send
 * queue takes them or at {@code --rate} messages per second, and prints the rate it sent at. Every 32nd send is
 * signaled (a completion retires all before it, as perftest's cq moderation does); each message has its own slot
 * of the buffer until its send completed.
 */
@Command(name = "send", mixinStandardHelpOptions = true, description = "Publish numbered datagrams to a multicast group.")
public final class McastSend implements Runnable {
    private static final int SQ_DEPTH = 128;
    private static final int SIGNAL_EVERY = 32;

    @Spec
    CommandSpec spec;

    @Mixin
    McastCommand.Common common = new McastCommand.Common();

    @Option(names = {"-n", "--iters"}, paramLabel = "N", description = "messages to send (default ${DEFAULT-VALUE})")
    long iters = 1000;

    @Option(names = "--rate", paramLabel = "R", description = "messages per second; 0 = as fast as possible (default ${DEFAULT-VALUE})")
    double rate;

    @Override
    public void run() {
        PrintWriter out = spec.commandLine().getOut();
        common.checkSize();
        if (iters < 1 || rate < 0) {
            throw new VerbsException(VerbsException.EINVAL, "-n must be at least 1 and --rate not negative");
        }
        Gid mgid = common.mgid();
        long session = new SecureRandom().nextLong() & Long.MAX_VALUE;
        try (Context ctx = Devices.open(common.device != null ? common.device : Devices.first());
             ProtectionDomain pd = ctx.allocatePd();
             CompletionQueue cq = ctx.createCq(SQ_DEPTH * 2);
             DmaRegion mem = LabMemory.allocate(ctx, (long) SQ_DEPTH * common.size);
             MemoryRegion mr = pd.register(mem, 0, mem.length(), Access.LOCAL_WRITE.bit());
             QueuePair qp = pd.createQp(QpInitAttributes.ud(cq, cq).maxSendWr(SQ_DEPTH).maxRecvWr(1))) {
            int sgid = GidChoice.choose(ctx, 1, common.gidIndex);
            qp.modify(QpAttributes.toInitUd(1, common.qkey()));
            qp.modify(QpAttributes.toRtrUd());
            qp.modify(QpAttributes.toRtsUd(0));
            try (AddressHandle ah = pd.createAh(AhAttributes.to(mgid).sgidIndex(sgid))) {
                out.printf("mcast send: %s QP 0x%06x to %s (%s), %d messages of %d B%s%n", ctx.name(), qp.qpn(),
                        mgid.toInetAddress().getHostAddress(), mgid, iters, common.size,
                        rate > 0 ? String.format(" at %.0f/s", rate) : "");
                out.flush();
                long start = System.nanoTime();
                send(ctx, qp, cq, mr, mem, ah, session, start);
                double secs = (System.nanoTime() - start) / 1e9;
                out.printf("mcast send: sent %d messages in %.3f s: %.4f Mpps, %.2f MB/s%n", iters, secs,
                        iters / secs / 1e6, iters * (double) common.size / secs / 1e6);
            }
        }
        out.flush();
    }

    private void send(Context ctx, QueuePair qp, CompletionQueue cq, MemoryRegion mr, DmaRegion mem,
            AddressHandle ah, long session, long start) {
        WorkCompletion wc = new WorkCompletion();
        SendWr wr = new SendWr().opcode(WrOpcode.SEND);
        long retired = 0; // sends known complete
        long deadline;
        for (long seq = 0; seq < iters; seq++) {
            if (rate > 0) {
                long due = start + (long) (seq * 1e9 / rate);
                while (System.nanoTime() - due < 0) {
                    ctx.progress();
                    retired = reap(cq, wc, retired);
                }
            }
            deadline = System.nanoTime() + 30_000_000_000L;
            while (seq - retired >= SQ_DEPTH) {
                ctx.progress();
                retired = reap(cq, wc, retired);
                if (System.nanoTime() - deadline > 0) {
                    throw new VerbsException(VerbsException.ETIMEDOUT, "send " + seq + ": no send completion in 30 s");
                }
            }
            int slot = (int) (seq % SQ_DEPTH) * common.size;
            boolean last = seq == iters - 1;
            FeedPayload.put(mem.buffer(), slot, seq, session, last ? iters : FeedPayload.NOT_LAST);
            boolean signaled = last || (seq + 1) % SIGNAL_EVERY == 0;
            wr.wrId(seq + 1).sendFlags(signaled ? SendFlags.SIGNALED : 0).sge(mr, slot, common.size)
                    .ud(ah, QueuePair.MULTICAST_QPN, common.qkey());
            if (qp.postSend(wr) != 1) {
                seq--; // queue full after all: reap and retry
                ctx.progress();
                retired = reap(cq, wc, retired);
            }
        }
        deadline = System.nanoTime() + 30_000_000_000L;
        while (retired < iters) {
            ctx.progress();
            retired = reap(cq, wc, retired);
            if (System.nanoTime() - deadline > 0) {
                throw new VerbsException(VerbsException.ETIMEDOUT, "the last sends did not complete in 30 s");
            }
        }
    }

    /** Polls send completions; each retires every send up to its wr_id. */
    private static long reap(CompletionQueue cq, WorkCompletion wc, long retired) {
        while (cq.poll(wc) == 1) {
            if (wc.status() != WcStatus.SUCCESS) {
                throw new VerbsException(VerbsException.EIO, "send " + (wc.wrId() - 1) + " completed with " + wc.status());
            }
            retired = Math.max(retired, wc.wrId());
        }
        return retired;
    }
}
