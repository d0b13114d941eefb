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

    /** The CQE at producer index {@code pi} of a ring of {@code entries}: wqe_counter, sop_drop_qpn, byte_cnt, op_own. */
    static void completeRequest(UnsafeBuffer ring, int entries, int pi, int wqeCounter, int sendOpcode, int qpn,
                                int byteCnt) {
        int offset = (pi & (entries - 1)) * Cqe64.SIZE;
        if (offset > ring.capacity() - Cqe64.SIZE) {
            throw new IndexOutOfBoundsException("CQE at " + offset + " outside a CQ ring of " + ring.capacity());
        }
        Object array = ring.byteArray();
        long cqe = ring.addressOffset() + offset;
        short counter = (short) wqeCounter;
        int sopDropQpn = sendOpcode << 24 | qpn;
        UnsafeApi.putShort(array, cqe + Cqe64.WQE_COUNTER_OFFSET, LITTLE ? Short.reverseBytes(counter) : counter);
        UnsafeApi.putInt(array, cqe + Cqe64.SOP_DROP_QPN_OFFSET, LITTLE ? Integer.reverseBytes(sopDropQpn) : sopDropQpn);
        UnsafeApi.putInt(array, cqe + Cqe64.BYTE_CNT_OFFSET, LITTLE ? Integer.reverseBytes(byteCnt) : byteCnt);
        VarHandle.storeStoreFence();   // the C baselines' compiler barrier: body before op_own
        UnsafeApi.putByte(array, cqe + Cqe64.OP_OWN_OFFSET, (byte) (CqeOpcode.REQ << 4 | ((pi & entries) != 0 ? 1 : 0)));
    }
}
