package io.jhca.mlx5.cmd;

/**
 * The device stopped answering and its health registers say why, noticed while a command waited: the function is gone
 * from the bus (every BAR0 read returns all ones: surprise removal, reset, PCI link down; mlx5_core health.c
 * {@code sensor_pci_not_working}), its firmware asserted (a health syndrome), or its firmware is stuck (the health
 * counter stopped advancing; mlx5_core gives up after 3 missed polls). Thrown instead of waiting out the whole command
 * timeout; as after a timeout, the command's slot stays reserved.
 */
public final class DeviceHealthException extends CommandException {

    private static final long serialVersionUID = 1L;

    private final int slot;

    public DeviceHealthException(int opcode, int opMod, int slot, String reason) {
        super(String.format("%s(0x%x) op_mod(0x%x) on slot %d: device not responding: %s", CmdOpcode.name(opcode),
                opcode, opMod, slot, reason), opcode, opMod, 0, 0, 0);
        this.slot = slot;
    }

    public int slot() {
        return slot;
    }
}
