package io.jhca.doorbell;

import java.lang.invoke.VarHandle;

/**
 * The memory fences of the mlx5 data path, each named after the two things it keeps in order.
 *
 * <p>The sequence they implement is rdma-core's {@code post_send_db} (providers/mlx5/qp.c):
 * WQE stores, {@link #wqeBeforeDoorbellRecord()}, doorbell record store, {@link #doorbellRecordBeforeMmio()},
 * MMIO doorbell store(s), {@link #flushMmio()}. On the completion side: owner byte load,
 * {@link #ownerBeforeCqeBody()}, CQE field loads.
 *
 * <p>Java cannot emit {@code sfence} or {@code lfence}. What HotSpot emits on x86-64: the acquire, release,
 * load-load and store-store fences are no instruction at all (they only stop the JIT from moving memory
 * accesses across them); {@code fullFence} is a locked no-op RMW ({@code lock addl $0,(%rsp)}). A locked
 * instruction waits for all earlier stores, write-combining ones included, to drain before later ones
 * (Intel SDM vol. 3A §8.1.2 "locked operations serialize all outstanding load and store operations",
 * §8.2.2 "writes cannot be reordered with locked instructions"); i386 rdma-core uses exactly that locked add
 * as its {@code mmio_flush_writes}. That this equals {@code sfence} for a WC BlueFlame mapping is
 * an inference still to confirm on hardware; for vfio's uncached BAR mapping it is more than enough.
 */
public final class Fences {

    private Fences() {
    }

    /**
     * WQE bytes before the doorbell record that publishes them: the device must not read a producer
     * index that covers a WQE it cannot see yet.
     *
     * <p>rdma-core {@code udma_to_device_barrier()} (util/udma_barrier.h): on x86-64 only a compiler
     * barrier ({@code asm volatile("" ::: "memory")}), because TSO keeps write-back stores in order and DMA
     * snoops the caches; on ARM {@code dmb oshst}. Here {@link VarHandle#storeStoreFence()}: no instruction on
     * x86 HotSpot, just no reordering of stores by the JIT.
     */
    public static void wqeBeforeDoorbellRecord() {
        VarHandle.storeStoreFence();
    }

    /**
     * Doorbell record (and WQEs) globally visible before the first MMIO store of the doorbell.
     *
     * <p>rdma-core {@code mmio_wc_start()} (util/udma_barrier.h), which is {@code sfence} on x86-64: WC stores
     * are weakly ordered against write-back stores. Here {@link VarHandle#fullFence()}, which HotSpot x86
     * emits as {@code lock addl $0,(%rsp)}; a locked instruction drains all earlier stores. On a bfreg several
     * send queues share, taking its {@link DoorbellLock} is this fence (rdma-core {@code mmio_wc_spinlock}).
     * Only a write-combining mapping (or a CPU without x86-64's store order) needs it: an uncached store, which
     * is what vfio's BAR mapping gives, is not reordered with earlier stores ({@link MmioWindow#putDoorbellBe}).
     */
    public static void doorbellRecordBeforeMmio() {
        VarHandle.fullFence();
    }

    /**
     * MMIO doorbell stores pushed out of the CPU's write-combining buffer now, before the next doorbell.
     *
     * <p>rdma-core {@code mmio_flush_writes()} (util/udma_barrier.h): {@code sfence} on x86-64,
     * {@code lock; addl $0,0(%esp)} on i386. It keeps doorbell latency low and, inside a bfreg lock, makes
     * doorbells from two CPUs reach the HCA in lock order. Here {@link VarHandle#fullFence()}
     * ({@code lock addl} on x86 HotSpot).
     */
    public static void flushMmio() {
        VarHandle.fullFence();
    }

    /**
     * The owner byte of a CQE (or EQE) before any other field of it: once the owner says "software", the
     * rest must not come from an earlier, stale read.
     *
     * <p>rdma-core {@code udma_from_device_barrier()} (util/udma_barrier.h), {@code lfence} on x86-64,
     * used in cq.c after {@code next_cqe_sw}. Here {@link VarHandle#acquireFence()}: no instruction on x86
     * HotSpot (loads from write-back memory are not reordered with other loads under TSO), only no JIT
     * reordering of later loads (or stores) above the owner load.
     */
    public static void ownerBeforeCqeBody() {
        VarHandle.acquireFence();
    }
}
