package io.jhca.verbs;

/** Send work request opcodes, with the values of {@code enum ibv_wr_opcode} (libibverbs verbs.h). */
public enum WrOpcode {
    RDMA_WRITE(0, WcOpcode.RDMA_WRITE, Kind.PLAIN | Kind.RDMA),
    RDMA_WRITE_WITH_IMM(1, WcOpcode.RDMA_WRITE, Kind.PLAIN | Kind.RDMA | Kind.IMM),
    SEND(2, WcOpcode.SEND, Kind.PLAIN),
    SEND_WITH_IMM(3, WcOpcode.SEND, Kind.PLAIN | Kind.IMM),
    RDMA_READ(4, WcOpcode.RDMA_READ, Kind.PLAIN | Kind.RDMA),
    ATOMIC_CMP_AND_SWP(5, WcOpcode.COMP_SWAP, Kind.RDMA | Kind.ATOMIC),
    ATOMIC_FETCH_AND_ADD(6, WcOpcode.FETCH_ADD, Kind.RDMA | Kind.ATOMIC),
    /** Invalidates a type 2 window's rkey ({@link SendWr#invalidateRkey}); a local operation. */
    LOCAL_INV(7, WcOpcode.LOCAL_INV, Kind.LOCAL),
    /** Binds a type 2 window ({@link SendWr#bindMw}); a local operation. */
    BIND_MW(8, WcOpcode.BIND_MW, Kind.LOCAL),
    /** A SEND whose responder invalidates {@link SendWr#invalidateRkey} (IETH); RC only. */
    SEND_WITH_INV(9, WcOpcode.SEND, 0);

    private static final WrOpcode[] VALUES = values();

    private final int value;
    private final WcOpcode completion;
    /**
     * What the opcode is, as bits: each question below is one load and one test on the posting path, where the
     * opcode comes from a WR and a chain of comparisons with the constants would be a branch each.
     */
    private final int kinds;

    /** The bits of {@link #kinds} (a nested class: enum constants may not name the enum's own static fields). */
    private static final class Kind {
        static final int PLAIN = 1;
        static final int RDMA = 2;
        static final int ATOMIC = 4;
        static final int LOCAL = 8;
        static final int IMM = 16;
    }

    WrOpcode(int value, WcOpcode completion, int kinds) {
        this.value = value;
        this.completion = completion;
        this.kinds = kinds;
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
        return (kinds & Kind.IMM) != 0;
    }

    public boolean isAtomic() {
        return (kinds & Kind.ATOMIC) != 0;
    }

    /** True for opcodes that name a remote address and rkey. */
    public boolean isRdma() {
        return (kinds & Kind.RDMA) != 0;
    }

    /**
     * SEND, RDMA WRITE or RDMA READ, with or without immediate: a WR of a control segment, an optional remote
     * address and its gather list, the common WR a provider writes in one go.
     */
    public boolean isPlain() {
        return (kinds & Kind.PLAIN) != 0;
    }

    /** True for operations the device carries out on its own, with no packet on the wire. */
    public boolean isLocal() {
        return (kinds & Kind.LOCAL) != 0;
    }

    public static WrOpcode of(int value) {
        return VALUES[value];
    }
}
