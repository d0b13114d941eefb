package io.jhca.rxe.replay;

import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Reads the fields of captured RC packets (BTH .. ICRC) independently of jhca's wire codec, so that the replay's
 * expectations do not come from the code under test. Layouts: IBTA 9.2 (BTH), 9.3 (RETH, AtomicETH, AETH,
 * AtomicAckETH) and the RC opcode table 9.2.2 (IBTA vol. 1).
 */
final class Roce {
    static final int SEND_FIRST = 0x00;
    static final int SEND_MIDDLE = 0x01;
    static final int SEND_LAST = 0x02;
    static final int SEND_ONLY = 0x04;
    static final int WRITE_FIRST = 0x06;
    static final int WRITE_MIDDLE = 0x07;
    static final int WRITE_LAST = 0x08;
    static final int WRITE_ONLY = 0x0A;
    static final int READ_REQUEST = 0x0C;
    static final int READ_RESPONSE_FIRST = 0x0D;
    static final int READ_RESPONSE_MIDDLE = 0x0E;
    static final int READ_RESPONSE_LAST = 0x0F;
    static final int READ_RESPONSE_ONLY = 0x10;
    static final int ACKNOWLEDGE = 0x11;
    static final int ATOMIC_ACKNOWLEDGE = 0x12;
    static final int COMPARE_SWAP = 0x13;
    static final int FETCH_ADD = 0x14;

    static final int BTH = 12;
    static final int ICRC = 4;

    private Roce() {
    }

    static int opcode(final byte[] p) {
        return p[0] & 0xFF;
    }

    static int pad(final byte[] p) {
        return (p[1] >> 4) & 3;
    }

    static int destQp(final byte[] p) {
        return ByteBuffer.wrap(p).getInt(4) & 0xFFFFFF;
    }

    static int psn(final byte[] p) {
        return ByteBuffer.wrap(p).getInt(8) & 0xFFFFFF;
    }

    /** BTH plus the extended headers of an RC opcode (no immediate-data opcodes occur in the fixtures). */
    static int headerLength(final int op) {
        switch (op) {
            case SEND_FIRST: case SEND_MIDDLE: case SEND_LAST: case SEND_ONLY: case WRITE_MIDDLE: case WRITE_LAST:
            case READ_RESPONSE_MIDDLE:
                return BTH;
            case WRITE_FIRST: case WRITE_ONLY: case READ_REQUEST:
                return BTH + 16; // RETH
            case READ_RESPONSE_FIRST: case READ_RESPONSE_LAST: case READ_RESPONSE_ONLY: case ACKNOWLEDGE:
                return BTH + 4; // AETH
            case ATOMIC_ACKNOWLEDGE:
                return BTH + 4 + 8; // AETH, AtomicAckETH
            case COMPARE_SWAP: case FETCH_ADD:
                return BTH + 28; // AtomicETH
            default:
                throw new IllegalArgumentException("RC opcode 0x" + Integer.toHexString(op) + " is not expected here");
        }
    }

    static byte[] payload(final byte[] p) {
        return Arrays.copyOfRange(p, headerLength(opcode(p)), p.length - ICRC - pad(p));
    }

    /** RETH or AtomicETH: the virtual address right after the BTH. */
    static long va(final byte[] p) {
        return ByteBuffer.wrap(p).getLong(BTH);
    }

    static int rkey(final byte[] p) {
        return ByteBuffer.wrap(p).getInt(BTH + 8);
    }

    static int dmaLength(final byte[] p) {
        return ByteBuffer.wrap(p).getInt(BTH + 12);
    }

    /** AtomicETH's swap-or-add operand. */
    static long swapAdd(final byte[] p) {
        return ByteBuffer.wrap(p).getLong(BTH + 12);
    }

    static int syndrome(final byte[] p) {
        return p[BTH] & 0xFF;
    }

    static int msn(final byte[] p) {
        return ByteBuffer.wrap(p).getInt(BTH) & 0xFFFFFF;
    }

    static long originalValue(final byte[] p) {
        return ByteBuffer.wrap(p).getLong(BTH + 4);
    }

    static boolean hasAeth(final int op) {
        return op == READ_RESPONSE_FIRST || op == READ_RESPONSE_LAST || op == READ_RESPONSE_ONLY
                || op == ACKNOWLEDGE || op == ATOMIC_ACKNOWLEDGE;
    }

    static String describe(final byte[] p) {
        final int op = opcode(p);
        final StringBuilder s = new StringBuilder(String.format("op 0x%02x qp 0x%06x psn 0x%06x", op, destQp(p), psn(p)));
        if (hasAeth(op)) {
            s.append(String.format(" aeth syndrome 0x%02x msn %d", syndrome(p), msn(p)));
        }
        if (op == ATOMIC_ACKNOWLEDGE) {
            s.append(String.format(" orig 0x%x", originalValue(p)));
        }
        return s.append(" len ").append(p.length).toString();
    }
}
