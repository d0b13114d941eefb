package io.jhca.mlx5.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteOrder;

import org.junit.jupiter.api.Test;

import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.testdev.LoopbackEngine;
import io.jhca.mlx5.wqe.Mlx5Opcode;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;

/**
 * The test device checks every address and length a WQE names before it copies: a WQE pointing outside the memory
 * the device may reach is an error completion, as on hardware, and the engine never touches that memory (a wild
 * pointer here used to crash the test JVM).
 */
class LoopbackBoundsTest {

    /** An address no test allocation has: page 1 of the address space, unmapped in every process. */
    private static final long WILD = 0x1000L;

    private final WorkCompletion wc = new WorkCompletion();

    private WcStatus postOne(RingFixture f, int opcode, WcOpcode wcOpcode, long raddr, long local, int length) {
        f.sq.startBatch();
        f.sq.begin(opcode, wcOpcode, 7, SendFlags.SIGNALED, 0);
        if (raddr != 0) {
            f.sq.raddr(raddr, 9);
        }
        if (opcode == Mlx5Opcode.ATOMIC_FA) {
            f.sq.atomic(1, 0);
        }
        f.sq.data(1, local, length);
        f.sq.finish();
        f.sq.ringDoorbell();
        assertEquals(1, f.engine.process());
        assertEquals(1, f.sendPoller.poll(wc));
        assertEquals(7, wc.wrId());
        return wc.status();
    }

    @Test
    void writeToAnUnreachableRemoteAddressIsARemoteAccessError() {
        try (RingFixture f = new RingFixture(4, 4, 4, 4, 8, SqBuffer.BF_OFF)) {
            DmaRegion mem = f.dma(4096);
            mem.buffer().putLong(0, 0x1122334455667788L, ByteOrder.BIG_ENDIAN);
            assertEquals(WcStatus.REM_ACCESS_ERR, postOne(f, Mlx5Opcode.RDMA_WRITE, WcOpcode.RDMA_WRITE, WILD,
                    mem.address(), 64));
        }
    }

    @Test
    void writeThatRunsOffTheEndOfItsRegionIsARemoteAccessError() {
        try (RingFixture f = new RingFixture(4, 4, 4, 4, 8, SqBuffer.BF_OFF)) {
            DmaRegion src = f.dma(4096);
            DmaRegion dst = f.dma(4096);
            // exact edge: the last byte of dst is reachable, one past it is not
            assertEquals(WcStatus.SUCCESS, postOne(f, Mlx5Opcode.RDMA_WRITE, WcOpcode.RDMA_WRITE,
                    dst.address() + 4096 - 64, src.address(), 64));
        }
        try (RingFixture f = new RingFixture(4, 4, 4, 4, 8, SqBuffer.BF_OFF)) {
            DmaRegion src = f.dma(4096);
            DmaRegion dst = f.dma(4096);
            // one byte past the region (even if another allocation happens to follow it: one WQE, one region)
            assertEquals(WcStatus.REM_ACCESS_ERR, postOne(f, Mlx5Opcode.RDMA_WRITE, WcOpcode.RDMA_WRITE,
                    dst.address() + 4096 - 63, src.address(), 64));
        }
    }

    @Test
    void gatherFromAnUnreachableLocalAddressIsALocalProtectionError() {
        try (RingFixture f = new RingFixture(4, 4, 4, 4, 8, SqBuffer.BF_OFF)) {
            DmaRegion dst = f.dma(4096);
            assertEquals(WcStatus.LOC_PROT_ERR, postOne(f, Mlx5Opcode.RDMA_WRITE, WcOpcode.RDMA_WRITE,
                    dst.address(), WILD, 64));
        }
    }

    @Test
    void readIntoAnUnreachableLocalAddressIsALocalProtectionError() {
        try (RingFixture f = new RingFixture(4, 4, 4, 4, 8, SqBuffer.BF_OFF)) {
            DmaRegion src = f.dma(4096);
            assertEquals(WcStatus.LOC_PROT_ERR, postOne(f, Mlx5Opcode.RDMA_READ, WcOpcode.RDMA_READ,
                    src.address(), WILD, 64));
        }
    }

    @Test
    void aGatherLongerThanTheEngineTakesIsALocalLengthError() {
        try (RingFixture f = new RingFixture(4, 4, 4, 4, 8, SqBuffer.BF_OFF)) {
            DmaRegion src = f.dma(1 << 17);
            DmaRegion dst = f.dma(1 << 17);
            assertEquals(WcStatus.LOC_LEN_ERR, postOne(f, Mlx5Opcode.RDMA_WRITE, WcOpcode.RDMA_WRITE,
                    dst.address(), src.address(), 1 << 17));
        }
    }

    @Test
    void aMisalignedAtomicIsARemoteAccessErrorAndTouchesNothing() {
        try (RingFixture f = new RingFixture(4, 4, 4, 4, 8, SqBuffer.BF_OFF)) {
            DmaRegion mem = f.dma(4096);
            mem.buffer().putLong(8, 5, ByteOrder.BIG_ENDIAN);
            assertEquals(WcStatus.REM_ACCESS_ERR, postOne(f, Mlx5Opcode.ATOMIC_FA, WcOpcode.FETCH_ADD,
                    mem.address() + 12, mem.address(), 8));
            assertEquals(5, mem.buffer().getLong(8, ByteOrder.BIG_ENDIAN));
        }
    }

    @Test
    void ringsOutsideReachableMemoryAreRefusedAtCreation() {
        LoopbackEngine engine = new LoopbackEngine((a, l) -> false);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> engine.cq(1, WILD, 8, WILD));
        assertEquals("CQ buffer [0x1000, +512) is not memory the device may reach", e.getMessage());
    }
}
