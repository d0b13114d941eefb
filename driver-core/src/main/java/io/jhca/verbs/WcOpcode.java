package io.jhca.verbs;

/** Work completion opcodes, with the values of {@code enum ibv_wc_opcode} (libibverbs verbs.h). */
public enum WcOpcode {
    SEND(0),
    RDMA_WRITE(1),
    RDMA_READ(2),
    COMP_SWAP(3),
    FETCH_ADD(4),
    BIND_MW(5),
    LOCAL_INV(6),
    /** Receive side: a SEND arrived. */
    RECV(1 << 7),
    /** Receive side: an RDMA WRITE with immediate consumed a receive WR. */
    RECV_RDMA_WITH_IMM((1 << 7) + 1);

    private final int value;

    WcOpcode(int value) {
        this.value = value;
    }

    /** The libibverbs value. */
    public int value() {
        return value;
    }

    /** True for the opcodes of receive completions (bit 7 set, as IBV_WC_RECV). */
    public boolean isReceive() {
        return (value & (1 << 7)) != 0;
    }
}
