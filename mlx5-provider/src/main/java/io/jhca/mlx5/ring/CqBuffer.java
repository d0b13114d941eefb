package io.jhca.mlx5.ring;

import org.agrona.UnsafeApi;
import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.doorbell.DoorbellRecord;
import io.jhca.doorbell.Fences;
import io.jhca.mlx5.cq.Cqe64;
import io.jhca.mlx5.cq.CqeOpcode;

/**
 * A completion ring of {@code ncqe} (a power of two) 64-byte CQEs and the CQ's doorbell record. Every CQE starts as
 * {@code op_own = 0xf0} (opcode INVALID, owner 0: rdma-core create_cq), so nothing is software-owned before the device
 * writes it; the entry at free-running consumer index {@code ci} is software's when its opcode is valid and its owner
 * bit equals {@code (ci & ncqe) != 0} (cq.c {@code get_sw_cqe}). The consumer index goes back to the device in record
 * word 0 ({@code MLX5_CQ_SET_CI}, 24 bits). Polled by one thread.
 */
public final class CqBuffer {

    /** op_own of a CQE the device has not written: MLX5_CQE_INVALID << 4, owner 0. */
    public static final byte INVALID_OP_OWN = (byte) (CqeOpcode.INVALID << 4);

    private final UnsafeBuffer buf;
    private final int ncqe;
    private final DoorbellRecord dbr;
    private int ci;
    /** op_own of the CQE {@link #next} returned last, as it read it: the poller does not load it again. */
    private int opOwn;

    public CqBuffer(UnsafeBuffer buf, int ncqe, DoorbellRecord dbr) {
        if (ncqe < 2 || Integer.bitCount(ncqe) != 1 || (long) ncqe * Cqe64.SIZE > buf.capacity()) {
            throw new IllegalArgumentException("CQ ring of " + ncqe + " CQEs does not fit a buffer of " + buf.capacity());
        }
        this.buf = buf;
        this.ncqe = ncqe;
        this.dbr = dbr;
    }

    /** Marks every entry not yet written (before CREATE_CQ). */
    public static void initialize(UnsafeBuffer buf, int ncqe) {
        for (int i = 0; i < ncqe; i++) {
            buf.putByte(i * Cqe64.SIZE + Cqe64.OP_OWN_OFFSET, INVALID_OP_OWN);
        }
    }

    public UnsafeBuffer buffer() {
        return buf;
    }

    public int entries() {
        return ncqe;
    }

    public int consumerIndex() {
        return ci;
    }

    /**
     * The next software-owned CQE, consumed: its offset in {@link #buffer()}, or -1 if the ring is empty. The owner
     * byte is read first, then the fence, so no later field load sees an older value.
     */
    public int next() {
        int offset = (ci & (ncqe - 1)) * Cqe64.SIZE;
        int opOwn = opOwnAt(offset);
        if (!Cqe64.isSoftwareOwned(opOwn, ci, ncqe)) {
            return -1;
        }
        ci++;
        this.opOwn = opOwn;
        Fences.ownerBeforeCqeBody();
        return offset;
    }

    /** The owner byte ({@code op_own}) of the CQE {@link #next} returned last. */
    public int opOwn() {
        return opOwn;
    }

    /** Whether a CQE is waiting, without consuming it. */
    public boolean hasNext() {
        int offset = (ci & (ncqe - 1)) * Cqe64.SIZE;
        return Cqe64.isSoftwareOwned(opOwnAt(offset), ci, ncqe);
    }

    /**
     * The owner byte of the CQE at {@code offset}, a volatile load. The offset is in the ring by construction; the
     * one check left is that the ring's memory is still there (a DMA region's view drops to capacity 0 when it
     * closes), so that a poll after the close throws rather than reading memory the CQ gave up. The load is then
     * raw, not checked a second time by the buffer.
     */
    private int opOwnAt(int offset) {
        UnsafeBuffer b = buf;
        if (offset > b.capacity() - Cqe64.SIZE) {
            throw new IndexOutOfBoundsException("CQE at " + offset + " outside CQ buffer of " + b.capacity()
                + " bytes (its memory was closed)");
        }
        return UnsafeApi.getByteVolatile(b.byteArray(), b.addressOffset() + offset + Cqe64.OP_OWN_OFFSET) & 0xff;
    }

    /** The index a direct poller ({@link DirectCq}) reached, taken before a clean; it stores the record itself. */
    void consumedTo(int consIndex) {
        ci = consIndex;
    }

    DoorbellRecord record() {
        return dbr;
    }

    /** Record word 0 := ci & 0xffffff (cq.c update_cons_index). */
    public void publishConsumerIndex() {
        dbr.setConsumerIndex(ci);
    }

    /**
     * Removes the CQEs of one QP still in the ring (a QP moved to RESET or destroyed), rdma-core's
     * {@code __mlx5_cq_clean}: find the producer end, then sweep backwards copying the CQEs that stay over the ones
     * that go, each keeping the owner bit of the slot it lands in, and advance the consumer index by the number
     * removed. Must not run while another thread polls this CQ.
     *
     * @return CQEs removed
     */
    public int clean(int qpn) {
        return clean(qpn, null);
    }

    /**
     * {@link #clean(int)} for a QP of an SRQ: each receive CQE removed gives its SRQ WQE back to the free list
     * (rdma-core __mlx5_cq_clean: mlx5_free_srq_wqe for a responder CQE), else that WQE would be lost.
     */
    public int clean(int qpn, SrqBuffer srq) {
        int prod = ci;
        while (isSoftwareOwnedAt(prod) && prod - ci < ncqe - 1) {
            prod++;
        }
        int freed = 0;
        Cqe64 cqe = new Cqe64();
        while (--prod - ci >= 0) {
            int from = (prod & (ncqe - 1)) * Cqe64.SIZE;
            if ((cqe.wrap(buf, from).sopDropQpn() & 0xffffff) == qpn) {
                int op = cqe.opcode();
                if (srq != null && op != CqeOpcode.REQ && op != CqeOpcode.REQ_ERR) {
                    srq.complete(cqe.wqeCounter());
                }
                freed++;
            } else if (freed > 0) {
                int to = ((prod + freed) & (ncqe - 1)) * Cqe64.SIZE;
                int owner = buf.getByte(to + Cqe64.OP_OWN_OFFSET) & 1;
                buf.putBytes(to, buf, from, Cqe64.SIZE);
                buf.putByte(to + Cqe64.OP_OWN_OFFSET, (byte) ((buf.getByte(to + Cqe64.OP_OWN_OFFSET) & ~1) | owner));
            }
        }
        if (freed > 0) {
            ci += freed;
            Fences.wqeBeforeDoorbellRecord();   // buffer updates before the consumer index (udma_to_device_barrier)
            publishConsumerIndex();
        }
        return freed;
    }

    private boolean isSoftwareOwnedAt(int index) {
        int offset = (index & (ncqe - 1)) * Cqe64.SIZE;
        return Cqe64.isSoftwareOwned(opOwnAt(offset), index, ncqe);
    }
}
