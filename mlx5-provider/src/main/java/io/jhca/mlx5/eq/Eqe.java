package io.jhca.mlx5.eq;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * An event queue entry ({@code struct mlx5_eqe}, kernel device.h, 64 bytes, packed), static readers and writers:
 * <pre>
 *  1 u8 type        3 u8 sub_type       0x20 data (28 bytes, per type)       0x3e u8 signature   0x3f u8 owner
 *  CQ_ERROR      data 0 be32 cqn (23:0), data 11 u8 syndrome                 (struct mlx5_eqe_cq_err)
 *  QP events     data 20 u8 type (queue type), data 24 be32 qp_srq_n (23:0)   (struct mlx5_eqe_qp_srq)
 *  PAGE_REQUEST  data 2 be16 func_id, data 4 be32 num_pages (signed)          (struct mlx5_eqe_page_req)
 *  CMD           data 0 be32 vector: the command slots completed             (struct mlx5_eqe_cmd)
 * </pre>
 * Ownership: software sets every owner byte to 1 before CREATE_EQ (rdma-core mlx5_vfio.c
 * {@code MLX5_EQE_OWNER_INIT_VAL}); the entry at free-running index {@code ci} belongs to software when its owner bit
 * equals the wrap parity {@code (ci & nent) != 0} (kernel lib/eq.h {@code next_eqe_sw}). The device writes the body
 * first and the owner byte last; software reads the owner byte, fences, then the body.
 */
public final class Eqe {

    public static final int SIZE = 64;
    public static final int TYPE_OFFSET = 1;
    public static final int SUB_TYPE_OFFSET = 3;
    public static final int DATA_OFFSET = 0x20;
    public static final int SIGNATURE_OFFSET = 0x3e;
    public static final int OWNER_OFFSET = 0x3f;
    /** Owner value software writes into every entry before the EQ is created. */
    public static final int OWNER_INIT = 1;

    /** Offsets inside data. */
    public static final int CQ_ERR_CQN = 0;
    public static final int CQ_ERR_SYNDROME = 11;
    public static final int QP_SRQ_TYPE = 20;
    public static final int QP_SRQ_NUMBER = 24;
    public static final int PAGE_REQ_FUNC_ID = 2;
    public static final int PAGE_REQ_NUM_PAGES = 4;
    /** COMP: the CQ that raised the event ({@code struct mlx5_eqe_comp}: six reserved be32, then cqn). */
    public static final int COMP_CQN = 24;
    /** PORT_CHANGE: port number in bits 7:4 ({@code struct mlx5_eqe_port_state}: u8 reserved0[8], u8 port). */
    public static final int PORT_STATE_PORT = 8;

    private Eqe() {
    }

    /** Whether the entry with owner byte {@code owner} at free-running index {@code ci} of {@code nent} entries is software's. */
    public static boolean isSoftwareOwned(int owner, int ci, int nent) {
        return (owner & 1) == ((ci & nent) != 0 ? 1 : 0);
    }

    public static int owner(DirectBuffer b, int eqe) {
        check(b, eqe);
        return b.getByte(eqe + OWNER_OFFSET) & 0xff;
    }

    public static int type(DirectBuffer b, int eqe) {
        check(b, eqe);
        return b.getByte(eqe + TYPE_OFFSET) & 0xff;
    }

    public static int subType(DirectBuffer b, int eqe) {
        check(b, eqe);
        return b.getByte(eqe + SUB_TYPE_OFFSET) & 0xff;
    }

    /** CQ_ERROR: the CQ number (be32, low 24 bits). */
    public static int cqErrorCqn(DirectBuffer b, int eqe) {
        check(b, eqe);
        return b.getInt(eqe + DATA_OFFSET + CQ_ERR_CQN, ByteOrder.BIG_ENDIAN) & 0xffffff;
    }

    /** CQ_ERROR: {@link EventType#CQ_ERROR_OVERRUN} or {@link EventType#CQ_ERROR_ACCESS_VIOLATION}. */
    public static int cqErrorSyndrome(DirectBuffer b, int eqe) {
        check(b, eqe);
        return b.getByte(eqe + DATA_OFFSET + CQ_ERR_SYNDROME) & 0xff;
    }

    /** COMP: the CQ number (be32, low 24 bits). */
    public static int compCqn(DirectBuffer b, int eqe) {
        check(b, eqe);
        return b.getInt(eqe + DATA_OFFSET + COMP_CQN, ByteOrder.BIG_ENDIAN) & 0xffffff;
    }

    /** QP/SRQ events: the QP (or SRQ) number (be32, low 24 bits). */
    public static int qpSrqNumber(DirectBuffer b, int eqe) {
        check(b, eqe);
        return b.getInt(eqe + DATA_OFFSET + QP_SRQ_NUMBER, ByteOrder.BIG_ENDIAN) & 0xffffff;
    }

    /** PAGE_REQUEST: pages the firmware wants (positive) or returns (negative). */
    public static int pageRequestNumPages(DirectBuffer b, int eqe) {
        check(b, eqe);
        return b.getInt(eqe + DATA_OFFSET + PAGE_REQ_NUM_PAGES, ByteOrder.BIG_ENDIAN);
    }

    /** PAGE_REQUEST: the function the pages are for (be16). */
    public static int pageRequestFunctionId(DirectBuffer b, int eqe) {
        check(b, eqe);
        return b.getShort(eqe + DATA_OFFSET + PAGE_REQ_FUNC_ID, ByteOrder.BIG_ENDIAN) & 0xffff;
    }

    /** CMD: bit n set = the command in slot n completed. */
    public static int cmdVector(DirectBuffer b, int eqe) {
        check(b, eqe);
        return b.getInt(eqe + DATA_OFFSET, ByteOrder.BIG_ENDIAN);
    }

    /** PORT_CHANGE: the port (1-based; mlx5_ib reads {@code (port >> 4) & 0xf}); 0 if the device left it out. */
    public static int portNumber(DirectBuffer b, int eqe) {
        check(b, eqe);
        return (b.getByte(eqe + DATA_OFFSET + PORT_STATE_PORT) >> 4) & 0xf;
    }

    // ---- device side ----

    /** Writes a CQ_ERROR body (type, cqn, syndrome); the caller writes the owner byte last with {@link #setOwner}. */
    public static void setCqError(MutableDirectBuffer b, int eqe, int cqn, int syndrome) {
        clearBody(b, eqe, EventType.CQ_ERROR, 0);
        b.putInt(eqe + DATA_OFFSET + CQ_ERR_CQN, cqn & 0xffffff, ByteOrder.BIG_ENDIAN);
        b.putByte(eqe + DATA_OFFSET + CQ_ERR_SYNDROME, (byte) syndrome);
    }

    /** Writes a QP event body (type, queue type 0 = QP, qpn). */
    public static void setQpEvent(MutableDirectBuffer b, int eqe, int type, int qpn) {
        clearBody(b, eqe, type, 0);
        b.putInt(eqe + DATA_OFFSET + QP_SRQ_NUMBER, qpn & 0xffffff, ByteOrder.BIG_ENDIAN);
    }

    /** Writes a PAGE_REQUEST body. */
    public static void setPageRequest(MutableDirectBuffer b, int eqe, int functionId, int numPages) {
        clearBody(b, eqe, EventType.PAGE_REQUEST, 0);
        b.putShort(eqe + DATA_OFFSET + PAGE_REQ_FUNC_ID, (short) functionId, ByteOrder.BIG_ENDIAN);
        b.putInt(eqe + DATA_OFFSET + PAGE_REQ_NUM_PAGES, numPages, ByteOrder.BIG_ENDIAN);
    }

    /** Writes a PORT_CHANGE body with its sub_type. */
    public static void setPortChange(MutableDirectBuffer b, int eqe, int subType) {
        clearBody(b, eqe, EventType.PORT_CHANGE, subType);
    }

    /** Writes a PORT_CHANGE body with its sub_type and port (1-based). */
    public static void setPortChange(MutableDirectBuffer b, int eqe, int subType, int port) {
        clearBody(b, eqe, EventType.PORT_CHANGE, subType);
        b.putByte(eqe + DATA_OFFSET + PORT_STATE_PORT, (byte) ((port & 0xf) << 4));
    }

    /** The owner byte, written last (a release store, after the body). */
    public static void setOwner(MutableDirectBuffer b, int eqe, int owner) {
        check(b, eqe);
        java.lang.invoke.VarHandle.releaseFence();
        b.putByte(eqe + OWNER_OFFSET, (byte) owner);
    }

    private static void clearBody(MutableDirectBuffer b, int eqe, int type, int subType) {
        check(b, eqe);
        b.setMemory(eqe, OWNER_OFFSET, (byte) 0);
        b.putByte(eqe + TYPE_OFFSET, (byte) type);
        b.putByte(eqe + SUB_TYPE_OFFSET, (byte) subType);
    }

    private static void check(DirectBuffer b, int eqe) {
        if (eqe < 0 || eqe > b.capacity() - SIZE) {
            throw new IndexOutOfBoundsException("EQE [" + eqe + ", +64) outside buffer of " + b.capacity());
        }
    }
}
