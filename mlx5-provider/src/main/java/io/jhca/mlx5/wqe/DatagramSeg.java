package io.jhca.mlx5.wqe;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Datagram segment of UD (and DC) WQEs: the 48-byte address vector {@code struct mlx5_wqe_av}
 * ({@code struct mlx5_wqe_datagram_seg}, mlx5dv.h), big-endian fields:
 * <pre>
 *  0 key: be32 qkey + be32 reserved, or be64 dc_key
 *  8 be32 dqp_dct      bit 31 MLX5_EXTENDED_UD_AV, 23:0 remote QPN (or DCT number)
 * 12 u8   stat_rate_sl RoCE: static_rate &lt;&lt; 4 | (sl &amp; 7) &lt;&lt; 1; IB: static_rate &lt;&lt; 4 | sl
 * 13 u8   fl_mlid      IB only: force loopback, source path bits
 * 14 be16 rlid         IB: remote LID; RoCEv2: the UDP source port
 * 16 4 bytes reserved
 * 20 u8[6] rmac        RoCE: destination MAC
 * 26 u8   tclass       traffic class / IPv4 TOS
 * 27 u8   hop_limit    hop limit / TTL
 * 28 be32 grh_gid_fl   bit 30 GRH (IB only; reserved 0 for RoCE), 27:20 sgid index, 19:0 flow label
 * 32 u8[16] rgid       destination GID (IPv4-mapped for RoCEv2 over IPv4)
 * </pre>
 * Field meanings per rdma-core verbs.c {@code mlx5_create_ah} and qp.c {@code _set_datagram_seg}.
 */
public final class DatagramSeg {

    public static final int SIZE = 48;
    public static final int KEY_OFFSET = 0;
    public static final int DQP_DCT_OFFSET = 8;
    public static final int STAT_RATE_SL_OFFSET = 12;
    public static final int FL_MLID_OFFSET = 13;
    public static final int RLID_OFFSET = 14;
    public static final int RESERVED0_OFFSET = 16;
    public static final int RMAC_OFFSET = 20;
    public static final int TCLASS_OFFSET = 26;
    public static final int HOP_LIMIT_OFFSET = 27;
    public static final int GRH_GID_FL_OFFSET = 28;
    public static final int RGID_OFFSET = 32;
    public static final int MAC_SIZE = 6;
    public static final int GID_SIZE = 16;
    /** {@code MLX5_EXTENDED_UD_AV}: bit 31 of dqp_dct, set by rdma-core on every UD WQE. */
    public static final int EXTENDED_UD_AV = 0x80000000;

    private DatagramSeg() {
    }

    /**
     * Writes the segment exactly as {@code mlx5dv_set_dgram_seg(seg, key, dqp_dct, ext, stat_rate_sl, fl_mlid,
     * rlid, rmac, tclass, hop_limit, grh_gid_fl, rgid)} does, plus zeroes for the 4 reserved bytes at 16.
     *
     * <p>Note that helper stores {@code key} as one be64: a 32-bit Q_Key passed as the number itself lands in
     * bytes 4..7, not in the {@code qkey} field at 0..3. For a UD Q_Key use {@link #setUd} (what rdma-core's
     * own post path does) or pass {@code (long) qkey << 32}.
     *
     * @param dqpDct     remote QPN / DCT number, 24 bits
     * @param ext        address-vector extension flag, 0 or 1 (bit 31 of dqp_dct)
     * @param statRateSl see the class comment, 0..255
     * @param flMlid     0..255
     * @param rlid       16 bits
     * @param rmac       6 bytes at {@code rmacOffset}
     * @param tclass     0..255
     * @param hopLimit   0..255
     * @param grhGidFl   written as be32
     * @param rgid       16 bytes at {@code rgidOffset}
     */
    public static void set(MutableDirectBuffer buffer, int offset, long key, int dqpDct, int ext, int statRateSl,
                           int flMlid, int rlid, DirectBuffer rmac, int rmacOffset, int tclass, int hopLimit,
                           int grhGidFl, DirectBuffer rgid, int rgidOffset) {
        Segments.checkBounds(buffer, offset, SIZE);
        Segments.checkBounds(rmac, rmacOffset, MAC_SIZE);
        Segments.checkBounds(rgid, rgidOffset, GID_SIZE);
        Segments.checkField("dqp_dct", dqpDct, 0xffffff);
        Segments.checkField("ext", ext, 1);
        Segments.checkField("stat_rate_sl", statRateSl, 0xff);
        Segments.checkField("fl_mlid", flMlid, 0xff);
        Segments.checkField("rlid", rlid, 0xffff);
        Segments.checkField("tclass", tclass, 0xff);
        Segments.checkField("hop_limit", hopLimit, 0xff);
        buffer.putLong(offset + KEY_OFFSET, key, ByteOrder.BIG_ENDIAN);
        buffer.putInt(offset + DQP_DCT_OFFSET, ext << 31 | dqpDct, ByteOrder.BIG_ENDIAN);
        buffer.putByte(offset + STAT_RATE_SL_OFFSET, (byte) statRateSl);
        buffer.putByte(offset + FL_MLID_OFFSET, (byte) flMlid);
        buffer.putShort(offset + RLID_OFFSET, (short) rlid, ByteOrder.BIG_ENDIAN);
        buffer.putInt(offset + RESERVED0_OFFSET, 0);
        buffer.putBytes(offset + RMAC_OFFSET, rmac, rmacOffset, MAC_SIZE);
        buffer.putByte(offset + TCLASS_OFFSET, (byte) tclass);
        buffer.putByte(offset + HOP_LIMIT_OFFSET, (byte) hopLimit);
        buffer.putInt(offset + GRH_GID_FL_OFFSET, grhGidFl, ByteOrder.BIG_ENDIAN);
        buffer.putBytes(offset + RGID_OFFSET, rgid, rgidOffset, GID_SIZE);
    }

    /**
     * The UD post path (rdma-core qp.c {@code _set_datagram_seg}): copies a prepared 48-byte address vector
     * (an address handle's {@code av}), then sets {@code dqp_dct = be32(remoteQpn | MLX5_EXTENDED_UD_AV)} and
     * {@code key.qkey.qkey = be32(qkey)} at offset 0.
     */
    public static void setUd(MutableDirectBuffer buffer, int offset, DirectBuffer av, int avOffset, int remoteQpn, int qkey) {
        Segments.checkBounds(buffer, offset, SIZE);
        Segments.checkBounds(av, avOffset, SIZE);
        Segments.checkField("remote qpn", remoteQpn, 0xffffff);
        buffer.putBytes(offset, av, avOffset, SIZE);
        buffer.putInt(offset + DQP_DCT_OFFSET, remoteQpn | EXTENDED_UD_AV, ByteOrder.BIG_ENDIAN);
        buffer.putInt(offset + KEY_OFFSET, qkey, ByteOrder.BIG_ENDIAN);
    }

    /** RoCE {@code stat_rate_sl}: {@code rate << 4 | (sl & 7) << 1} (verbs.c {@code mlx5_create_ah}, Ethernet link). */
    public static int roceStatRateSl(int mlx5Rate, int sl) {
        Segments.checkField("static rate", mlx5Rate, 0xf);
        return mlx5Rate << 4 | (sl & 0x7) << 1;
    }

    /**
     * {@code grh_gid_fl}: {@code grh << 30 | (sgidIndex & 0xff) << 20 | (flowLabel & 0xfffff)} (verbs.c
     * {@code mlx5_create_ah}; {@code grh} is 0 for RoCE, where a GRH is always present, 1 for IB).
     */
    public static int grhGidFl(boolean grh, int sgidIndex, int flowLabel) {
        return (grh ? 1 << 30 : 0) | (sgidIndex & 0xff) << 20 | (flowLabel & 0xfffff);
    }

    public static int qkey(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getInt(offset + KEY_OFFSET, ByteOrder.BIG_ENDIAN);
    }

    public static long dcKey(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getLong(offset + KEY_OFFSET, ByteOrder.BIG_ENDIAN);
    }

    public static int dqpDct(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getInt(offset + DQP_DCT_OFFSET, ByteOrder.BIG_ENDIAN);
    }

    public static int statRateSl(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getByte(offset + STAT_RATE_SL_OFFSET) & 0xff;
    }

    public static int flMlid(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getByte(offset + FL_MLID_OFFSET) & 0xff;
    }

    public static int rlid(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getShort(offset + RLID_OFFSET, ByteOrder.BIG_ENDIAN) & 0xffff;
    }

    public static int tclass(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getByte(offset + TCLASS_OFFSET) & 0xff;
    }

    public static int hopLimit(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getByte(offset + HOP_LIMIT_OFFSET) & 0xff;
    }

    public static int grhGidFl(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getInt(offset + GRH_GID_FL_OFFSET, ByteOrder.BIG_ENDIAN);
    }
}
