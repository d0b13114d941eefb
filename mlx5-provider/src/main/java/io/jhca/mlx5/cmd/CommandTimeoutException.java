package io.jhca.mlx5.cmd;

/**
 * The device did not hand a command entry back (ownership bit still set) within the timeout. As in mlx5_core
 * ("timeout. Will cause a leak of a command resource") the slot stays reserved: the device may still write to it.
 */
public final class CommandTimeoutException extends CommandException {

    private static final long serialVersionUID = 1L;

    private final int slot;
    private final long timeoutMillis;

    public CommandTimeoutException(int opcode, int opMod, int slot, long timeoutMillis) {
        super(String.format("%s(0x%x) op_mod(0x%x) timeout after %d ms on slot %d. Will cause a leak of a command"
                + " resource", CmdOpcode.name(opcode), opcode, opMod, timeoutMillis, slot), opcode, opMod, 0, 0, 0);
        this.slot = slot;
        this.timeoutMillis = timeoutMillis;
    }

    public int slot() {
        return slot;
    }

    public long timeoutMillis() {
        return timeoutMillis;
    }
}
