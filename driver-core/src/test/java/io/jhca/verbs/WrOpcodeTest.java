package io.jhca.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.EnumSet;
import java.util.Set;
import java.util.function.Predicate;

import org.junit.jupiter.api.Test;

/**
 * What each opcode is, against sets written out from libibverbs' {@code enum ibv_wr_opcode} and the ibv_post_send
 * man page: which carry immediate data, which name a remote address and rkey, which are atomics, which are local
 * (no packet on the wire), which are the plain WR a provider may write in one go.
 */
class WrOpcodeTest {

    @Test
    void everyOpcodeAnswersAsTheVerbsApiDefinesIt() {
        check(WrOpcode::hasImmediate, EnumSet.of(WrOpcode.RDMA_WRITE_WITH_IMM, WrOpcode.SEND_WITH_IMM));
        check(WrOpcode::isAtomic, EnumSet.of(WrOpcode.ATOMIC_CMP_AND_SWP, WrOpcode.ATOMIC_FETCH_AND_ADD));
        check(WrOpcode::isRdma, EnumSet.of(WrOpcode.RDMA_WRITE, WrOpcode.RDMA_WRITE_WITH_IMM, WrOpcode.RDMA_READ,
                WrOpcode.ATOMIC_CMP_AND_SWP, WrOpcode.ATOMIC_FETCH_AND_ADD));
        check(WrOpcode::isLocal, EnumSet.of(WrOpcode.LOCAL_INV, WrOpcode.BIND_MW));
        check(WrOpcode::isPlain, EnumSet.of(WrOpcode.RDMA_WRITE, WrOpcode.RDMA_WRITE_WITH_IMM, WrOpcode.SEND,
                WrOpcode.SEND_WITH_IMM, WrOpcode.RDMA_READ));
    }

    private static void check(Predicate<WrOpcode> question, Set<WrOpcode> yes) {
        for (WrOpcode op : WrOpcode.values()) {
            assertEquals(yes.contains(op), question.test(op), op.name());
        }
    }
}
