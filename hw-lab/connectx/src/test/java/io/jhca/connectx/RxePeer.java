package io.jhca.connectx;

import static org.junit.jupiter.api.Assertions.fail;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import io.jhca.rxe.RxeContext;
import io.jhca.rxe.RxeDeviceConfig;
import io.jhca.rxe.RxeProvider;
import io.jhca.verbs.Access;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.WorkCompletion;

/** The other end of the wire: an ordinary rxe device (its own engine thread) with a PD and a registered buffer. */
final class RxePeer implements AutoCloseable {

    static final int ALL_ACCESS = Access.mask(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ,
            Access.REMOTE_ATOMIC);

    final RxeContext ctx;
    final ProtectionDomain pd;
    final DmaRegion mem;
    final MemoryRegion mr;
    private final java.util.List<AutoCloseable> children = new java.util.ArrayList<>();

    RxePeer(String name, String ip) {
        ctx = RxeProvider.open(RxeDeviceConfig.builder(name).address(ip).build());
        pd = ctx.allocatePd();
        mem = DmaMemory.allocate(1 << 16);
        mr = pd.register(mem, 0, mem.length(), ALL_ACCESS);
    }

    /** Remembers a QP, CQ or AH to close (in reverse order) before the device. */
    <T extends AutoCloseable> T own(T child) {
        children.add(child);
        return child;
    }

    static WorkCompletion await(CompletionQueue cq) {
        WorkCompletion wc = new WorkCompletion();
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (cq.poll(wc) == 0) {
            if (System.nanoTime() > deadline) {
                fail("no completion on the rxe peer's " + cq.describe() + " within 10 s");
            }
            Thread.onSpinWait();
        }
        return wc;
    }

    @Override
    public void close() {
        for (int i = children.size() - 1; i >= 0; i--) {
            try {
                children.get(i).close();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        mr.close();
        pd.close();
        ctx.close();
        mem.close();
    }
}
