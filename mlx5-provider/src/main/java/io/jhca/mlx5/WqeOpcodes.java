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
    }

    private WqeOpcodes() {
    }

    static int of(WrOpcode op) {
        return BY_WR[op.ordinal()];
    }
}
