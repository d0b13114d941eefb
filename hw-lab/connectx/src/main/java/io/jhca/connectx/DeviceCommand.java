package io.jhca.connectx;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.mlx5.cmd.DeliveryStatus;
import io.jhca.mlx5.cmd.CmdHeader;
import io.jhca.mlx5.cmd.CmdStatus;

/**
 * One command as a device model sees it, fetched by {@link CmdQueueDevice}: the whole input gathered from the
 * inline bytes and mailboxes into {@link #input()} (exactly {@link #inLength()} bytes), and a zeroed
 * {@link #output()} of exactly {@link #outLength()} bytes that {@link CmdQueueDevice#complete} scatters back.
 * One instance per slot, reused.
 */
public final class DeviceCommand {

    private final int slot;
    private final UnsafeBuffer input = new UnsafeBuffer();
    private final UnsafeBuffer output = new UnsafeBuffer();
    private byte[] inBytes = new byte[64];
    private byte[] outBytes = new byte[64];
    private int token;
    private int inLength;
    private int outLength;
    private long outPointer;
    private DeliveryStatus delivery = DeliveryStatus.OK;

    DeviceCommand(int slot) {
        this.slot = slot;
    }

    void reset(int token, int inLength, int outLength, long outPointer) {
        this.token = token;
        this.inLength = inLength;
        this.outLength = outLength;
        this.outPointer = outPointer;
        this.delivery = DeliveryStatus.OK;
        if (inBytes.length < inLength) {
            inBytes = new byte[Integer.highestOneBit(inLength - 1) << 1];
        }
        if (outBytes.length < outLength) {
            outBytes = new byte[Integer.highestOneBit(outLength - 1) << 1];
        }
        input.wrap(inBytes, 0, Math.max(inLength, 0));
        output.wrap(outBytes, 0, Math.max(outLength, 0));
        output.setMemory(0, output.capacity(), (byte) 0);
    }

    /** Queue slot the command came in on. */
    public int slot() {
        return slot;
    }

    /** Token from the entry (the driver's per-command tag; every mailbox must carry it). */
    public int token() {
        return token;
    }

    public int inLength() {
        return inLength;
    }

    public int outLength() {
        return outLength;
    }

    long outPointer() {
        return outPointer;
    }

    /** The full input message (header first). Valid only if {@link #delivered()}. */
    public DirectBuffer input() {
        return input;
    }

    UnsafeBuffer inputBuffer() {
        return input;
    }

    /** The output message to fill (header first), zeroed at fetch. */
    public MutableDirectBuffer output() {
        return output;
    }

    public int opcode() {
        return CmdHeader.opcode(input, 0);
    }

    public int opMod() {
        return CmdHeader.opMod(input, 0);
    }

    /** OK unless the descriptor or its mailboxes were malformed; then the command must not be executed. */
    public DeliveryStatus delivery() {
        return delivery;
    }

    public boolean delivered() {
        return delivery == DeliveryStatus.OK;
    }

    /** Refuses the command with a delivery status (the model can also inject such errors). */
    public void fail(DeliveryStatus status) {
        this.delivery = status;
    }

    /** Writes the output status and syndrome (requires an output of at least 8 bytes, checked at fetch). */
    public void status(CmdStatus status, int syndrome) {
        CmdHeader.setStatus(output, 0, status.value(), syndrome);
    }

    /** Writes a raw status value (for statuses the kernel does not name). */
    public void status(int status, int syndrome) {
        CmdHeader.setStatus(output, 0, status, syndrome);
    }
}
