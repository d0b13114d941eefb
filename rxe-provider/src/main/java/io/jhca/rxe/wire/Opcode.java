package io.jhca.rxe.wire;

/**
 * BTH opcodes and what each one implies, as tables indexed by the 8-bit opcode (no allocation on lookup).
 *
 * <p>Values are from {@code include/rdma/ib_pack.h} (and rdma-core {@code infiniband/opcode.h}); the headers
 * that follow the BTH, their order and the per-opcode flags follow Linux rxe's {@code rxe_opcode.c}
 * (rocev2.md §1.4). Offsets are counted from the first byte of the BTH.
 *
 * <p>{@link #VALID} marks what this wire layer speaks: RC, UC and UD. Known but unsupported opcodes (RD, the
 * RoCEv2 CNP, kernel 6.2+ FLUSH and ATOMIC_WRITE) have a {@link #name(int) name} for logs but are not VALID;
 * the layouts of FLUSH and ATOMIC_WRITE are filled in for decoding logs, those of RD and CNP are not.
 */
public final class Opcode {

    // Transport: BTH opcode bits 7:5 (ib_pack.h IB_OPCODE_RC 0x00, UC 0x20, RD 0x40, UD 0x60, CNP 0x80).
    public static final int TRANSPORT_RC = 0;
    public static final int TRANSPORT_UC = 1;
    public static final int TRANSPORT_RD = 2;
    public static final int TRANSPORT_UD = 3;
    public static final int TRANSPORT_CNP = 4;

    // RC (ib_pack.h)
    public static final int RC_SEND_FIRST = 0x00;
    public static final int RC_SEND_MIDDLE = 0x01;
    public static final int RC_SEND_LAST = 0x02;
    public static final int RC_SEND_LAST_WITH_IMMEDIATE = 0x03;
    public static final int RC_SEND_ONLY = 0x04;
    public static final int RC_SEND_ONLY_WITH_IMMEDIATE = 0x05;
    public static final int RC_RDMA_WRITE_FIRST = 0x06;
    public static final int RC_RDMA_WRITE_MIDDLE = 0x07;
    public static final int RC_RDMA_WRITE_LAST = 0x08;
    public static final int RC_RDMA_WRITE_LAST_WITH_IMMEDIATE = 0x09;
    public static final int RC_RDMA_WRITE_ONLY = 0x0A;
    public static final int RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0x0B;
    public static final int RC_RDMA_READ_REQUEST = 0x0C;
    public static final int RC_RDMA_READ_RESPONSE_FIRST = 0x0D;
    public static final int RC_RDMA_READ_RESPONSE_MIDDLE = 0x0E;
    public static final int RC_RDMA_READ_RESPONSE_LAST = 0x0F;
    public static final int RC_RDMA_READ_RESPONSE_ONLY = 0x10;
    public static final int RC_ACKNOWLEDGE = 0x11;
    public static final int RC_ATOMIC_ACKNOWLEDGE = 0x12;
    public static final int RC_COMPARE_SWAP = 0x13;
    public static final int RC_FETCH_ADD = 0x14;
    public static final int RC_SEND_LAST_WITH_INVALIDATE = 0x16;
    public static final int RC_SEND_ONLY_WITH_INVALIDATE = 0x17;
    /** Kernel 6.2+ (rxe_opcode.c); not supported here. */
    public static final int RC_FLUSH = 0x1C;
    /** Kernel 6.2+ (rxe_opcode.c); not supported here. */
    public static final int RC_ATOMIC_WRITE = 0x1D;

    // UC
    public static final int UC_SEND_FIRST = 0x20;
    public static final int UC_SEND_MIDDLE = 0x21;
    public static final int UC_SEND_LAST = 0x22;
    public static final int UC_SEND_LAST_WITH_IMMEDIATE = 0x23;
    public static final int UC_SEND_ONLY = 0x24;
    public static final int UC_SEND_ONLY_WITH_IMMEDIATE = 0x25;
    public static final int UC_RDMA_WRITE_FIRST = 0x26;
    public static final int UC_RDMA_WRITE_MIDDLE = 0x27;
    public static final int UC_RDMA_WRITE_LAST = 0x28;
    public static final int UC_RDMA_WRITE_LAST_WITH_IMMEDIATE = 0x29;
    public static final int UC_RDMA_WRITE_ONLY = 0x2A;
    public static final int UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0x2B;

    // UD
    public static final int UD_SEND_ONLY = 0x64;
    public static final int UD_SEND_ONLY_WITH_IMMEDIATE = 0x65;

    /** RoCEv2 congestion notification packet (scapy contrib/roce.py CNP_OPCODE); rxe does not handle it. */
    public static final int CNP = 0x81;

    // Flag bits of flags(op). Names follow rxe_opcode.c masks where one exists.
    /** Spoken by this wire layer (RC, UC, UD). */
    public static final int VALID = 1;
    /** Has a name (VALID, RD, CNP, FLUSH, ATOMIC_WRITE). */
    public static final int KNOWN = 1 << 1;
    public static final int HAS_RETH = 1 << 2;
    public static final int HAS_AETH = 1 << 3;
    public static final int HAS_ATOMIC_ETH = 1 << 4;
    public static final int HAS_ATOMIC_ACK_ETH = 1 << 5;
    public static final int HAS_IMMDT = 1 << 6;
    public static final int HAS_DETH = 1 << 7;
    public static final int HAS_IETH = 1 << 8;
    public static final int HAS_FETH = 1 << 9;
    /** Carries payload (rxe RXE_PAYLOAD_MASK); ATOMIC_WRITE carries exactly 8 bytes. */
    public static final int HAS_PAYLOAD = 1 << 10;
    /** First packet of a message (rxe RXE_START_MASK); ONLY = START | END. */
    public static final int START = 1 << 11;
    public static final int MIDDLE = 1 << 12;
    /** Last packet of a message (rxe RXE_END_MASK). */
    public static final int END = 1 << 13;
    /** Requester to responder (rxe RXE_REQ_MASK). */
    public static final int REQUEST = 1 << 14;
    /** Responder to requester: read responses, ACK, atomic ACK (rxe RXE_ACK_MASK). */
    public static final int RESPONSE = 1 << 15;
    /** ACKNOWLEDGE or ATOMIC_ACKNOWLEDGE only. */
    public static final int ACK = 1 << 16;
    public static final int SEND = 1 << 17;
    public static final int WRITE = 1 << 18;
    public static final int READ = 1 << 19;
    public static final int ATOMIC = 1 << 20;
    /** Consumes a receive WQE at the responder (rxe RXE_RWR_MASK). */
    public static final int CONSUMES_RECV_WQE = 1 << 21;
    /** Produces a receive completion at the responder (rxe RXE_COMP_MASK). */
    public static final int RECV_COMPLETION = 1 << 22;

    // Extension header sizes (rxe_hdr.h, ib_pack.h).
    private static final int RETH_BYTES = Reth.LENGTH;
    private static final int AETH_BYTES = Aeth.LENGTH;
    private static final int ATOMIC_ETH_BYTES = AtomicEth.LENGTH;
    private static final int ATOMIC_ACK_ETH_BYTES = AtomicAckEth.LENGTH;
    private static final int IMMDT_BYTES = ImmDt.LENGTH;
    private static final int DETH_BYTES = Deth.LENGTH;
    private static final int IETH_BYTES = Ieth.LENGTH;
    private static final int FETH_BYTES = 4;

    /** Absent header. */
    public static final int NO_HEADER = -1;

    private static final int[] FLAGS = new int[256];
    private static final byte[] HEADER_LENGTH = new byte[256];
    private static final byte[] RETH_OFFSET = absent();
    private static final byte[] AETH_OFFSET = absent();
    private static final byte[] ATOMIC_ETH_OFFSET = absent();
    private static final byte[] ATOMIC_ACK_ETH_OFFSET = absent();
    private static final byte[] IMMDT_OFFSET = absent();
    private static final byte[] DETH_OFFSET = absent();
    private static final byte[] IETH_OFFSET = absent();
    private static final byte[] FETH_OFFSET = absent();
    private static final String[] NAMES = new String[256];
    private static final String[] UNKNOWN_NAMES = new String[256];

    static {
        final int only = START | END;
        final int sendFirst = VALID | HAS_PAYLOAD | REQUEST | SEND | START | CONSUMES_RECV_WQE;
        final int sendMiddle = VALID | HAS_PAYLOAD | REQUEST | SEND | MIDDLE;
        final int sendLast = VALID | HAS_PAYLOAD | REQUEST | SEND | END | RECV_COMPLETION;
        final int sendOnly = VALID | HAS_PAYLOAD | REQUEST | SEND | only | CONSUMES_RECV_WQE | RECV_COMPLETION;
        final int writeFirst = VALID | HAS_PAYLOAD | REQUEST | WRITE | START;
        final int writeMiddle = VALID | HAS_PAYLOAD | REQUEST | WRITE | MIDDLE;
        final int writeLast = VALID | HAS_PAYLOAD | REQUEST | WRITE | END;
        final int writeOnly = VALID | HAS_PAYLOAD | REQUEST | WRITE | only;
        final int withImm = HAS_IMMDT | CONSUMES_RECV_WQE | RECV_COMPLETION;

        for (final int base : new int[] {0x00, 0x20}) {
            final String t = base == 0 ? "RC_" : "UC_";
            define(base + 0x00, t + "SEND_FIRST", sendFirst);
            define(base + 0x01, t + "SEND_MIDDLE", sendMiddle);
            define(base + 0x02, t + "SEND_LAST", sendLast);
            define(base + 0x03, t + "SEND_LAST_WITH_IMMEDIATE", sendLast | HAS_IMMDT);
            define(base + 0x04, t + "SEND_ONLY", sendOnly);
            define(base + 0x05, t + "SEND_ONLY_WITH_IMMEDIATE", sendOnly | HAS_IMMDT);
            define(base + 0x06, t + "RDMA_WRITE_FIRST", writeFirst | HAS_RETH);
            define(base + 0x07, t + "RDMA_WRITE_MIDDLE", writeMiddle);
            define(base + 0x08, t + "RDMA_WRITE_LAST", writeLast);
            define(base + 0x09, t + "RDMA_WRITE_LAST_WITH_IMMEDIATE", writeLast | withImm);
            define(base + 0x0A, t + "RDMA_WRITE_ONLY", writeOnly | HAS_RETH);
            define(base + 0x0B, t + "RDMA_WRITE_ONLY_WITH_IMMEDIATE", writeOnly | HAS_RETH | withImm);
        }
        define(RC_RDMA_READ_REQUEST, "RC_RDMA_READ_REQUEST", VALID | HAS_RETH | REQUEST | READ | only);
        final int readResponse = VALID | HAS_PAYLOAD | RESPONSE | READ;
        define(RC_RDMA_READ_RESPONSE_FIRST, "RC_RDMA_READ_RESPONSE_FIRST", readResponse | HAS_AETH | START);
        define(RC_RDMA_READ_RESPONSE_MIDDLE, "RC_RDMA_READ_RESPONSE_MIDDLE", readResponse | MIDDLE);
        define(RC_RDMA_READ_RESPONSE_LAST, "RC_RDMA_READ_RESPONSE_LAST", readResponse | HAS_AETH | END);
        define(RC_RDMA_READ_RESPONSE_ONLY, "RC_RDMA_READ_RESPONSE_ONLY", readResponse | HAS_AETH | only);
        define(RC_ACKNOWLEDGE, "RC_ACKNOWLEDGE", VALID | HAS_AETH | RESPONSE | ACK | only);
        define(RC_ATOMIC_ACKNOWLEDGE, "RC_ATOMIC_ACKNOWLEDGE",
                VALID | HAS_AETH | HAS_ATOMIC_ACK_ETH | RESPONSE | ACK | ATOMIC | only);
        define(RC_COMPARE_SWAP, "RC_COMPARE_SWAP", VALID | HAS_ATOMIC_ETH | REQUEST | ATOMIC | only);
        define(RC_FETCH_ADD, "RC_FETCH_ADD", VALID | HAS_ATOMIC_ETH | REQUEST | ATOMIC | only);
        define(RC_SEND_LAST_WITH_INVALIDATE, "RC_SEND_LAST_WITH_INVALIDATE", sendLast | HAS_IETH);
        define(RC_SEND_ONLY_WITH_INVALIDATE, "RC_SEND_ONLY_WITH_INVALIDATE", sendOnly | HAS_IETH);
        // Listed, not supported: named and laid out for logs, never VALID.
        define(RC_FLUSH, "RC_FLUSH", HAS_FETH | HAS_RETH | REQUEST | only);
        define(RC_ATOMIC_WRITE, "RC_ATOMIC_WRITE", HAS_RETH | HAS_PAYLOAD | REQUEST | WRITE | only);

        define(UD_SEND_ONLY, "UD_SEND_ONLY", sendOnly | HAS_DETH);
        define(UD_SEND_ONLY_WITH_IMMEDIATE, "UD_SEND_ONLY_WITH_IMMEDIATE", sendOnly | HAS_DETH | HAS_IMMDT);

        // RD (rxe parses it, never uses it) and CNP: names only.
        for (int op = 0; op <= RC_FETCH_ADD; op++) { // RD 0x40..0x54 (ib_pack.h), same operations as RC
            NAMES[0x40 + op] = "RD_" + NAMES[op].substring(3);
            FLAGS[0x40 + op] = KNOWN;
        }
        NAMES[CNP] = "CNP";
        FLAGS[CNP] = KNOWN;

        for (int op = 0; op < 256; op++) {
            UNKNOWN_NAMES[op] = String.format("UNKNOWN_0x%02X", op);
        }
    }

    private Opcode() {
    }

    private static byte[] absent() {
        final byte[] a = new byte[256];
        java.util.Arrays.fill(a, (byte) NO_HEADER);
        return a;
    }

    /** Lays the extension headers out in rxe_opcode.c order: FETH, RETH / AETH, DETH, AtomicETH, ImmDt, IETH. */
    private static void define(final int op, final String name, final int flags) {
        int at = Bth.LENGTH;
        if ((flags & HAS_FETH) != 0) {
            FETH_OFFSET[op] = (byte) at;
            at += FETH_BYTES;
        }
        if ((flags & HAS_AETH) != 0) {
            AETH_OFFSET[op] = (byte) at;
            at += AETH_BYTES;
        }
        if ((flags & HAS_ATOMIC_ACK_ETH) != 0) { // after AETH (rxe_opcode.c ATOMIC_ACKNOWLEDGE)
            ATOMIC_ACK_ETH_OFFSET[op] = (byte) at;
            at += ATOMIC_ACK_ETH_BYTES;
        }
        if ((flags & HAS_DETH) != 0) {
            DETH_OFFSET[op] = (byte) at;
            at += DETH_BYTES;
        }
        if ((flags & HAS_RETH) != 0) { // before ImmDt (rxe_opcode.c WRITE_ONLY_WITH_IMMEDIATE; tshark agrees)
            RETH_OFFSET[op] = (byte) at;
            at += RETH_BYTES;
        }
        if ((flags & HAS_ATOMIC_ETH) != 0) {
            ATOMIC_ETH_OFFSET[op] = (byte) at;
            at += ATOMIC_ETH_BYTES;
        }
        if ((flags & HAS_IMMDT) != 0) { // after DETH for UD (rxe_opcode.c UD_SEND_ONLY_WITH_IMMEDIATE)
            IMMDT_OFFSET[op] = (byte) at;
            at += IMMDT_BYTES;
        }
        if ((flags & HAS_IETH) != 0) {
            IETH_OFFSET[op] = (byte) at;
            at += IETH_BYTES;
        }
        FLAGS[op] = flags | KNOWN;
        HEADER_LENGTH[op] = (byte) (at - Bth.LENGTH);
        NAMES[op] = name;
    }

    /** All flag bits of {@code op} (0..255); 0 for an opcode nobody defines. */
    public static int flags(final int op) {
        return FLAGS[op & 0xFF];
    }

    public static boolean isValid(final int op) {
        return (FLAGS[op & 0xFF] & VALID) != 0;
    }

    public static boolean isKnown(final int op) {
        return (FLAGS[op & 0xFF] & KNOWN) != 0;
    }

    /** One of the TRANSPORT_* values: BTH opcode bits 7:5 (5 = reserved, 7 = vendor specific). */
    public static int transport(final int op) {
        return (op & 0xFF) >>> 5;
    }

    /** Bytes of extension headers after the 12-byte BTH (rxe_opcode[op].length minus RXE_BTH_BYTES). */
    public static int headerLength(final int op) {
        return HEADER_LENGTH[op & 0xFF];
    }

    /** BTH plus extension headers: where the payload starts, counted from the BTH. */
    public static int payloadOffset(final int op) {
        return Bth.LENGTH + HEADER_LENGTH[op & 0xFF];
    }

    public static int rethOffset(final int op) {
        return RETH_OFFSET[op & 0xFF];
    }

    public static int aethOffset(final int op) {
        return AETH_OFFSET[op & 0xFF];
    }

    public static int atomicEthOffset(final int op) {
        return ATOMIC_ETH_OFFSET[op & 0xFF];
    }

    public static int atomicAckEthOffset(final int op) {
        return ATOMIC_ACK_ETH_OFFSET[op & 0xFF];
    }

    public static int immDtOffset(final int op) {
        return IMMDT_OFFSET[op & 0xFF];
    }

    public static int dethOffset(final int op) {
        return DETH_OFFSET[op & 0xFF];
    }

    public static int iethOffset(final int op) {
        return IETH_OFFSET[op & 0xFF];
    }

    public static int fethOffset(final int op) {
        return FETH_OFFSET[op & 0xFF];
    }

    public static boolean hasPayload(final int op) {
        return (FLAGS[op & 0xFF] & HAS_PAYLOAD) != 0;
    }

    public static boolean isFirst(final int op) {
        return (FLAGS[op & 0xFF] & (START | END)) == START;
    }

    public static boolean isMiddle(final int op) {
        return (FLAGS[op & 0xFF] & MIDDLE) != 0;
    }

    public static boolean isLast(final int op) {
        return (FLAGS[op & 0xFF] & (START | END)) == END;
    }

    public static boolean isOnly(final int op) {
        return (FLAGS[op & 0xFF] & (START | END)) == (START | END);
    }

    /** FIRST or ONLY. */
    public static boolean isStart(final int op) {
        return (FLAGS[op & 0xFF] & START) != 0;
    }

    /** LAST or ONLY. */
    public static boolean isEnd(final int op) {
        return (FLAGS[op & 0xFF] & END) != 0;
    }

    public static boolean isRequest(final int op) {
        return (FLAGS[op & 0xFF] & REQUEST) != 0;
    }

    public static boolean isResponse(final int op) {
        return (FLAGS[op & 0xFF] & RESPONSE) != 0;
    }

    public static boolean isAck(final int op) {
        return (FLAGS[op & 0xFF] & ACK) != 0;
    }

    public static boolean consumesRecvWqe(final int op) {
        return (FLAGS[op & 0xFF] & CONSUMES_RECV_WQE) != 0;
    }

    public static boolean producesRecvCompletion(final int op) {
        return (FLAGS[op & 0xFF] & RECV_COMPLETION) != 0;
    }

    /** Name for logs, e.g. "RC_SEND_ONLY"; "UNKNOWN_0xNN" for undefined opcodes. Never allocates. */
    public static String name(final int op) {
        final String n = NAMES[op & 0xFF];
        return n != null ? n : UNKNOWN_NAMES[op & 0xFF];
    }
}
