package io.jhca.mlx5;

import io.jhca.mlx5.cmd.CmdStatus;
import io.jhca.mlx5.cmd.CommandException;
import io.jhca.mlx5.cmd.CommandTimeoutException;
import io.jhca.verbs.VerbsException;

/**
 * Command failures as verbs errors: a {@link VerbsException} with the errno libibverbs would give (the kernel's
 * mlx5_cmd_check mapping: limits and no resources are ENOMEM, bad parameters EINVAL, a timeout ETIMEDOUT, the rest
 * EIO) whose cause is the {@link CommandException} naming the command, status and syndrome.
 */
final class Mlx5Errors {

    private Mlx5Errors() {
    }

    static VerbsException of(String what, RuntimeException e) {
        if (e instanceof VerbsException) {
            return (VerbsException) e;
        }
        return new VerbsException(errno(e), what + ": " + e.getMessage(), e);
    }

    static int errno(RuntimeException e) {
        if (e instanceof CommandTimeoutException) {
            return VerbsException.ETIMEDOUT;
        }
        if (e instanceof CommandException) {
            CommandException c = (CommandException) e;
            if (c.isDeliveryError()) {
                return VerbsException.EIO;
            }
            CmdStatus s = c.cmdStatus();
            if (s == null) {
                return VerbsException.EIO;
            }
            switch (s) {
                case LIM_ERR:
                case NO_RES_ERR:
                    return VerbsException.ENOMEM;
                case BAD_PARAM_ERR:
                case BAD_INP_LEN_ERR:
                case BAD_OUTP_LEN_ERR:
                case BAD_QP_STATE_ERR:
                case BAD_RES_STATE_ERR:
                    return VerbsException.EINVAL;
                case RES_BUSY:
                    return VerbsException.EBUSY;
                case BAD_OP_ERR:
                    return VerbsException.EOPNOTSUPP;
                default:
                    return VerbsException.EIO;
            }
        }
        return VerbsException.EIO;
    }
}
