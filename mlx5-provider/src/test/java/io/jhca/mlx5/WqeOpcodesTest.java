package io.jhca.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.jhca.mlx5.wqe.Mlx5Opcode;
import io.jhca.verbs.WrOpcode;
import org.junit.jupiter.api.Test;

/** The builder's constant-folding lookup of a plain WR's WQE facts answers as the table does, for every opcode. */
class WqeOpcodesTest {

    @Test
    void plainOfAnswersAsThePlainTable() {
        for (WrOpcode op : WrOpcode.values()) {
            assertEquals(WqeOpcodes.plain(op.ordinal()), WqeOpcodes.plainOf(op.ordinal()), op.toString());
        }
        int w = WqeOpcodes.plainOf(WrOpcode.RDMA_WRITE.ordinal());
        assertEquals(Mlx5Opcode.RDMA_WRITE, w & WqeOpcodes.PLAIN_OPCODE_MASK);
        assertEquals(WqeOpcodes.PLAIN_RDMA, w & (WqeOpcodes.PLAIN_RDMA | WqeOpcodes.PLAIN_IMM));
        assertEquals(io.jhca.verbs.WcOpcode.RDMA_WRITE.ordinal(), w >>> WqeOpcodes.PLAIN_WC_SHIFT);
    }
}
