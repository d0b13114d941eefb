package io.jhca.mlx5.cmd;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;

/**
 * Formats a command the way mlx5_core cmd.c {@code dump_command} (kernel 5.13+, with the {@code cmd[%d]:} index)
 * does:
 * <pre>
 * cmd[0]: start dump
 * cmd[0]: dump command ENABLE_HCA(0x104) INPUT
 * cmd[0]: 000: 07000000 00000010 00000000 00000000     (dump_buf: "%03x: %08x %08x %08x %08x", dwords big-endian)
 * ...
 * (empty line)
 * cmd[0]: command block:                             (full mode: each 576-byte mailbox, offsets continuing)
 * ...
 * cmd[0]: end dump
 * </pre>
 * In {@link CmdTrace.Mode#DATA} mode the header reads {@code dump command data}, only the 16 inline bytes and
 * {@code min(512, len - offset)} bytes per block are shown (in whole 16-byte rows), offsets are message offsets, and
 * one empty line closes the dump.
 */
final class CmdDump {

    private CmdDump() {
    }

    static void dump(CmdTrace trace, int slot, boolean input, CmdQueueEntry entry, MailboxChain chain, int length) {
        String prefix = "cmd[" + slot + "]: ";
        int op = (int) CmdHeader.OPCODE.get(entry.buffer(), entry.offset() + CmdQueueEntry.IN);
        boolean dataOnly = trace.mode() == CmdTrace.Mode.DATA;
        trace.line(prefix + "start dump");
        trace.line(prefix + "dump command " + (dataOnly ? "data " : "") + CmdOpcode.name(op)
                + "(0x" + Integer.toHexString(op) + ") " + (input ? "INPUT" : "OUTPUT"));
        int offset = 0;
        if (dataOnly) {
            int at = entry.offset() + (input ? CmdQueueEntry.IN : CmdQueueEntry.OUT);
            rows(trace, prefix, entry.buffer(), at, CmdQueueEntry.INLINE_SIZE, offset);
            offset += CmdQueueEntry.INLINE_SIZE;
        } else {
            rows(trace, prefix, entry.buffer(), entry.offset(), CmdQueueEntry.SIZE, offset);
            trace.line("");
            offset += CmdQueueEntry.SIZE;
        }
        for (int i = 0; i < chain.used(); i++) {
            DirectBuffer block = chain.block(i).buffer();
            if (dataOnly) {
                rows(trace, prefix, block, 0, Math.min(Mailbox.DATA_SIZE, length - offset), offset);
                offset += Mailbox.DATA_SIZE;
            } else {
                trace.line(prefix + "command block:");
                rows(trace, prefix, block, 0, Mailbox.SIZE, offset);
                trace.line("");
                offset += Mailbox.SIZE;
            }
        }
        if (dataOnly) {
            trace.line("");
        }
        trace.line(prefix + "end dump");
    }

    /** dump_buf: rows of four big-endian dwords; a partial last row is printed whole, as the kernel does. */
    private static void rows(CmdTrace trace, String prefix, DirectBuffer b, int at, int size, int offset) {
        for (int i = 0; i < size; i += 16) {
            trace.line(String.format("%s%03x: %08x %08x %08x %08x", prefix, offset + i,
                    b.getInt(at + i, ByteOrder.BIG_ENDIAN), b.getInt(at + i + 4, ByteOrder.BIG_ENDIAN),
                    b.getInt(at + i + 8, ByteOrder.BIG_ENDIAN), b.getInt(at + i + 12, ByteOrder.BIG_ENDIAN)));
        }
    }

    /** mlx5_core's failure line (cmd.c cmd_status_print / mlx5_cmd_check). */
    static String failure(int opcode, int opMod, int status, int syndrome) {
        return String.format("%s(0x%x) op_mod(0x%x) failed, status %s(0x%x), syndrome (0x%x)",
                CmdOpcode.name(opcode), opcode, opMod, CmdStatus.describe(status), status, syndrome);
    }
}
