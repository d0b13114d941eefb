package io.jhca.mlx5.cq;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;

/**
 * Flyweight over an error CQE ({@code struct mlx5_err_cqe}, mlx5dv.h, 64 bytes; opcode REQ_ERR or RESP_ERR),
 * multi-byte fields big-endian:
 * 32 be32 {@code srqn}, 54 u8 {@code vendor_err_synd}, 55 u8 {@code syndrome}, 56 be32
 * {@code s_wqe_opcode_qpn} (31:24 WQE opcode, 23:0 QPN), 60 be16 {@code wqe_counter}, 62 u8 {@code signature},
 * 63 u8 {@code op_own}.
 * Status: {@link CqeStatus#toWcStatus(int)} of {@link #syndrome()}; {@code wc.vendor_err} is {@link #vendorErrSynd()}.
 */
public final class ErrCqe {

    public static final int SIZE = 64;
    public static final int SRQN_OFFSET = 32;
    public static final int VENDOR_ERR_SYND_OFFSET = 54;
    public static final int SYNDROME_OFFSET = 55;
    public static final int S_WQE_OPCODE_QPN_OFFSET = 56;
    public static final int WQE_COUNTER_OFFSET = 60;
    public static final int SIGNATURE_OFFSET = 62;
    public static final int OP_OWN_OFFSET = 63;

    private DirectBuffer buffer;
    private int offset;

    /** Points at the 64 bytes at {@code offset}; checked now. */
    public ErrCqe wrap(DirectBuffer buffer, int offset) {
        if (offset < 0 || offset > buffer.capacity() - SIZE) {
            throw new IndexOutOfBoundsException("CQE [" + offset + ", +64) outside buffer of " + buffer.capacity());
        }
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public int srqn() {
        return buffer.getInt(offset + SRQN_OFFSET, ByteOrder.BIG_ENDIAN);
    }

    /** Vendor syndrome, e.g. 0x93 = ODP page fault ({@code MLX5_CQE_VENDOR_SYNDROME_ODP_PFAULT}). */
    public int vendorErrSynd() {
        return buffer.getByte(offset + VENDOR_ERR_SYND_OFFSET) & 0xff;
    }

    /** {@link CqeSyndrome} value. */
    public int syndrome() {
        return buffer.getByte(offset + SYNDROME_OFFSET) & 0xff;
    }

    public int sWqeOpcodeQpn() {
        return buffer.getInt(offset + S_WQE_OPCODE_QPN_OFFSET, ByteOrder.BIG_ENDIAN);
    }

    /** Opcode of the failed send WQE, bits 31:24 of s_wqe_opcode_qpn. */
    public int wqeOpcode() {
        return sWqeOpcodeQpn() >>> 24;
    }

    /** QP number, bits 23:0 of s_wqe_opcode_qpn. */
    public int qpn() {
        return sWqeOpcodeQpn() & 0xffffff;
    }

    public int wqeCounter() {
        return buffer.getShort(offset + WQE_COUNTER_OFFSET, ByteOrder.BIG_ENDIAN) & 0xffff;
    }

    public int signature() {
        return buffer.getByte(offset + SIGNATURE_OFFSET) & 0xff;
    }

    public int opOwn() {
        return buffer.getByte(offset + OP_OWN_OFFSET) & 0xff;
    }

    /** {@code op_own >> 4}: {@link CqeOpcode#REQ_ERR} or {@link CqeOpcode#RESP_ERR} for a real error CQE. */
    public int opcode() {
        return opOwn() >>> 4;
    }
}
