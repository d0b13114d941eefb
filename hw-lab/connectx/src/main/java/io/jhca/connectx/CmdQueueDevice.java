package io.jhca.connectx;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.mlx5.cmd.CmdQueue;
import io.jhca.mlx5.cmd.CmdQueueEntry;
import io.jhca.mlx5.cmd.Mailbox;
import io.jhca.mlx5.cmd.InitSegment;
import io.jhca.mlx5.cmd.DeliveryStatus;
import io.jhca.mlx5.cmd.CmdHeader;

/**
 * The device half of the command interface, for device models: what firmware does when the command doorbell rings.
 * It shares {@link CmdQueueEntry} and {@link Mailbox} with the driver, so both ends use one implementation of the
 * formats.
 *
 * <p>{@link #fetch(int)} reads the entry of a slot the driver handed over (ownership bit set), validates the
 * descriptor and both mailbox chains, and gathers the input; {@link #complete(DeviceCommand)} scatters the output
 * into the inline area and output mailboxes, writes the delivery status and gives the entry back by clearing the
 * ownership bit, last. Checks made at fetch, each with the delivery status mlx5_core would report:
 * <ul>
 *   <li>type != 7: {@code CMD_DESCR_ERR}; signature (only if {@link #checksums(boolean) checksums} are on):
 *       {@code SIGNAT_ERR}</li>
 *   <li>input length below 8 bytes, above {@link CmdQueue#MAX_MESSAGE}, or a chain ending early:
 *       {@code IN_LENGTH_ERR} (output: {@code OUT_LENGTH_ERR})</li>
 *   <li>a mailbox pointer not 1 KiB aligned: {@code IN_PTR_ALIGN_ERR} / {@code OUT_PTR_ALIGN_ERR}</li>
 *   <li>block_num not 0, 1, 2... : {@code BAD_BLK_NUM_ERR}; a mailbox token different from the entry's:
 *       {@code TOK_ERR}</li>
 *   <li>a pointer into unmapped memory (a DMA fault): {@code FW_ERR}</li>
 * </ul>
 * Not thread-safe: drive it from the model's firmware thread.
 */
public final class CmdQueueDevice {

    /** Executes one delivered command: read {@link DeviceCommand#input()}, fill {@link DeviceCommand#output()}. */
    @FunctionalInterface
    public interface Handler {
        void execute(DeviceCommand command);
    }

    private final DeviceDma dma;
    private final UnsafeBuffer entryView = new UnsafeBuffer();
    private final UnsafeBuffer blockView = new UnsafeBuffer();
    private final CmdQueueEntry entry = new CmdQueueEntry();
    private final Mailbox mailbox = new Mailbox();
    private DeviceCommand[] commands = new DeviceCommand[0];
    private long queueIova;
    private int stride;
    private boolean checksums;
    private RuntimeException lastHandlerFailure;

    public CmdQueueDevice(DeviceDma dma) {
        this.dma = dma;
    }

    /** Verify input signatures and sign the output (the cmdif_checksum mode); off by default, as on mlx5_core. */
    public CmdQueueDevice checksums(boolean on) {
        this.checksums = on;
        return this;
    }

    /**
     * Starts serving the queue the driver programmed into cmdq_addr_h/l, with the geometry the model advertises in
     * cmdq_addr_l_sz.
     */
    public void attach(long queueIova, int logSize, int logStride) {
        if ((queueIova & (InitSegment.CMDQ_ALIGNMENT - 1)) != 0 || queueIova == 0) {
            throw new IllegalArgumentException(String.format("bad command queue IOVA 0x%x", queueIova));
        }
        if ((1 << logSize) > CmdQueue.MAX_COMMANDS || logSize + logStride > 12 || (1 << logStride) < 64) {
            throw new IllegalArgumentException("bad queue geometry log_sz " + logSize + " log_stride " + logStride);
        }
        this.queueIova = queueIova;
        this.stride = 1 << logStride;
        this.commands = new DeviceCommand[1 << logSize];
        for (int i = 0; i < commands.length; i++) {
            commands[i] = new DeviceCommand(i);
        }
    }

    public boolean attached() {
        return commands.length > 0;
    }

    public int slots() {
        return commands.length;
    }

    /**
     * Handles a doorbell write synchronously: for every slot bit set and owned by the device, fetch, execute
     * (delivered commands only) and complete.
     *
     * @return the number of commands completed
     */
    public int onDoorbell(int slotMask, Handler handler) {
        int done = 0;
        for (int slot = 0; slot < commands.length; slot++) {
            if ((slotMask & (1 << slot)) == 0) {
                continue;
            }
            DeviceCommand cmd = fetch(slot);
            if (cmd == null) {
                continue;
            }
            if (cmd.delivered()) {
                try {
                    handler.execute(cmd);
                } catch (RuntimeException e) {
                    // a crashing model must not take the firmware thread down: report it as firmware trouble
                    lastHandlerFailure = e;
                    cmd.fail(DeliveryStatus.FW_ERR);
                }
            }
            complete(cmd);
            done++;
        }
        return done;
    }

    /** The last exception a {@link Handler} threw (reported to the driver as FW_ERR), or null. */
    public RuntimeException lastHandlerFailure() {
        return lastHandlerFailure;
    }

    /**
     * Reads and validates the command in {@code slot}.
     *
     * @return the slot's command (check {@link DeviceCommand#delivered()}), or null if the driver does not hand this
     *         entry to the device (ownership bit clear: a spurious doorbell) or the entry itself is unreachable
     */
    public DeviceCommand fetch(int slot) {
        if (slot < 0 || slot >= commands.length) {
            throw new IllegalArgumentException("slot " + slot + " outside a queue of " + commands.length);
        }
        if (!mapEntry(slot) || !entry.ownedByDevice()) {
            return null;
        }
        DeviceCommand cmd = commands[slot];
        int inLength = entry.inLength();
        int outLength = entry.outLength();
        boolean inOk = inLength >= CmdHeader.MIN_LENGTH && inLength <= CmdQueue.MAX_MESSAGE;
        boolean outOk = outLength >= CmdHeader.MIN_LENGTH && outLength <= CmdQueue.MAX_MESSAGE;
        cmd.reset(entry.token(), inOk ? inLength : 0, outOk ? outLength : 0, entry.outPointer());
        if (entry.type() != CmdQueueEntry.TYPE_PCIE) {
            cmd.fail(DeliveryStatus.CMD_DESCR_ERR);
        } else if (checksums && !entry.signatureValid()) {
            cmd.fail(DeliveryStatus.SIGNAT_ERR);
        } else if (!inOk) {
            cmd.fail(DeliveryStatus.IN_LENGTH_ERR);
        } else if (!outOk) {
            cmd.fail(DeliveryStatus.OUT_LENGTH_ERR);
        } else {
            entry.getInlineInput(cmd.inputBuffer(), 0, inLength);
            DeliveryStatus d = walk(entry.inPointer(), inLength, cmd, true);
            if (d == DeliveryStatus.OK) {
                d = walk(entry.outPointer(), outLength, cmd, false);
            }
            if (d != DeliveryStatus.OK) {
                cmd.fail(d);
            }
        }
        return cmd;
    }

    /**
     * Writes the output back (if delivered), then status_own = delivery status << 1 with the ownership bit clear.
     * The status byte is a volatile store after everything else, so the driver never sees ownership before data.
     */
    public void complete(DeviceCommand cmd) {
        if (!mapEntry(cmd.slot())) {
            return;
        }
        if (cmd.delivered()) {
            entry.putInlineOutput(cmd.output(), 0, cmd.outLength());
            DeliveryStatus d = scatter(cmd);
            if (d != DeliveryStatus.OK) {
                cmd.fail(d);
            }
        }
        int statusOwn = cmd.delivery().value() << 1;
        if (checksums) {
            entry.signFor(statusOwn);
        }
        entry.statusOwn(statusOwn);
    }

    private boolean mapEntry(int slot) {
        if (!dma.wrap(entryView, queueIova + (long) slot * stride, CmdQueueEntry.SIZE)) {
            return false;
        }
        entry.wrap(entryView, 0);
        return true;
    }

    /** Follows a chain for a message of {@code length} bytes; gathers input data when {@code input}. */
    private DeliveryStatus walk(long pointer, int length, DeviceCommand cmd, boolean input) {
        int blocks = Mailbox.blocksFor(length);
        int pos = CmdQueueEntry.INLINE_SIZE;
        for (int i = 0; i < blocks; i++) {
            if (pointer == 0) {
                return input ? DeliveryStatus.IN_LENGTH_ERR : DeliveryStatus.OUT_LENGTH_ERR;
            }
            if ((pointer & (Mailbox.ALIGNMENT - 1)) != 0) {
                return input ? DeliveryStatus.IN_PTR_ALIGN_ERR : DeliveryStatus.OUT_PTR_ALIGN_ERR;
            }
            if (!dma.wrap(blockView, pointer, Mailbox.SIZE)) {
                return DeliveryStatus.FW_ERR;
            }
            mailbox.wrap(blockView, 0);
            if (mailbox.blockNumber() != i) {
                return DeliveryStatus.BAD_BLK_NUM_ERR;
            }
            if (mailbox.token() != cmd.token()) {
                return DeliveryStatus.TOK_ERR;
            }
            if (input && checksums && !mailbox.signaturesValid()) {
                return DeliveryStatus.SIGNAT_ERR;
            }
            if (input) {
                int n = Math.min(Mailbox.DATA_SIZE, length - pos);
                cmd.inputBuffer().putBytes(pos, blockView, 0, n);
                pos += n;
            }
            pointer = mailbox.next();
        }
        return DeliveryStatus.OK;
    }

    private DeliveryStatus scatter(DeviceCommand cmd) {
        int length = cmd.outLength();
        int blocks = Mailbox.blocksFor(length);
        long pointer = cmd.outPointer();
        int pos = CmdQueueEntry.INLINE_SIZE;
        for (int i = 0; i < blocks; i++) {
            // the chain was validated at fetch; the driver must not have changed it meanwhile
            if (pointer == 0 || !dma.wrap(blockView, pointer, Mailbox.SIZE)) {
                return DeliveryStatus.OUT_LENGTH_ERR;
            }
            mailbox.wrap(blockView, 0);
            int n = Math.min(Mailbox.DATA_SIZE, length - pos);
            blockView.putBytes(0, cmd.output(), pos, n);
            pos += n;
            if (checksums) {
                mailbox.sign();
            }
            pointer = mailbox.next();
        }
        return DeliveryStatus.OK;
    }
}
