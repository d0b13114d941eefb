package io.jhca.verbs;

/** Send work request opcodes, with the values of {@code enum ibv_wr_opcode} (libibverbs verbs.h). */
public enum WrOpcode {
    RDMA_WRITE(0, WcOpcode.RDMA_WRITE),
    RDMA_WRITE_WITH_IMM(1, WcOpcode.RDMA_WRITE),
    SEND(2, WcOpcode.SEND),
    SEND_WITH_IMM(3, WcOpcode.SEND),
    RDMA_READ(4, WcOpcode.RDMA_READ),
    ATOMIC_CMP_AND_SWP(5, WcOpcode.COMP_SWAP),
    ATOMIC_FETCH_AND_ADD(6, WcOpcode.FETCH_ADD),
    /** Invalidates a type 2 window's rkey ({@link SendWr#invalidateRkey}); a local operation. */
    LOCAL_INV(7, WcOpcode.LOCAL_INV),
    /** Binds a type 2 window ({@link SendWr#bindMw}); a local operation. */
    BIND_MW(8, WcOpcode.BIND_MW),
    /** A SEND whose responder invalidates {@link SendWr#invalidateRkey} (IETH); RC only. */
    SEND_WITH_INV(9, WcOpcode.SEND);

    private static final WrOpcode[] VALUES = values();

    private final int value;
    private final WcOpcode completion;

    WrOpcode(int value, WcOpcode completion) {
        this.value = value;
        this.completion = completion;
    }

    /** The libibverbs value. */
    public int value() {
        return value;
    }

    /** The opcode of this WR's send completion. */
    public WcOpcode completionOpcode() {
        return completion;
    }

    public boolean hasImmediate() {
        return this == RDMA_WRITE_WITH_IMM || this == SEND_WITH_IMM;
    }

    public boolean isAtomic() {
        return this == ATOMIC_CMP_AND_SWP || this == ATOMIC_FETCH_AND_ADD;
    }

    /** True for opcodes that name a remote address and rkey. */
    public boolean isRdma() {
        return this == RDMA_WRITE || this == RDMA_WRITE_WITH_IMM || this == RDMA_READ || isAtomic();
    }

    /**
     * SEND, RDMA WRITE or RDMA READ, with or without immediate: a WR of a control segment, an optional remote
     * address and its gather list, the common WR a provider writes in one go.
     */
    public boolean isPlain() {
        return this == RDMA_WRITE || this == SEND || this == RDMA_WRITE_WITH_IMM || this == SEND_WITH_IMM
                || this == RDMA_READ;
    }

    /** True for operations the device carries out on its own, with no packet on the wire. */
    public boolean isLocal() {
        return this == LOCAL_INV || this == BIND_MW;
    }

    public static WrOpcode of(int value) {
        return VALUES[value];
    }
}
