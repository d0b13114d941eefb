package io.jhca.rxe;

import java.util.SplittableRandom;
import java.util.concurrent.locks.LockSupport;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaOptions;
import io.jhca.memory.DmaRegion;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

/**
 * Run in a child JVM by {@link MrRaceTest}: an MR is deregistered and its region closed by one thread while
 * another copies from it, inline at post time ({@code inline}) or in the engine's gather ({@code engine}). The
 * poster drives both engines itself (CALLER mode), so it is copying most of the time. Copying from the unmapped
 * region kills the JVM with SIGSEGV; the fixed outcome is an exception or an error completion. Prints the counts
 * and exits 0.
 */
public final class MrRaceProbe {

    /** Rounds per run; each engine round opens a rig of two devices on fresh 127.11.x.y addresses. */
    static final int ROUNDS = 100;

    private MrRaceProbe() {
    }

    public static void main(final String[] args) throws Exception {
        final long seed = Long.parseLong(args[1]);
        System.out.println("seed " + seed);
        final SplittableRandom random = new SplittableRandom(seed);
        final int[] outcome = "inline".equals(args[0]) ? inline(random) : engine(random);
        System.out.println("ENDED " + (outcome[0] + outcome[1]) + " REFUSED " + outcome[0] + " ERROR_COMPLETIONS "
                + outcome[1]);
        System.exit(0);
    }

    private static Thread closeLater(final SplittableRandom random, final long maxNanos, final MemoryRegion mr,
            final DmaRegion mem) {
        final long delay = random.nextLong(1, maxNanos);
        final Thread closer = new Thread(() -> {
            LockSupport.parkNanos(delay);
            mr.close();
            mem.close();
        });
        closer.start();
        return closer;
    }

    /** One rig; per round a fresh MR whose bytes are posted INLINE until the post is refused. */
    private static int[] inline(final SplittableRandom random) throws InterruptedException {
        int refused = 0;
        final WorkCompletion wc = new WorkCompletion();
        try (Rig rig = Rig.rc(ProgressMode.CALLER, 1 << 20, Mtu.MTU_4096)) {
            for (int round = 0; round < ROUNDS * 10; round++) {
                final DmaRegion mem = DmaMemory.allocate(DmaOptions.of(65536).lock(false));
                final MemoryRegion mr = rig.pdA.register(mem, 0, 65536, Rig.ALL_ACCESS);
                final SendWr wr = new SendWr().opcode(WrOpcode.RDMA_WRITE).rdma(rig.mrB.address(), rig.mrB.rkey())
                        .sge(mr, 0, 256);
                final Thread closer = closeLater(random, 300_000, mr, mem);
                try {
                    for (long i = 0; ; i++) {
                        final int flags = SendFlags.INLINE | (i % 8 == 7 ? SendFlags.SIGNALED : 0);
                        // back to back: the copy is at post time; the engines run only when the queue is full
                        if (rig.qpA.postSend(wr.wrId(i).sendFlags(flags)) == 0) {
                            rig.progress();
                            while (rig.cqA.poll(wc) == 1) {
                                if (!wc.isSuccess()) {
                                    throw new IllegalStateException("inline WRs never read the MR: " + wc);
                                }
                            }
                        }
                    }
                } catch (final VerbsException e) {
                    refused++;   // the MR is gone: the post names the lkey that no longer exists
                }
                closer.join();
            }
        }
        return new int[] {refused / 10, 0};
    }

    /** Per round a rig whose MR is posted from (64 KiB RDMA WRITEs) until a WR completes in error. */
    private static int[] engine(final SplittableRandom random) throws InterruptedException {
        int errors = 0;
        final WorkCompletion wc = new WorkCompletion();
        for (int round = 0; round < ROUNDS; round++) {
            try (Rig rig = Rig.rc(ProgressMode.CALLER, 1 << 20, Mtu.MTU_4096)) {
                final SendWr wr = new SendWr().opcode(WrOpcode.RDMA_WRITE).rdma(rig.mrB.address(), rig.mrB.rkey())
                        .sge(rig.mrA, 0, 64 * 1024);
                final Thread closer = closeLater(random, 2_000_000, rig.mrA, rig.memA);
                boolean failed = false;
                for (long i = 0; !failed; i++) {
                    rig.qpA.postSend(wr.wrId(i).sendFlags(i % 8 == 7 ? SendFlags.SIGNALED : 0));   // 0 when full
                    rig.progress();   // the gather from the MR happens here
                    while (rig.cqA.poll(wc) == 1) {
                        failed |= !wc.isSuccess();
                    }
                }
                errors++;   // the engine met the deregistered key: the WR completed in error
                closer.join();
            }
        }
        return new int[] {0, errors};
    }
}
