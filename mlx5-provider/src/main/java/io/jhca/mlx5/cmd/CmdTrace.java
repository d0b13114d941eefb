package io.jhca.mlx5.cmd;

import java.io.PrintStream;
import java.util.function.Consumer;

/**
 * Where command dumps go, one line at a time, in mlx5_core's debug format (cmd.c {@code dump_command} /
 * {@code dump_buf}) so a jhca trace can be diffed against {@code dmesg} from the kernel driver (after stripping the
 * kernel's {@code "mlx5_core <bdf>: dump_command:<line>:(pid <n>): "} prefix). Set or clear it on a running
 * {@link CmdQueue} with {@link CmdQueue#trace(CmdTrace)}.
 */
@FunctionalInterface
public interface CmdTrace {

    /** What to dump, as mlx5_core's debug mask selects it. */
    enum Mode {
        /** Default debug: the whole 64-byte entry and every 576-byte mailbox block, control fields included. */
        FULL,
        /** {@code MLX5_CMD_DATA} mask: only the 16 inline bytes and the mailbox data the message uses. */
        DATA
    }

    /** Receives one line (no newline; an empty string is an empty line). */
    void line(String line);

    default Mode mode() {
        return Mode.FULL;
    }

    /** A sink with an explicit mode. */
    static CmdTrace of(Consumer<String> sink, Mode mode) {
        return new CmdTrace() {
            @Override
            public void line(String line) {
                sink.accept(line);
            }

            @Override
            public Mode mode() {
                return mode;
            }
        };
    }

    /** Full dumps to a stream (e.g. System.err). */
    static CmdTrace to(PrintStream out) {
        return out::println;
    }
}
