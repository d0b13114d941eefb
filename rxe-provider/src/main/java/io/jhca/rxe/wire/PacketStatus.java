package io.jhca.rxe.wire;

/**
 * Outcome of {@link PacketValidator}, for counters and logs. {@link #code()} equals the int the validator
 * returns (the ordinal); {@link #of(int)} maps it back without allocating.
 */
public enum PacketStatus {
    OK,
    /** Shorter than BTH, or than BTH + the opcode's extension headers + ICRC. */
    TRUNCATED,
    /** Length not a multiple of 4, pad count larger than what is left for payload, or payload on an opcode without. */
    BAD_LENGTH,
    /** An opcode this wire layer does not speak (reserved, RD, CNP, FLUSH, ATOMIC_WRITE, ...). */
    UNKNOWN_OPCODE,
    /** BTH TVer not 0. */
    BAD_TVER,
    /** P_Key does not match the port's (rxe pkey_match against 0xFFFF). */
    BAD_PKEY,
    /** ICRC mismatch. */
    BAD_ICRC;

    private static final PacketStatus[] VALUES = values();

    public int code() {
        return ordinal();
    }

    public static PacketStatus of(final int code) {
        return VALUES[code];
    }
}
