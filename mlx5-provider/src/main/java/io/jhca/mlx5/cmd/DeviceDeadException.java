package io.jhca.mlx5.cmd;

/**
 * A command refused without reaching the device, because the device was declared dead before it (its health
 * registers said so while an earlier command waited, or the health poller saw it): mlx5_core answers such commands
 * itself with {@code MLX5_DRIVER_STATUS_ABORTED} and EIO (cmd.c {@code mlx5_internal_err_ret_value}). Commands that
 * only release something succeed instead ({@link DeadDeviceAnswers}).
 */
public final class DeviceDeadException extends CommandException {

    private static final long serialVersionUID = 1L;

    public DeviceDeadException(int opcode, int opMod, String reason) {
        super(String.format("%s(0x%x) op_mod(0x%x) not posted: device not responding: %s", CmdOpcode.name(opcode),
                opcode, opMod, reason), opcode, opMod, 0, 0, 0);
    }
}
