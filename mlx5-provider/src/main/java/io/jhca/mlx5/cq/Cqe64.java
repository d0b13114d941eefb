package io.jhca.mlx5.cq;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.UnsafeApi;

/**
 * Flyweight over a 64-byte CQE ({@code struct mlx5_cqe64}, mlx5dv.h); all multi-byte fields big-endian.
 *
 * <pre>
 *  2 be16 wqe_id          (striding RQ)      36 be32 imm_inval_pkey
 * 17 u8   ml_path                            40 u8 app, 41 u8 app_op, 42 be16 app_info
 * 22 be16 slid                               44 be32 byte_cnt
 * 24 be32 flags_rqpn  27:24 SL, 23:0 rQPN    48 be64 timestamp
 * 28 u8   hds_ip_ext                         56 be32 sop_drop_qpn 31:24 send WQE opcode, 23:0 QPN
 * 29 u8   l4_hdr_type_etc  3:2 L3 type       60 be16 wqe_counter
 * 30 be16 vlan_info                          62 u8 signature
 * 32 be32 srqn_uidx   23:0 SRQN/user index   63 u8 op_own  7:4 opcode, 3:2 format, 1 SE, 0 owner
 * </pre>
 * For 128-byte CQEs wrap at entry + 64 (the {@code mlx5_cqe64} is the second half; rdma-core cq.c).
 *
 * <p>Read {@link #opOwn()} first, decide ownership with {@link #isSoftwareOwned}, then
 * {@code Fences.ownerBeforeCqeBody()} (io.jhca.doorbell), then the other fields.
 */
public final class Cqe64 {

    private static final boolean NATIVE_LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

    public static final int SIZE = 64;
    public static final int WQE_ID_OFFSET = 2;
    public static final int ML_PATH_OFFSET = 17;
    public static final int SLID_OFFSET = 22;
    public static final int FLAGS_RQPN_OFFSET = 24;
    public static final int HDS_IP_EXT_OFFSET = 28;
    public static final int L4_HDR_TYPE_ETC_OFFSET = 29;
    public static final int VLAN_INFO_OFFSET = 30;
    public static final int SRQN_UIDX_OFFSET = 32;
    public static final int IMM_INVAL_PKEY_OFFSET = 36;
    public static final int APP_OFFSET = 40;
    public static final int APP_OP_OFFSET = 41;
    public static final int APP_INFO_OFFSET = 42;
    public static final int BYTE_CNT_OFFSET = 44;
    public static final int TIMESTAMP_OFFSET = 48;
    public static final int SOP_DROP_QPN_OFFSET = 56;
    public static final int WQE_COUNTER_OFFSET = 60;
    public static final int SIGNATURE_OFFSET = 62;
    public static final int OP_OWN_OFFSET = 63;

    /** hds_ip_ext bits ({@code MLX5_CQE_L2_OK/L3_OK/L4_OK}). */
    public static final int L2_OK = 1;
    public static final int L3_OK = 1 << 1;
    public static final int L4_OK = 1 << 2;
    /** L3 header types, bits 3:2 of l4_hdr_type_etc ({@code MLX5_CQE_L3_HDR_TYPE_*}). */
    public static final int L3_HDR_TYPE_NONE = 0;
    public static final int L3_HDR_TYPE_IPV6 = 1;
    public static final int L3_HDR_TYPE_IPV4 = 2;

    private DirectBuffer buffer;
    private int offset;

    /** Points at the 64 bytes at {@code offset}; checked now. */
    public Cqe64 wrap(DirectBuffer buffer, int offset) {
        if (offset < 0 || offset > buffer.capacity() - SIZE) {
            throw new IndexOutOfBoundsException("CQE [" + offset + ", +64) outside buffer of " + buffer.capacity());
        }
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    /**
     * Whether the CQE at free-running index {@code consIndex} of a ring of {@code cqeCnt} (a power of two)
     * entries belongs to software: its opcode is not {@code INVALID} and its owner bit equals the wrap parity
     * {@code (consIndex & cqeCnt) != 0} (rdma-core cq.c {@code get_sw_cqe}: {@code !((op_own & MLX5_CQE_OWNER_MASK)
     * ^ !!(n & (cqe + 1)))}, where {@code ibv_cq.cqe + 1} is the entry count).
     */
    public static boolean isSoftwareOwned(int opOwn, int consIndex, int cqeCnt) {
        return (opOwn & 0xf0) != CqeOpcode.INVALID << 4
            && (opOwn & 1) == ((consIndex & cqeCnt) != 0 ? 1 : 0);
    }

    /** {@link #isSoftwareOwned(int, int, int)} for this CQE. */
    public boolean isSoftwareOwned(int consIndex, int cqeCnt) {
        return isSoftwareOwned(opOwn(), consIndex, cqeCnt);
    }

    public int opOwn() {
        return buffer.getByte(offset + OP_OWN_OFFSET) & 0xff;
    }

    /** {@code op_own >> 4} ({@code mlx5dv_get_cqe_opcode}); see {@link CqeOpcode}. */
    public int opcode() {
        return opOwn() >>> 4;
    }

    /** {@code (op_own >> 2) & 3} ({@code mlx5dv_get_cqe_format}). */
    public int format() {
        return (opOwn() >>> 2) & 3;
    }

    /** Solicited event, {@code (op_own >> 1) & 1} ({@code mlx5dv_get_cqe_se}). */
    public int se() {
        return (opOwn() >>> 1) & 1;
    }

    /** Owner bit, {@code op_own & 1} ({@code mlx5dv_get_cqe_owner}). */
    public int owner() {
        return opOwn() & 1;
    }

    public int wqeId() {
        return buffer.getShort(offset + WQE_ID_OFFSET, ByteOrder.BIG_ENDIAN) & 0xffff;
    }

    public int mlPath() {
        return buffer.getByte(offset + ML_PATH_OFFSET) & 0xff;
    }

    public int slid() {
        return buffer.getShort(offset + SLID_OFFSET, ByteOrder.BIG_ENDIAN) & 0xffff;
    }

    public int flagsRqpn() {
        return buffer.getInt(offset + FLAGS_RQPN_OFFSET, ByteOrder.BIG_ENDIAN);
    }

    /** Service level, bits 27:24 of flags_rqpn (UD responder). */
    public int sl() {
        return (flagsRqpn() >>> 24) & 0xf;
    }

    /** Remote (source) QPN, bits 23:0 of flags_rqpn (UD responder). */
    public int rqpn() {
        return flagsRqpn() & 0xffffff;
    }

    public int hdsIpExt() {
        return buffer.getByte(offset + HDS_IP_EXT_OFFSET) & 0xff;
    }

    public int l4HdrTypeEtc() {
        return buffer.getByte(offset + L4_HDR_TYPE_ETC_OFFSET) & 0xff;
    }

    /** L3 header type, bits 3:2 of l4_hdr_type_etc (rdma-core cq.c {@code get_cqe_l3_hdr_type}). */
    public int l3HdrType() {
        return (l4HdrTypeEtc() >>> 2) & 3;
    }

    public int vlanInfo() {
        return buffer.getShort(offset + VLAN_INFO_OFFSET, ByteOrder.BIG_ENDIAN) & 0xffff;
    }

    public int srqnUidx() {
        return buffer.getInt(offset + SRQN_UIDX_OFFSET, ByteOrder.BIG_ENDIAN);
    }

    /** SRQ number or user index, bits 23:0 of srqn_uidx. */
    public int srqn() {
        return srqnUidx() & 0xffffff;
    }

    /**
     * imm_inval_pkey read big-endian: the immediate data as sent on the wire, or the invalidated rkey
     * (RESP_SEND_INV), or (UD) the P_Key index in bits 15:0. (rdma-core hands the immediate to verbs
     * without swapping, as a {@code __be32}; this is the same four bytes read as a number.)
     */
    public int immInvalPkey() {
        return buffer.getInt(offset + IMM_INVAL_PKEY_OFFSET, ByteOrder.BIG_ENDIAN);
    }

    public int app() {
        return buffer.getByte(offset + APP_OFFSET) & 0xff;
    }

    public int appOp() {
        return buffer.getByte(offset + APP_OP_OFFSET) & 0xff;
    }

    public int appInfo() {
        return buffer.getShort(offset + APP_INFO_OFFSET, ByteOrder.BIG_ENDIAN) & 0xffff;
    }

    /** Bytes received (responder) or read (RDMA READ requester); an unsigned 32-bit value. */
    public int byteCnt() {
        return buffer.getInt(offset + BYTE_CNT_OFFSET, ByteOrder.BIG_ENDIAN);
    }

    public long timestamp() {
        return buffer.getLong(offset + TIMESTAMP_OFFSET, ByteOrder.BIG_ENDIAN);
    }

    public int sopDropQpn() {
        return buffer.getInt(offset + SOP_DROP_QPN_OFFSET, ByteOrder.BIG_ENDIAN);
    }

    /** Opcode of the completed send WQE, bits 31:24 of sop_drop_qpn (requester CQEs; {@code Mlx5Opcode}). */
    public int sendOpcode() {
        return sopDropQpn() >>> 24;
    }

    /** QP number, bits 23:0 of sop_drop_qpn. */
    public int qpn() {
        return sopDropQpn() & 0xffffff;
    }

    /** 16-bit WQE counter: the control-segment index of the completed send WQE, or the RQ WQE index. */
    public int wqeCounter() {
        return buffer.getShort(offset + WQE_COUNTER_OFFSET, ByteOrder.BIG_ENDIAN) & 0xffff;
    }

    public int signature() {
        return buffer.getByte(offset + SIGNATURE_OFFSET) & 0xff;
    }

    // ---- the poller's hot path: static, on (buffer, offset), one load ----

    /**
     * The last 8 bytes of the CQE at {@code offset} ({@code sop_drop_qpn}, {@code wqe_counter}, {@code signature},
     * {@code op_own}) as one big-endian 8-byte load after one bounds check: everything a requester completion needs,
     * read once. Decode with {@link #tailQpn}, {@link #tailSendOpcode}, {@link #tailWqeCounter}.
     */
    public static long tail(DirectBuffer buffer, int offset) {
        if (offset < 0 || offset > buffer.capacity() - SIZE) {
            throw new IndexOutOfBoundsException("CQE [" + offset + ", +64) outside buffer of " + buffer.capacity());
        }
        long raw = UnsafeApi.getLong(buffer.byteArray(), buffer.addressOffset() + offset + SOP_DROP_QPN_OFFSET);
        return NATIVE_LITTLE_ENDIAN ? Long.reverseBytes(raw) : raw;
    }

    /** {@code sop_drop_qpn & 0xffffff} from a {@link #tail}. */
    public static int tailQpn(long tail) {
        return (int) (tail >>> 32) & 0xffffff;
    }

    /** {@code sop_drop_qpn >> 24} from a {@link #tail}: the opcode of the completed send WQE. */
    public static int tailSendOpcode(long tail) {
        return (int) (tail >>> 56);
    }

    /** {@code wqe_counter} from a {@link #tail}. */
    public static int tailWqeCounter(long tail) {
        return (int) (tail >>> 16) & 0xffff;
    }

    /**
     * The 8 bytes at {@code at} (a multiple of 8; 56 is {@link #tail}) of the CQE at {@code offset} as one big-endian load after
     * one bounds check, as {@link #tail} reads the last 8: a responder completion takes its fields from such
     * words instead of one checked read through the buffer per field. Decode with {@link #slidOf} (word 16),
     * {@link #flagsRqpnOf} (word 24), {@link #immInvalPkeyOf} (word 32) and {@link #byteCntOf} (word 40).
     */
    public static long word(DirectBuffer buffer, int offset, int at) {
        if (offset < 0 || offset > buffer.capacity() - SIZE) {
            throw new IndexOutOfBoundsException("CQE [" + offset + ", +64) outside buffer of " + buffer.capacity());
        }
        long raw = UnsafeApi.getLong(buffer.byteArray(), buffer.addressOffset() + offset + (at & 0x38));
        return NATIVE_LITTLE_ENDIAN ? Long.reverseBytes(raw) : raw;
    }

    /** {@code slid} (bytes 22-23) from the {@link #word} at 16. */
    public static int slidOf(long word16) {
        return (int) word16 & 0xffff;
    }

    /** {@code flags_rqpn} (bytes 24-27) from the {@link #word} at 24. */
    public static int flagsRqpnOf(long word24) {
        return (int) (word24 >>> 32);
    }

    /** {@code imm_inval_pkey} (bytes 36-39) from the {@link #word} at 32. */
    public static int immInvalPkeyOf(long word32) {
        return (int) word32;
    }

    /** {@code byte_cnt} (bytes 44-47) from the {@link #word} at 40. */
    public static int byteCntOf(long word40) {
        return (int) word40;
    }
}
