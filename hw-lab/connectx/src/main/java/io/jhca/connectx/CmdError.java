package io.jhca.connectx;

import io.jhca.mlx5.cmd.CmdStatus;

/**
 * A command the firmware refuses: the status and syndrome to answer with (control path only; thrown by the command
 * handlers, turned into the output header by {@link Firmware}).
 */
final class CmdError extends Exception {

    private static final long serialVersionUID = 1L;

    final CmdStatus status;
    final int syndrome;

    CmdError(CmdStatus status, int syndrome, String message) {
        super(message, null, false, false);
        this.status = status;
        this.syndrome = syndrome;
    }

    static CmdError badParam(int syndrome, String message) {
        return new CmdError(CmdStatus.BAD_PARAM_ERR, syndrome, message);
    }

    static CmdError badResource(int syndrome, String message) {
        return new CmdError(CmdStatus.BAD_RES_ERR, syndrome, message);
    }
}
