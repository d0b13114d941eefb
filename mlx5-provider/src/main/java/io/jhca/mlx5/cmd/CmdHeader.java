package io.jhca.mlx5.cmd;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * The header every command starts with. Input (rdma-core mlx5_ifc.h {@code mbox_in}; the kernel keeps its copy in
 * cmd.c): {@code opcode} bits 31:16 and {@code uid} 15:0 of dword 0, {@code op_mod} 15:0 of dword 1. Output
 * ({@code mbox_out}): {@code status} 31:24 of dword 0, {@code syndrome} all of dword 1. Both are 16 bytes: exactly
 * the inline part of a command entry.
 */
public final class CmdHeader {

    public static final Layout IN = Layout.struct("mbox_in", 0x10).inHeader(true).build();
    public static final Layout OUT = Layout.struct("mbox_out", 0x10).outHeader().build();

    public static final Field OPCODE = IN.field("opcode");
    public static final Field UID = IN.field("uid");
    public static final Field OP_MOD = IN.field("op_mod");
    public static final Field STATUS = OUT.field("status");
    public static final Field SYNDROME = OUT.field("syndrome");

    /** Minimum length of a command input or output the device accepts: the header dwords read by everyone. */
    public static final int MIN_LENGTH = 8;

    private CmdHeader() {
    }

    /** Zeroes {@code length} bytes at {@code base} and writes opcode and op_mod. */
    public static void start(MutableDirectBuffer buffer, int base, int length, int opcode, int opMod) {
        buffer.setMemory(base, length, (byte) 0);
        OPCODE.set(buffer, base, opcode);
        OP_MOD.set(buffer, base, opMod);
    }

    public static int opcode(DirectBuffer in, int base) {
        return (int) OPCODE.get(in, base);
    }

    public static int opMod(DirectBuffer in, int base) {
        return (int) OP_MOD.get(in, base);
    }

    public static int status(DirectBuffer out, int base) {
        return (int) STATUS.get(out, base);
    }

    /** The 32-bit syndrome, an opaque firmware code identifying the failing check. */
    public static int syndrome(DirectBuffer out, int base) {
        return (int) SYNDROME.get(out, base);
    }

    /** Writes status and syndrome (device side). */
    public static void setStatus(MutableDirectBuffer out, int base, int status, int syndrome) {
        STATUS.set(out, base, status);
        SYNDROME.set(out, base, Integer.toUnsignedLong(syndrome));
    }
}
