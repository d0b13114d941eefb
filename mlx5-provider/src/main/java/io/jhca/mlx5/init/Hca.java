package io.jhca.mlx5.init;

import java.util.ArrayDeque;
import java.util.Deque;

import io.jhca.mlx5.cmd.CmdQueue;
import io.jhca.mlx5.cmd.CmdTrace;
import io.jhca.mlx5.cmd.CommandTimeoutException;
import io.jhca.mlx5.cmd.DeviceHealthException;
import io.jhca.mlx5.cmd.InitSegment;
import io.jhca.mlx5.spi.Mlx5Function;

/**
 * A function brought up by {@link HcaBringUp}: its command queue, the capabilities it reported, the pages it holds,
 * its UAR, its async EQ, its GID table and its port's Q counter set. Closing it undoes the bring-up in reverse, step
 * by step as each step was recorded: DEALLOC_Q_COUNTER, DESTROY_EQ, DEALLOC_UAR, TEARDOWN_HCA, MANAGE_PAGES (take),
 * DISABLE_HCA, then the memory. A failed bring-up undoes the steps done so far the same way. After a command timeout no further command is sent (the
 * firmware is not answering) and the command memory is kept, since the device may still write to it.
 */
public final class Hca implements AutoCloseable {

    private record Step(String name, boolean needsFirmware, Runnable action) {
    }

    final Mlx5Function function;
    final Mlx5Options options;
    final InitSegment iseg;
    final FunctionCmdMemory cmdMemory;
    final FirmwarePages pages;
    private final Deque<Step> undo = new ArrayDeque<>();
    CmdQueue cmdq;
    HcaCommands commands;
    HcaCaps caps;
    int functionId;
    int uar = -1;
    AsyncEq eq;
    RoceGids gids;
    int qCounter = -1;
    private boolean firmwareHung;
    private boolean closed;

    Hca(Mlx5Function function, Mlx5Options options) {
        this.function = function;
        this.options = options;
        this.iseg = new InitSegment(function.bar0());
        this.cmdMemory = new FunctionCmdMemory(function);
        this.pages = new FirmwarePages(function);
    }

    /** Records how to undo a step that just succeeded. */
    void onClose(String name, boolean needsFirmware, Runnable action) {
        undo.push(new Step(name, needsFirmware, action));
    }

    public Mlx5Function function() {
        return function;
    }

    public InitSegment initSegment() {
        return iseg;
    }

    public CmdQueue cmdq() {
        return cmdq;
    }

    public HcaCommands commands() {
        return commands;
    }

    public HcaCaps caps() {
        return caps;
    }

    /** The UAR index every doorbell of this function uses (page BAR0 + uar * 4096). */
    public int uar() {
        return uar;
    }

    /** The port's Q counter set (counter_set_id), or -1 when the device has none. */
    public int qCounter() {
        return qCounter;
    }

    public AsyncEq eq() {
        return eq;
    }

    public RoceGids gids() {
        return gids;
    }

    public Mlx5Options options() {
        return options;
    }

    /** Firmware version as ethtool shows it, e.g. 16.35.2000. */
    public String fwVersion() {
        return iseg.fwVersion();
    }

    /** Pages the firmware holds. */
    public int pagesGiven() {
        return pages.given();
    }

    /** Turns the command trace on (a sink) or off (null), at once. */
    public void trace(CmdTrace sink) {
        cmdq.trace(sink);
    }

    /**
     * Serves a PAGE_REQUEST event: gives {@code numPages} pages, or takes {@code -numPages} back. Runs commands:
     * never call it from the data path.
     */
    public void servePageRequest(int fnId, int numPages) {
        if (numPages > 0) {
            pages.give(commands, fnId, numPages);
        } else if (numPages < 0) {
            pages.reclaim(commands, fnId, -numPages);
        }
    }

    /**
     * Notes that a command timed out or found the device dead or stuck: from now on, teardown sends no commands and
     * keeps the command memory.
     */
    void failed(Throwable cause) {
        if (cause instanceof CommandTimeoutException || cause instanceof DeviceHealthException) {
            firmwareHung = true;
        }
    }

    /** Undoes a failed bring-up; the undo failures are attached to {@code cause} as suppressed. */
    void abort(RuntimeException cause) {
        failed(cause);
        runUndo(cause);
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException first = runUndo(null);
        if (first != null) {
            throw first;
        }
    }

    private RuntimeException runUndo(RuntimeException cause) {
        RuntimeException first = cause;
        while (!undo.isEmpty()) {
            Step s = undo.pop();
            if (s.needsFirmware() && firmwareHung()) {
                continue;
            }
            try {
                s.action().run();
            } catch (RuntimeException e) {
                failed(e);
                RuntimeException wrapped = new IllegalStateException(function.name() + ": teardown step " + s.name()
                        + " failed: " + e.getMessage(), e);
                if (first == null) {
                    first = wrapped;
                } else {
                    first.addSuppressed(wrapped);
                }
            }
        }
        return cause == null ? first : null;
    }

    /** Whether a command timed out or the device was declared dead (the function must be reset before reuse). */
    boolean firmwareHung() {
        return firmwareHung || (cmdq != null && cmdq.deadReason() != null);
    }
}
