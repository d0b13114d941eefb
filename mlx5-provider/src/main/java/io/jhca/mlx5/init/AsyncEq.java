package io.jhca.mlx5.init;

import java.util.concurrent.locks.ReentrantLock;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.doorbell.Fences;
import io.jhca.doorbell.MmioWindow;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.cmd.CmdQueue;
import io.jhca.mlx5.cmd.EqLayouts;
import io.jhca.mlx5.cmd.CmdOpcode;
import io.jhca.mlx5.eq.Eqe;
import io.jhca.mlx5.eq.EventType;
import io.jhca.mlx5.spi.Mlx5Function;

/**
 * The function's one asynchronous event queue: CQ errors (a CQ overrun is reported here), QP errors, port changes,
 * firmware page requests and command completions (CMD events name the slots completed; they wake the thread waiting
 * for the command, which also polls the entry itself), the event types rdma-core's mlx5_vfio.c asks for on its
 * async EQ (vector 0).
 * Software consumes entries by the ownership rule and publishes its consumer index with a 32-bit doorbell
 * {@code be32(eqn << 24 | ci)} at UAR + 0x48 (update without arming; kernel lib/eq.h {@code eq_update_ci},
 * MLX5_EQ_DOORBEL_OFFSET); when the function has an interrupt line the event thread re-arms it with the same word at
 * UAR + 0x40 ({@link #arm}) before it waits, otherwise the EQ is polled and never armed.
 *
 * <p>The buffer is {@link #ENTRIES} entries of 64 bytes in 4 KiB pages (eqc.log_page_size 0); every owner byte starts
 * at 1 (rdma-core MLX5_EQE_OWNER_INIT_VAL), so nothing is software-owned until the device writes it. Any thread may
 * call {@link #poll}; one consumes at a time, others return at once.
 */
public final class AsyncEq implements AutoCloseable {

    /** 64 async entries plus the MLX5_NUM_SPARE_EQE (0x80) spare ones the kernel adds, as a power of two. */
    public static final int ENTRIES = 256;
    /** Event types this EQ receives (word 0 of event_bitmask: all are below 64). */
    public static final long EVENT_MASK = EventType.maskBit(EventType.CQ_ERROR) | EventType.maskBit(EventType.WQ_CATAS_ERROR)
            | EventType.maskBit(EventType.PATH_MIG_FAILED) | EventType.maskBit(EventType.INTERNAL_ERROR)
            | EventType.maskBit(EventType.PORT_CHANGE) | EventType.maskBit(EventType.PAGE_REQUEST)
            | EventType.maskBit(EventType.WQ_INVAL_REQ_ERROR) | EventType.maskBit(EventType.WQ_ACCESS_ERROR)
            | EventType.maskBit(EventType.CMD)
            | EventType.maskBit(EventType.PATH_MIG) | EventType.maskBit(EventType.COMM_EST)
            | EventType.maskBit(EventType.SQ_DRAINED) | EventType.maskBit(EventType.SRQ_LAST_WQE)
            | EventType.maskBit(EventType.SRQ_RQ_LIMIT);
    /** Offsets of the EQ doorbells in a UAR page: update and arm, update only. */
    public static final int DOORBELL_ARM = 0x40;
    public static final int DOORBELL_UPDATE = 0x48;

    /** Receives one event; the entry is valid only during the call. */
    @FunctionalInterface
    public interface Handler {
        void onEvent(DirectBuffer eqes, int offset);
    }

    private final DmaRegion memory;
    private final UnsafeBuffer eqes;
    private final int nent;
    private final int eqn;
    private final MmioWindow bar;
    private final int doorbell;
    private final ReentrantLock lock = new ReentrantLock();
    private volatile int ci;

    private AsyncEq(DmaRegion memory, int nent, int eqn, MmioWindow bar, int uar) {
        this.memory = memory;
        this.eqes = memory.buffer(0, nent * Eqe.SIZE);
        this.nent = nent;
        this.eqn = eqn;
        this.bar = bar;
        this.doorbell = uar * 4096 + DOORBELL_UPDATE;
    }

    /** Allocates the buffer, marks every entry hardware-owned and runs CREATE_EQ. */
    static AsyncEq create(Mlx5Function function, CmdQueue cmdq, int uar) {
        int bytes = ENTRIES * Eqe.SIZE;
        DmaRegion mem = function.allocateDma(bytes);
        try {
            UnsafeBuffer b = mem.buffer(0, bytes);
            for (int i = 0; i < ENTRIES; i++) {
                b.putByte(i * Eqe.SIZE + Eqe.OWNER_OFFSET, (byte) Eqe.OWNER_INIT);
            }
            int pages = bytes / 4096;
            PrmCommand c = PrmCommand.of(CmdOpcode.CREATE_EQ, EqLayouts.CREATE_EQ_IN, EqLayouts.CREATE_EQ_IN.sizeBytes(pages),
                            EqLayouts.CREATE_EQ_OUT, EqLayouts.CREATE_EQ_OUT.sizeBytes())
                    .set("eq_context_entry.log_eq_size", Integer.numberOfTrailingZeros(ENTRIES))
                    .set("eq_context_entry.uar_page", uar)
                    .set("eq_context_entry.intr", 0)
                    .set("eq_context_entry.log_page_size", 0)
                    .setElement("event_bitmask", 0, EVENT_MASK);
            for (int i = 0; i < pages; i++) {
                c.setElement("pas", i, mem.iova((long) i * 4096));
            }
            int eqn = (int) c.execute(cmdq).get("eq_number");
            AsyncEq eq = new AsyncEq(mem, ENTRIES, eqn, function.bar0(), uar);
            eq.publishCi();
            return eq;
        } catch (RuntimeException e) {
            mem.close();
            throw e;
        }
    }

    public int eqn() {
        return eqn;
    }

    public int entries() {
        return nent;
    }

    /** Consumer index (free-running). */
    public int consumerIndex() {
        return ci;
    }

    /** One volatile byte load: is the next entry software's? Cheap enough for an empty CQ poll. */
    public boolean pending() {
        int i = ci;
        return Eqe.isSoftwareOwned(eqes.getByteVolatile((i & (nent - 1)) * Eqe.SIZE + Eqe.OWNER_OFFSET), i, nent);
    }

    /**
     * Whether at least half the ring waits for its consumer: the entry half a ring ahead of the consumer index is
     * software's already. One volatile byte load.
     */
    public boolean backlogged() {
        int i = ci + (nent >>> 1);
        return Eqe.isSoftwareOwned(eqes.getByteVolatile((i & (nent - 1)) * Eqe.SIZE + Eqe.OWNER_OFFSET), i, nent);
    }

    /**
     * Entries consumed between two publications of the consumer index within one {@link #poll}. A loop that publishes
     * only at its end lets the device's view lag for as long as entries keep coming: commands issued from another
     * thread while the loop consumes their CMD entries one by one kept one loop going past the ring's size, and the
     * device (the ConnectX model counts them) dropped entries as if the EQ were full. The kernel's handler
     * (eq.c mlx5_eq_async_int) stops after MLX5_EQ_POLLING_BUDGET entries to update its index for the same reason.
     */
    static final int PUBLISH_EVERY = 32;

    /**
     * Hands every software-owned entry to {@code handler}, in order, publishing the consumer index every
     * {@link #PUBLISH_EVERY} entries and at the end. Returns the
     * number of events, 0 if none or another thread is consuming.
     */
    public int poll(Handler handler) {
        if (!pending() || !lock.tryLock()) {
            return 0;
        }
        try {
            int n = 0;
            int i = ci;
            while (true) {
                int offset = (i & (nent - 1)) * Eqe.SIZE;
                if (!Eqe.isSoftwareOwned(eqes.getByteVolatile(offset + Eqe.OWNER_OFFSET), i, nent)) {
                    break;
                }
                Fences.ownerBeforeCqeBody();
                i++;
                ci = i;
                n++;
                handler.onEvent(eqes, offset);
                if ((n & (PUBLISH_EVERY - 1)) == 0) {
                    publishCi();
                }
            }
            if ((n & (PUBLISH_EVERY - 1)) != 0) {   // not already published by the loop (nor n == 0)
                publishCi();
            }
            return n;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Publishes the consumer index and re-arms the EQ (doorbell at UAR + 0x40, kernel eq_update_ci with arm), so the
     * device raises the EQ's interrupt for the next entry it writes. Returns false, arming nothing, when another
     * thread is consuming (it will find what arrives).
     */
    public boolean arm() {
        if (!lock.tryLock()) {
            return false;
        }
        try {
            bar.putIntBe(doorbell - DOORBELL_UPDATE + DOORBELL_ARM, eqn << 24 | (ci & 0xffffff));
            return true;
        } finally {
            lock.unlock();
        }
    }

    private void publishCi() {
        // be32(eqn << 24 | ci & 0xffffff), one 4-byte MMIO store (kernel eq_update_ci)
        bar.putIntBe(doorbell, eqn << 24 | (ci & 0xffffff));
    }

    /** DESTROY_EQ, then the buffer goes back. */
    void destroy(HcaCommands cmds) {
        cmds.destroyEq(eqn);
        close();
    }

    /** Releases the buffer (after DESTROY_EQ, or when the device is gone). */
    @Override
    public void close() {
        memory.close();
    }
}
