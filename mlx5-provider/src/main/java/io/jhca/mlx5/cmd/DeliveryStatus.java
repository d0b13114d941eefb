package io.jhca.mlx5.cmd;

/**
 * Delivery status of a command entry: bits 7:1 of {@code status_own} ({@code ent->status = status_own >> 1}),
 * written by the device when it could not even read the command (bad signature, token, chain...). Values and texts
 * from mlx5_core cmd.c {@code MLX5_CMD_DELIVERY_STAT_*} / {@code deliv_status_to_str} (the enum lives in cmd.c, not in
 * a header, so no golden test can check it; "ouput" is cmd.c's spelling, kept so logs can be diffed).
 */
public enum DeliveryStatus {
    OK(0x0, "no errors"),
    SIGNAT_ERR(0x1, "signature error"),
    TOK_ERR(0x2, "token error"),
    BAD_BLK_NUM_ERR(0x3, "bad block number"),
    OUT_PTR_ALIGN_ERR(0x4, "output pointer not aligned to block size"),
    IN_PTR_ALIGN_ERR(0x5, "input pointer not aligned to block size"),
    FW_ERR(0x6, "firmware internal error"),
    IN_LENGTH_ERR(0x7, "command input length error"),
    OUT_LENGTH_ERR(0x8, "command ouput length error"),
    RES_FLD_NOT_CLR_ERR(0x9, "reserved fields not cleared"),
    CMD_DESCR_ERR(0x10, "bad command descriptor type");

    private static final DeliveryStatus[] BY_VALUE = new DeliveryStatus[128];

    static {
        for (DeliveryStatus s : values()) {
            BY_VALUE[s.value] = s;
        }
    }

    private final int value;
    private final String description;

    DeliveryStatus(int value, String description) {
        this.value = value;
        this.description = description;
    }

    /** The 7-bit value as stored in status_own bits 7:1. */
    public int value() {
        return value;
    }

    public String description() {
        return description;
    }

    /** The status with this 7-bit value, or null when cmd.c names none. */
    public static DeliveryStatus of(int value) {
        return value >= 0 && value < BY_VALUE.length ? BY_VALUE[value] : null;
    }

    /** cmd.c's text for any value ("unknown status code" when unnamed). */
    public static String describe(int value) {
        DeliveryStatus s = of(value);
        return s != null ? s.description : "unknown status code";
    }
}
