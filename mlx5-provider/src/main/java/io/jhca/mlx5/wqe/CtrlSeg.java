package io.jhca.mlx5.wqe;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * The 16-byte control segment that starts every send WQE ({@code struct mlx5_wqe_ctrl_seg}, mlx5dv.h).
 *
 * <pre>
 *  0  be32 opmod_idx_opcode   31:24 opmod, 23:8 WQE index (16-bit cur_post), 7:0 opcode
 *  4  be32 qpn_ds             31:8 QPN/SQN, 5:0 DS (16-byte units, control segment included)
 *  8  u8   signature          0 unless the QP uses WQE signatures
 *  9  be16 dci_stream_channel_id (0 for ordinary QPs)
 * 11  u8   fm_ce_se           see {@link FmCeSe}
 * 12  u32  imm                stored as-is (see below)
 * </pre>
 *
 * <p>{@link #set} writes exactly the bytes {@code mlx5dv_set_ctrl_seg} writes, including its treatment of
 * {@code imm}: the 32-bit value is stored <em>as-is</em>, in the host's byte order, because the verbs
 * caller passes it already big-endian ({@code ibv_send_wr.imm_data} is a {@code __be32}; for SEND_INV it is
 * {@code htobe32(rkey)}). On x86 {@code imm = 0x11223344} therefore lands as {@code 44 33 22 11}. Java code
 * holding the immediate as a plain number should pass {@link #beImm(int)} of it.
 */
public final class CtrlSeg {

    public static final int SIZE = 16;
    public static final int OPMOD_IDX_OPCODE_OFFSET = 0;
    public static final int QPN_DS_OFFSET = 4;
    public static final int SIGNATURE_OFFSET = 8;
    public static final int DCI_STREAM_CHANNEL_ID_OFFSET = 9;
    public static final int FM_CE_SE_OFFSET = 11;
    public static final int IMM_OFFSET = 12;

    private static final boolean NATIVE_LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

    private CtrlSeg() {
    }

    /**
     * Writes a control segment at {@code offset}, as {@code mlx5dv_set_ctrl_seg(seg, pi, opcode, opmod, qpn,
     * fm_ce_se, ds, signature, imm)} does, and zeroes {@code dci_stream_channel_id}.
     *
     * @param pi        producer counter ({@code cur_post}, WQEBBs) of this WQE's first block; only the low 16 bits
     *                  are stored, so a free-running counter may be passed
     * @param opcode    {@link Mlx5Opcode}, 0..255
     * @param opmod     opcode modifier, 0..255
     * @param qpn       QP (or SQ) number, 24 bits
     * @param fmCeSe    {@link FmCeSe} bits, 0..255
     * @param ds        WQE size in 16-byte units, 0..63
     * @param signature WQE signature byte, 0..255
     * @param imm       immediate / invalidate rkey / mkey, stored as-is (host byte order), see the class comment
     */
    public static void set(MutableDirectBuffer buffer, int offset, int pi, int opcode, int opmod, int qpn,
                           int fmCeSe, int ds, int signature, int imm) {
        Segments.checkBounds(buffer, offset, SIZE);
        Segments.checkField("opcode", opcode, 0xff);
        Segments.checkField("opmod", opmod, 0xff);
        Segments.checkField("qpn", qpn, 0xffffff);
        Segments.checkField("fm_ce_se", fmCeSe, 0xff);
        Segments.checkField("ds", ds, SendWqeLayout.MAX_DS);
        Segments.checkField("signature", signature, 0xff);
        put(buffer, offset, pi, opcode, opmod, qpn, fmCeSe, ds, signature, imm);
    }

    /**
     * {@link #set} for the send ring's hot path: the same bytes, with the fields taken as the caller holds them
     * (the ring's own counters and verbs-checked values) and masked to their widths instead of range-checked. One
     * bounds check for the whole segment; two 8-byte stores.
     */
    public static void put(MutableDirectBuffer buffer, int offset, int pi, int opcode, int opmod, int qpn,
                           int fmCeSe, int ds, int signature, int imm) {
        Segments.put16(buffer, offset, word0(pi, opcode, opmod, qpn, ds), word1(signature, fmCeSe, imm));
    }

    /**
     * Bytes 0..7 of the segment as one big-endian value: opmod_idx_opcode, then qpn_ds. Each field is widened and
     * shifted to its place on its own, so that with everything but the WQE index fixed (a posting loop) the JIT
     * adds the index with a zero-extend, a shift and an or.
     */
    static long word0(int pi, int opcode, int opmod, int qpn, int ds) {
        return (long) (opmod & 0xff) << 56 | (long) (pi & 0xffff) << 40 | (long) (opcode & 0xff) << 32
                | ((qpn & 0xffffff) << 8 | (ds & SendWqeLayout.MAX_DS)) & 0xFFFFFFFFL;
    }

    /** Bytes 8..15: signature, dci_stream_channel_id 0, fm_ce_se, then imm as-is (host order), read big-endian. */
    static long word1(int signature, int fmCeSe, int imm) {
        return (long) (signature & 0xff) << 56 | (long) (fmCeSe & 0xff) << 32 | (beImm(imm) & 0xFFFFFFFFL);
    }

    /**
     * Rewrites only {@code qpn_ds} (bytes 4..7) of a control segment {@link #put} wrote: the send ring writes the
     * segment when it opens a WQE and its size when it closes it, as rdma-core does ({@code _common_wqe_init} writes
     * the control segment, {@code _common_wqe_finilize} stores {@code qpn_ds}). One 4-byte store.
     */
    public static void putQpnDs(MutableDirectBuffer buffer, int offset, int qpn, int ds) {
        Segments.put4(buffer, offset + QPN_DS_OFFSET, (qpn & 0xffffff) << 8 | (ds & SendWqeLayout.MAX_DS));
    }

    /** Rewrites only {@code imm} (bytes 12..15), stored as-is as {@link #put} stores it. One 4-byte store. */
    public static void putImm(MutableDirectBuffer buffer, int offset, int imm) {
        Segments.put4(buffer, offset + IMM_OFFSET, beImm(imm));
    }

    /** {@code htobe32(value)}: the as-is {@code imm} argument that puts {@code value} on the wire big-endian. */
    public static int beImm(int value) {
        return NATIVE_LITTLE_ENDIAN ? Integer.reverseBytes(value) : value;
    }

    public static int opmod(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getByte(offset + OPMOD_IDX_OPCODE_OFFSET) & 0xff;
    }

    /** The 16-bit WQE index (bits 23:8 of {@code opmod_idx_opcode}). */
    public static int wqeIndex(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getShort(offset + OPMOD_IDX_OPCODE_OFFSET + 1, ByteOrder.BIG_ENDIAN) & 0xffff;
    }

    public static int opcode(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getByte(offset + OPMOD_IDX_OPCODE_OFFSET + 3) & 0xff;
    }

    public static int qpn(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getInt(offset + QPN_DS_OFFSET, ByteOrder.BIG_ENDIAN) >>> 8;
    }

    /** DS count (bits 5:0 of {@code qpn_ds}, kernel qp.h {@code MLX5_WQE_CTRL_DS_MASK}). */
    public static int ds(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getByte(offset + QPN_DS_OFFSET + 3) & SendWqeLayout.MAX_DS;
    }

    public static int signature(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getByte(offset + SIGNATURE_OFFSET) & 0xff;
    }

    public static int fmCeSe(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getByte(offset + FM_CE_SE_OFFSET) & 0xff;
    }

    /** The imm field read in host byte order: the value {@link #set} was given. */
    public static int immAsIs(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getInt(offset + IMM_OFFSET, ByteOrder.nativeOrder());
    }

    /** The imm field read big-endian: the immediate data as it goes on the wire. */
    public static int immBe(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getInt(offset + IMM_OFFSET, ByteOrder.BIG_ENDIAN);
    }
}
