package io.jhca.doorbell;

/**
 * Arms an mlx5 CQ for its next completion event, rdma-core cq.c {@code mlx5_arm_cq}:
 * <ol>
 * <li>{@code word = sn << 28 | cmd | ci}, with {@code sn = arm_sn & 3}, {@code ci = cons_index & 0xffffff},
 *     {@code cmd = MLX5_CQ_DB_REQ_NOT (0)} or {@code MLX5_CQ_DB_REQ_NOT_SOL (1 << 24)} (mlx5dv.h);</li>
 * <li>doorbell record word 1 ({@code MLX5_CQ_ARM_DB}) := be32(word);</li>
 * <li>{@code mmio_wc_start()};</li>
 * <li>one 64-bit big-endian store of {@code (word << 32) | cqn} at UAR + {@code MLX5_CQ_DOORBELL (0x20)}:
 *     bytes 0..3 = be32(word), bytes 4..7 = be32(cqn);</li>
 * <li>{@code mmio_flush_writes()}.</li>
 * </ol>
 * The caller increments its {@code arm_sn} on every CQ event it receives ({@code mlx5_cq_event}).
 */
public final class CqArm {

    /** Offset of the CQ doorbell in a UAR page ({@code MLX5_CQ_DOORBELL}, mlx5dv.h). */
    public static final int CQ_DOORBELL = 0x20;
    /** Request an event on the next completion ({@code MLX5_CQ_DB_REQ_NOT}). */
    public static final int REQ_NOT = 0;
    /** Request an event on the next solicited completion only ({@code MLX5_CQ_DB_REQ_NOT_SOL}). */
    public static final int REQ_NOT_SOL = 1 << 24;

    private final MmioWindow uar;
    private final int doorbellOffset;
    private final DoorbellRecord dbr;
    private final int cqn;

    /** For a CQ whose UAR page is the start of {@code uar}. */
    public CqArm(MmioWindow uar, DoorbellRecord dbr, int cqn) {
        this(uar, 0, dbr, cqn);
    }

    /** For a CQ whose UAR page starts at {@code uarPageOffset} in {@code uar}. */
    public CqArm(MmioWindow uar, int uarPageOffset, DoorbellRecord dbr, int cqn) {
        if ((cqn & ~0xffffff) != 0) {
            throw new IllegalArgumentException("cqn 0x" + Integer.toHexString(cqn) + " is not a 24-bit number");
        }
        if (uarPageOffset < 0 || (uarPageOffset & 7) != 0 || uarPageOffset > uar.length() - CQ_DOORBELL - 8) {
            throw new IllegalArgumentException("UAR page at 0x" + Integer.toHexString(uarPageOffset) + " has no CQ doorbell inside the window");
        }
        this.uar = uar;
        this.doorbellOffset = uarPageOffset + CQ_DOORBELL;
        this.dbr = dbr;
        this.cqn = cqn;
    }

    /** The arm word {@code (sn & 3) << 28 | cmd | (ci & 0xffffff)}. */
    public static int armWord(int armSn, int consIndex, boolean solicitedOnly) {
        return (armSn & 3) << 28 | (solicitedOnly ? REQ_NOT_SOL : REQ_NOT) | (consIndex & 0xffffff);
    }

    /** The 64-bit CQ doorbell value {@code word << 32 | cqn} (stored big-endian). */
    public static long doorbell(int armWord, int cqn) {
        return ((long) armWord << 32) | (cqn & 0xffffffffL);
    }

    /** Arms the CQ: see the class comment for the exact sequence. */
    public void arm(int armSn, int consIndex, boolean solicitedOnly) {
        int word = armWord(armSn, consIndex, solicitedOnly);
        dbr.setArmWord(word);
        Fences.doorbellRecordBeforeMmio();
        uar.putLongBe(doorbellOffset, doorbell(word, cqn));
        Fences.flushMmio();
    }

    public int cqn() {
        return cqn;
    }
}
