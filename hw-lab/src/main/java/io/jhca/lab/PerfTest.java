package io.jhca.lab;

import io.jhca.verbs.Access;

/**
 * The perftest programs {@code hwlab perf} implements, with perftest's names, defaults and per-test rules
 * (perftest v4.5-0.17 = "6.06", as Debian bookworm ships it: src/perftest_parameters.{h,c}).
 */
public enum PerfTest {
    WRITE_LAT("write-lat", Verb.WRITE, true),
    WRITE_BW("write-bw", Verb.WRITE, false),
    READ_LAT("read-lat", Verb.READ, true),
    READ_BW("read-bw", Verb.READ, false),
    SEND_LAT("send-lat", Verb.SEND, true),
    SEND_BW("send-bw", Verb.SEND, false),
    ATOMIC_LAT("atomic-lat", Verb.ATOMIC, true);

    /** perftest's verbs, in the order of its enum (testsStr: "Send", "RDMA_Write", "RDMA_Read", "Atomic"). */
    public enum Verb {
        SEND("Send"), WRITE("RDMA_Write"), READ("RDMA_Read"), ATOMIC("Atomic");

        private final String text;

        Verb(String text) {
            this.text = text;
        }

        public String text() {
            return text;
        }
    }

    /** perftest_parameters.h: MAX_SIZE, the largest -a size (2^23). */
    public static final int MAX_SIZE = 8388608;
    /** perftest_parameters.c: only FETCH_AND_ADD is run by default (atomicTypesStr[1]). */
    public static final String ATOMIC_TYPE = "FETCH_AND_ADD";

    private final String command;
    private final Verb verb;
    private final boolean latency;

    PerfTest(String command, Verb verb, boolean latency) {
        this.command = command;
        this.verb = verb;
        this.latency = latency;
    }

    public String command() {
        return command;
    }

    public Verb verb() {
        return verb;
    }

    public boolean latency() {
        return latency;
    }

    /** The banner title, e.g. "RDMA_Write Latency Test" (ctx_print_test_info). */
    public String title() {
        return verb.text() + " " + (verb == Verb.ATOMIC ? ATOMIC_TYPE + " " : "") + (latency ? "Latency " : "BW ") + "Test";
    }

    /** perftest's JSON "test" value, e.g. "RDMA_Write_Latency_Test" (write_test_info_to_file). */
    public String jsonName() {
        return verb.text() + "_" + (verb == Verb.ATOMIC ? ATOMIC_TYPE + "_" : "") + (latency ? "Latency_" : "BW_") + "Test";
    }

    /** Reported latency = measured time / factor: RTT/2 for send and write, full RTT for read and atomic (rtt_factor). */
    public int rttFactor() {
        return verb == Verb.READ || verb == Verb.ATOMIC ? 1 : 2;
    }

    /** DEF_SIZE_LAT 2, DEF_SIZE_BW 65536, DEF_SIZE_ATOMIC 8. */
    public int defaultSize() {
        return verb == Verb.ATOMIC ? 8 : latency ? 2 : 65536;
    }

    /** DEF_ITERS 1000, DEF_ITERS_WB 5000 for write BW. */
    public int defaultIters() {
        return this == WRITE_BW ? 5000 : 1000;
    }

    /** DEF_TX_BW 128, DEF_TX_LAT 1. */
    public int defaultTxDepth() {
        return latency ? 1 : 128;
    }

    /** DEF_RX_SEND 512 for SEND tests, DEF_RX_RDMA 1 otherwise. */
    public int defaultRxDepth() {
        return verb == Verb.SEND ? 512 : 1;
    }

    /** ctx_set_max_inline: latency write 220 (DEF_INLINE_WRITE), latency send 236 (DEF_INLINE_SEND_RC_UC_XRC), else 0. */
    public int defaultInline() {
        if (!latency) {
            return 0;
        }
        return verb == Verb.WRITE ? 220 : verb == Verb.SEND ? 236 : 0;
    }

    /** READ and ATOMIC tests run with the device's outstanding-reads limit; others with 1 (ctx_set_out_reads). */
    public boolean usesOutReads() {
        return verb == Verb.READ || verb == Verb.ATOMIC;
    }

    /** The server only answers (remote reads/writes/atomics land in its memory): it runs no loop of its own. */
    public boolean serverPassive() {
        return this == READ_LAT || this == ATOMIC_LAT || this == WRITE_BW || this == READ_BW;
    }

    /** QP access flags at INIT (perftest_resources.c ctx_modify_qp_to_init). */
    public int qpAccess() {
        switch (verb) {
            case ATOMIC: return Access.REMOTE_ATOMIC.bit();
            case READ: return Access.REMOTE_READ.bit();
            case WRITE: return Access.REMOTE_WRITE.bit();
            default: return Access.REMOTE_WRITE.bit() | Access.LOCAL_WRITE.bit();
        }
    }

    /** MR access flags: local write plus the remote right the test needs (create_single_mr). */
    public int mrAccess() {
        int m = Access.LOCAL_WRITE.bit();
        switch (verb) {
            case WRITE: return m | Access.REMOTE_WRITE.bit();
            case READ: return m | Access.REMOTE_READ.bit();
            case ATOMIC: return m | Access.REMOTE_ATOMIC.bit();
            default: return m;
        }
    }

    public static PerfTest ofCommand(String name) {
        for (PerfTest t : values()) {
            if (t.command.equals(name)) {
                return t;
            }
        }
        throw new IllegalArgumentException("unknown perf test '" + name + "'");
    }
}
