package io.jhca.mlx5.cmd;

/**
 * A command that did not succeed: either the device could not deliver it ({@link #deliveryStatus()} not OK: bad
 * signature, token, block number, lengths...) or the firmware executed it and returned a non-zero
 * {@link #status()} with a {@link #syndrome()}. The message reads like mlx5_core's:
 * {@code CREATE_QP(0x500) op_mod(0x0) failed, status bad parameter(0x3), syndrome (0x1a2b3c4d)}.
 */
public class CommandException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final int opcode;
    private final int opMod;
    private final int status;
    private final int syndrome;
    private final int deliveryStatus;

    protected CommandException(String message, int opcode, int opMod, int status, int syndrome, int deliveryStatus) {
        super(message);
        this.opcode = opcode;
        this.opMod = opMod;
        this.status = status;
        this.syndrome = syndrome;
        this.deliveryStatus = deliveryStatus;
    }

    /** The firmware ran the command and returned {@code status != 0}. */
    public static CommandException failed(int opcode, int opMod, int status, int syndrome) {
        String name = CmdStatus.of(status) != null ? CmdStatus.of(status).name() : "UNKNOWN";
        return new CommandException(CmdDump.failure(opcode, opMod, status, syndrome) + " [" + name + "]",
                opcode, opMod, status, syndrome, 0);
    }

    /** The device refused the command descriptor (status_own bits 7:1). */
    public static CommandException undelivered(int opcode, int opMod, int deliveryStatus) {
        DeliveryStatus d = DeliveryStatus.of(deliveryStatus);
        return new CommandException(String.format("%s(0x%x) op_mod(0x%x) not delivered, delivery status %s(0x%x) [%s]",
                CmdOpcode.name(opcode), opcode, opMod, DeliveryStatus.describe(deliveryStatus), deliveryStatus,
                d != null ? d.name() : "UNKNOWN"), opcode, opMod, 0, 0, deliveryStatus);
    }

    public int opcode() {
        return opcode;
    }

    /** Kernel name of the command, e.g. "CREATE_QP". */
    public String commandName() {
        return CmdOpcode.name(opcode);
    }

    public int opMod() {
        return opMod;
    }

    /** Output status byte (0 when the failure is a delivery error). */
    public int status() {
        return status;
    }

    /** The named status, or null for a value mlx5_core does not name. */
    public CmdStatus cmdStatus() {
        return CmdStatus.of(status);
    }

    /** Firmware syndrome: opaque, but what vendor support asks for. */
    public int syndrome() {
        return syndrome;
    }

    /** Delivery status (0 = delivered; then {@link #status()} tells what went wrong). */
    public int deliveryStatus() {
        return deliveryStatus;
    }

    public boolean isDeliveryError() {
        return deliveryStatus != 0;
    }
}
