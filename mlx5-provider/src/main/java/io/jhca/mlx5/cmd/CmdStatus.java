package io.jhca.mlx5.cmd;

/**
 * The {@code status} byte of a command's output (mbox_out bits 31:24 of dword 0). Values from the kernel's device.h
 * {@code enum MLX5_CMD_STAT_*} (checked against the installed header by a golden test); descriptions are mlx5_core
 * cmd.c's {@code cmd_status_str}, so messages match dmesg.
 */
public enum CmdStatus {
    OK(0x0, "OK"),
    INT_ERR(0x1, "internal error"),
    BAD_OP_ERR(0x2, "bad operation"),
    BAD_PARAM_ERR(0x3, "bad parameter"),
    BAD_SYS_STATE_ERR(0x4, "bad system state"),
    BAD_RES_ERR(0x5, "bad resource"),
    RES_BUSY(0x6, "resource busy"),
    LIM_ERR(0x8, "limits exceeded"),
    BAD_RES_STATE_ERR(0x9, "bad resource state"),
    IX_ERR(0xa, "bad index"),
    NO_RES_ERR(0xf, "no resources"),
    BAD_QP_STATE_ERR(0x10, "bad QP state"),
    BAD_PKT_ERR(0x30, "bad packet (discarded)"),
    BAD_SIZE_OUTS_CQES_ERR(0x40, "bad size too many outstanding CQEs"),
    BAD_INP_LEN_ERR(0x50, "bad input length"),
    BAD_OUTP_LEN_ERR(0x51, "bad output length");

    private static final CmdStatus[] BY_VALUE = new CmdStatus[256];

    static {
        for (CmdStatus s : values()) {
            BY_VALUE[s.value] = s;
        }
    }

    private final int value;
    private final String description;

    CmdStatus(int value, String description) {
        this.value = value;
        this.description = description;
    }

    public int value() {
        return value;
    }

    /** cmd.c's text, e.g. "bad parameter". */
    public String description() {
        return description;
    }

    /** The status with this value, or null when the PRM value is not one the kernel names. */
    public static CmdStatus of(int value) {
        return value >= 0 && value < BY_VALUE.length ? BY_VALUE[value] : null;
    }

    /** cmd.c's text for any value ("unknown status" when unnamed). */
    public static String describe(int value) {
        CmdStatus s = of(value);
        return s != null ? s.description : "unknown status";
    }
}
