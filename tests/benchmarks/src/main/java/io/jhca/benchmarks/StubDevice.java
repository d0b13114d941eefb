package io.jhca.benchmarks;

import io.jhca.mlx5.cq.Cqe64;
import io.jhca.mlx5.cq.CqeOpcode;
import org.agrona.UnsafeApi;
import org.agrona.concurrent.UnsafeBuffer;

import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * The device side of the mlx5 benchmarks: writes a requester CQE as mlx5 hardware does (body, then op_own with the
 * owner bit) with plain stores after one range check, as the C baselines' stub device does
 * ({@code src/main/c/mlx5_bare_baseline.c}), so that the driver's code is what differs between Java and C.
 */
final class StubDevice {

    private static final boolean LITTLE = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

    private StubDevice() {
    }

    /**
     * The CQE at producer index {@code pi} of a ring of {@code entries}: byte_cnt, then the last 8 bytes (sop_drop_qpn,
     * wqe_counter, signature, op_own) as one store, op_own within it. A device writes the CQE whole, by DMA; narrow
     * CPU stores of its last 8 bytes would instead leave a driver that loads them as one word (jhca's {@code Cqe64.tail})
     * waiting for the stores to retire (no store-to-load forwarding from several stores), a cost no device imposes.
     * One 8-byte store forwards to a load of any part of it, so the C baselines' narrow loads pay nothing either; they
     * write their CQE the same way.
     */
    static void completeRequest(UnsafeBuffer ring, int entries, int pi, int wqeCounter, int sendOpcode, int qpn,
                                int byteCnt) {
        write(ring, entries, pi, CqeOpcode.REQ, sendOpcode << 24 | qpn, wqeCounter, byteCnt);
    }

    /**
     * A responder CQE (RESP_SEND, a SEND of {@code byteCnt} bytes received into the RQ WQE {@code wqeCounter}) at
     * producer index {@code pi}, written as {@link #completeRequest} writes its CQE; the other fields (flags_rqpn,
     * slid, imm) stay as the ring holds them, zero.
     */
    static void completeRecv(UnsafeBuffer ring, int entries, int pi, int wqeCounter, int qpn, int byteCnt) {
        write(ring, entries, pi, CqeOpcode.RESP_SEND, qpn, wqeCounter, byteCnt);
    }

    /**
     * A responder CQE of a receive into WQE {@code wqeIndex} of the SRQ {@code srqn}: srqn_uidx (what a device with
     * cqe_ver 0 reports), then as {@link #completeRecv}.
     */
    static void completeSrqRecv(UnsafeBuffer ring, int entries, int pi, int wqeIndex, int qpn, int srqn, int byteCnt) {
        int offset = (pi & (entries - 1)) * Cqe64.SIZE;
        if (offset > ring.capacity() - Cqe64.SIZE) {
            throw new IndexOutOfBoundsException("CQE at " + offset + " outside a CQ ring of " + ring.capacity());
        }
        UnsafeApi.putInt(ring.byteArray(), ring.addressOffset() + offset + Cqe64.SRQN_UIDX_OFFSET,
                LITTLE ? Integer.reverseBytes(srqn) : srqn);
        write(ring, entries, pi, CqeOpcode.RESP_SEND, qpn, wqeIndex, byteCnt);
    }

    /** byte_cnt, then sop_drop_qpn, wqe_counter, signature 0 and op_own (opcode, owner bit of pi) in one store. */
    private static void write(UnsafeBuffer ring, int entries, int pi, int cqeOpcode, int sopDropQpn, int wqeCounter,
                              int byteCnt) {
        int offset = (pi & (entries - 1)) * Cqe64.SIZE;
        if (offset > ring.capacity() - Cqe64.SIZE) {
            throw new IndexOutOfBoundsException("CQE at " + offset + " outside a CQ ring of " + ring.capacity());
        }
        Object array = ring.byteArray();
        long cqe = ring.addressOffset() + offset;
        int opOwn = cqeOpcode << 4 | ((pi & entries) != 0 ? 1 : 0);
        // big-endian as the CQE holds it: sop_drop_qpn (4 bytes), wqe_counter (2), signature (1), op_own (1)
        long tail = (sopDropQpn & 0xFFFFFFFFL) << 32 | (long) (wqeCounter & 0xffff) << 16 | opOwn;
        UnsafeApi.putInt(array, cqe + Cqe64.BYTE_CNT_OFFSET, LITTLE ? Integer.reverseBytes(byteCnt) : byteCnt);
        VarHandle.storeStoreFence();   // the C baselines' compiler barrier: body before op_own
        UnsafeApi.putLong(array, cqe + Cqe64.SOP_DROP_QPN_OFFSET, LITTLE ? Long.reverseBytes(tail) : tail);
    }
}
