package io.jhca.mlx5.init;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.mlx5.cmd.CmdQueue;
import io.jhca.mlx5.cmd.Layout;
import io.jhca.mlx5.cmd.Struct;

/**
 * One command, built field by field in the words of mlx5_ifc.h and run on the command queue:
 *
 * <pre>{@code
 * int pd = (int) PrmCommand.of(CmdOpcode.ALLOC_PD, UarPdLayouts.ALLOC_PD_IN, UarPdLayouts.ALLOC_PD_OUT)
 *         .execute(cmdq).get("pd");
 * }</pre>
 *
 * Control path only: each command allocates its input and output buffers. A failure is a
 * {@link io.jhca.mlx5.cmd.CommandException} naming the command, its status and syndrome.
 */
public final class PrmCommand {

    private final Struct in = new Struct();
    private final Layout outLayout;
    private final int outLength;

    private PrmCommand(int opcode, Layout inLayout, int inLength, Layout outLayout, int outLength) {
        this.in.wrap(inLayout, new UnsafeBuffer(new byte[inLength]), 0, inLength);
        this.in.set("opcode", opcode);
        this.outLayout = outLayout;
        this.outLength = outLength;
    }

    /** A command with fixed-size input and output. */
    public static PrmCommand of(int opcode, Layout in, Layout out) {
        return new PrmCommand(opcode, in, in.sizeBytes(), out, out.sizeBytes());
    }

    /** A command whose input or output carries a trailing array (PAS, MTT): lengths given. */
    public static PrmCommand of(int opcode, Layout in, int inLength, Layout out, int outLength) {
        return new PrmCommand(opcode, in, inLength, out, outLength);
    }

    public PrmCommand opMod(int opMod) {
        in.set("op_mod", opMod);
        return this;
    }

    public PrmCommand set(String field, long value) {
        in.set(field, value);
        return this;
    }

    public PrmCommand set(String field, boolean value) {
        in.set(field, value);
        return this;
    }

    public PrmCommand setBytes(String field, byte[] value) {
        in.setBytes(field, value);
        return this;
    }

    public PrmCommand setElement(String field, int index, long value) {
        in.setElement(field, index, value);
        return this;
    }

    /** The input being built (for bulk writes such as PAS lists). */
    public Struct input() {
        return in;
    }

    /** Runs the command; returns a view of its output. */
    public Struct execute(CmdQueue cmdq) {
        Struct out = new Struct().wrap(outLayout, new UnsafeBuffer(new byte[outLength]), 0, outLength);
        cmdq.execute(in, out);
        return out;
    }
}
