package io.jhca.mlx5.cmd;

/**
 * What the driver answers, without the device, once the device is declared dead (mlx5_core cmd.c
 * {@code mlx5_internal_err_ret_value}): commands that only give something back (destroy, dealloc, detach, to-reset,
 * to-error, teardown, page reclaim) succeed, since what they would free is gone with the device and the host's side
 * must still be released; every other command fails with EIO.
 */
public final class DeadDeviceAnswers {

    private DeadDeviceAnswers() {
    }

    /** Whether {@code opcode} succeeds on a dead device (its output all zeros: status OK). */
    public static boolean succeeds(int opcode) {
        switch (opcode) {
            case CmdOpcode.TEARDOWN_HCA:
            case CmdOpcode.DISABLE_HCA:
            case CmdOpcode.MANAGE_PAGES:
            case CmdOpcode.DESTROY_MKEY:
            case CmdOpcode.DESTROY_EQ:
            case CmdOpcode.DESTROY_CQ:
            case CmdOpcode.DESTROY_QP:
            case CmdOpcode.DESTROY_SRQ:
            case CmdOpcode.DEALLOC_Q_COUNTER:
            case CmdOpcode.DEALLOC_PD:
            case CmdOpcode.DEALLOC_UAR:
            case CmdOpcode.DETACH_FROM_MCG:
            case CmdOpcode.DEALLOC_XRCD:
            case CmdOpcode.DEALLOC_TRANSPORT_DOMAIN:
            case CmdOpcode.DESTROY_TIR:
            case CmdOpcode.DESTROY_SQ:
            case CmdOpcode.DESTROY_RQ:
            case CmdOpcode.DESTROY_TIS:
            case CmdOpcode.DESTROY_RQT:
            case CmdOpcode.QP_2ERR:
            case CmdOpcode.QP_2RST:
                return true;
            default:
                return false;
        }
    }
}
