package io.jhca.mlx5;

import java.util.SplittableRandom;
import java.util.concurrent.locks.LockSupport;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaOptions;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.testdev.ScriptedFirmware;
import io.jhca.verbs.Access;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

/**
 * Run in a child JVM by {@link InlineRaceTest}: one thread posts INLINE RDMA WRITEs whose bytes come from an MR
 * while another deregisters that MR and closes its region. The QP copies inline bytes at post time; copying
 * from the unmapped region kills the JVM with SIGSEGV. Prints the outcome and exits 0 when nothing crashed.
 */
public final class InlineRaceProbe {

    private InlineRaceProbe() {
    }

    public static void main(String[] args) throws Exception {
        long seed = Long.parseLong(args[0]);
        System.out.println("seed " + seed);
        SplittableRandom random = new SplittableRandom(seed);
        ScriptedFirmware fw = Fixtures.firmware().start();
        Mlx5Context ctx = Fixtures.open(fw);
        ProtectionDomain pd = ctx.allocatePd();
        CompletionQueue cq = ctx.createCq(1024);
        DmaRegion dst = DmaMemory.allocate(DmaOptions.of(65536).lock(false));
        MemoryRegion dstMr = pd.register(dst, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
        QpInitAttributes init = QpInitAttributes.rc(cq, cq).maxSendWr(64).maxRecvWr(1).maxInlineData(256);
        QueuePair a = pd.createQp(init);
        QueuePair b = pd.createQp(init);
        connect(ctx, a, b);
        connect(ctx, b, a);
        WorkCompletion wc = new WorkCompletion();
        int refused = 0;
        long posted = 0;
        for (int round = 0; round < 100; round++) {
            DmaRegion src = DmaMemory.allocate(DmaOptions.of(65536).lock(false));
            MemoryRegion mr = pd.register(src, Access.LOCAL_WRITE);
            long delay = random.nextLong(1, 300_000);
            Thread closer = new Thread(() -> {
                LockSupport.parkNanos(delay);
                mr.close();
                src.close();
            });
            SendWr wr = new SendWr().opcode(WrOpcode.RDMA_WRITE).rdma(dstMr.address(), dstMr.rkey())
                    .sendFlags(SendFlags.INLINE).sge(mr, 0, 256);
            closer.start();
            try {
                for (long i = 0; ; i++) {
                    wr.wrId(i).sendFlags(SendFlags.INLINE | (i % 16 == 15 ? SendFlags.SIGNALED : 0));
                    if (a.postSend(wr) == 0) {
                        fw.process();
                        while (cq.poll(wc) == 1) {
                            if (!wc.isSuccess()) {
                                throw new IllegalStateException("error completion " + wc);
                            }
                        }
                    } else {
                        posted++;
                    }
                }
            } catch (VerbsException e) {
                refused++;   // the MR is gone: the post names the lkey that no longer exists
            }
            closer.join();
        }
        System.out.println("REFUSED " + refused + " POSTED " + posted);
        System.exit(0);
    }

    private static void connect(Mlx5Context ctx, QueuePair q, QueuePair peer) {
        q.modify(QpAttributes.toInit(1, Access.REMOTE_WRITE));
        q.modify(QpAttributes.toRtr(peer.qpn(), 0x100 + peer.qpn(), AhAttributes.to(ctx.queryGid(1, 1)).sgidIndex(1),
                Mtu.MTU_1024));
        q.modify(QpAttributes.toRts(0x100 + q.qpn()));
    }
}
