package io.jhca.mlx5;

import io.jhca.mlx5.wqe.Mlx5Opcode;
import io.jhca.verbs.WrOpcode;

/** Verbs send opcodes to WQE opcodes (rdma-core qp.c {@code mlx5_ib_opcode[]}). */
final class WqeOpcodes {

    private static final int[] BY_WR = new int[WrOpcode.values().length];

    static {
        BY_WR[WrOpcode.RDMA_WRITE.ordinal()] = Mlx5Opcode.RDMA_WRITE;
        BY_WR[WrOpcode.RDMA_WRITE_WITH_IMM.ordinal()] = Mlx5Opcode.RDMA_WRITE_IMM;
        BY_WR[WrOpcode.SEND.ordinal()] = Mlx5Opcode.SEND;
        BY_WR[WrOpcode.SEND_WITH_IMM.ordinal()] = Mlx5Opcode.SEND_IMM;
        BY_WR[WrOpcode.RDMA_READ.ordinal()] = Mlx5Opcode.RDMA_READ;
        BY_WR[WrOpcode.ATOMIC_CMP_AND_SWP.ordinal()] = Mlx5Opcode.ATOMIC_CS;
        BY_WR[WrOpcode.ATOMIC_FETCH_AND_ADD.ordinal()] = Mlx5Opcode.ATOMIC_FA;
        BY_WR[WrOpcode.LOCAL_INV.ordinal()] = Mlx5Opcode.UMR;
        BY_WR[WrOpcode.BIND_MW.ordinal()] = Mlx5Opcode.UMR;
        BY_WR[WrOpcode.SEND_WITH_INV.ordinal()] = Mlx5Opcode.SEND_INVAL;
    }

    private WqeOpcodes() {
    }

    private static final boolean[] CARRIES_IMM = new boolean[WrOpcode.values().length];

    static {
        for (WrOpcode op : WrOpcode.values()) {
            CARRIES_IMM[op.ordinal()] = op.hasImmediate() || op.isLocal() || op == WrOpcode.SEND_WITH_INV;
        }
    }

    /** Whether the control segment's imm field carries something: immediate data, or an rkey (qp.c send_ieth). */
    static boolean carriesImm(WrOpcode op) {
        return CARRIES_IMM[op.ordinal()];
    }

    static int of(WrOpcode op) {
        return BY_WR[op.ordinal()];
    }

    // A plain WR's WQE facts packed in one int by the WR opcode's ordinal: the common WR's WQE reads them with one
    // load from a constant table, where the opcode, its ordinal, its completion opcode and that one's ordinal are
    // a chain of four dependent loads on every WR.
    /** Bits 7:0 of {@link #plain}: the WQE opcode. */
    static final int PLAIN_OPCODE_MASK = 0xff;
    /** Bit of {@link #plain}: the control segment carries the WR's immediate data. */
    static final int PLAIN_IMM = 1 << 8;
    /** Bit of {@link #plain}: a remote address segment follows the control segment. */
    static final int PLAIN_RDMA = 1 << 9;
    /** Shift of {@link #plain}'s bits 23:16: the ordinal of the WR's completion opcode. */
    static final int PLAIN_WC_SHIFT = 16;

    private static final int[] PLAIN = new int[WrOpcode.values().length];

    static {
        for (WrOpcode op : WrOpcode.values()) {
            PLAIN[op.ordinal()] = BY_WR[op.ordinal()] | (CARRIES_IMM[op.ordinal()] ? PLAIN_IMM : 0)
                    | (op.isRdma() ? PLAIN_RDMA : 0) | op.completionOpcode().ordinal() << PLAIN_WC_SHIFT;
        }
    }

    /** The packed WQE facts of the WR opcode of ordinal {@code wrOrdinal} (a plain one, {@link WrOpcode#isPlain}). */
    static int plain(int wrOrdinal) {
        return PLAIN[wrOrdinal];
    }

    /**
     * {@link #plain} for a caller whose opcode the JIT may know (the builder's opcode calls, inlined): compared with
     * static final ordinals, a constant opcode folds to its answer, where an array element is a load whatever the
     * index. postSend reads its facts here too: where the chains carry one opcode (as a posting loop's usually do),
     * the JIT's branch profile compiles only that compare and the facts are a constant again, so the WQE is written
     * without the table load and the tests of the facts' bits (B/A 0.97 / 0.93 / 0.94 at batch 1/8/32). The same
     * facts as {@link #plain} (WqeOpcodesTest).
     */
    static int plainOf(int wrOrdinal) {
        if (wrOrdinal == RDMA_WRITE) {
            return PLAIN_RDMA_WRITE;
        } else if (wrOrdinal == SEND) {
            return PLAIN_SEND;
        } else if (wrOrdinal == RDMA_READ) {
            return PLAIN_RDMA_READ;
        }
        return PLAIN[wrOrdinal];
    }

    private static final int RDMA_WRITE = WrOpcode.RDMA_WRITE.ordinal();
    private static final int SEND = WrOpcode.SEND.ordinal();
    private static final int RDMA_READ = WrOpcode.RDMA_READ.ordinal();
    private static final int PLAIN_RDMA_WRITE = PLAIN[RDMA_WRITE];
    private static final int PLAIN_SEND = PLAIN[SEND];
    private static final int PLAIN_RDMA_READ = PLAIN[RDMA_READ];
}
