package io.jhca.mlx5.cmd;

/**
 * Settings of a {@link CmdQueue}. Defaults follow mlx5_core: 60 s command timeout (lib/tout.c
 * {@code MLX5_TO_CMD_MS}; rdma-core mlx5_vfio.c {@code MLX5_CMD_TIMEOUT_MSEC} is the same), mailbox checksums off
 * (cmd.c sets {@code checksum_disabled = 1}; the entry signature is written regardless), no trace.
 */
public final class CmdQueueOptions {

    public static final long DEFAULT_TIMEOUT_MILLIS = 60_000;

    private final long timeoutMillis;
    private final boolean checksums;
    private final CmdTrace trace;

    private CmdQueueOptions(long timeoutMillis, boolean checksums, CmdTrace trace) {
        this.timeoutMillis = timeoutMillis;
        this.checksums = checksums;
        this.trace = trace;
    }

    public static CmdQueueOptions defaults() {
        return new CmdQueueOptions(DEFAULT_TIMEOUT_MILLIS, false, null);
    }

    /** How long to wait for the device to return an entry (and for a free slot). */
    public CmdQueueOptions timeoutMillis(long millis) {
        if (millis <= 0) {
            throw new IllegalArgumentException("timeout must be positive: " + millis);
        }
        return new CmdQueueOptions(millis, checksums, trace);
    }

    /**
     * Sign every mailbox and verify output signatures: only when the firmware runs with
     * {@code cmd_hca_cap.cmdif_checksum} enabled.
     */
    public CmdQueueOptions checksums(boolean on) {
        return new CmdQueueOptions(timeoutMillis, on, trace);
    }

    /** Initial trace sink (null = off); it can be changed later with {@link CmdQueue#trace(CmdTrace)}. */
    public CmdQueueOptions trace(CmdTrace sink) {
        return new CmdQueueOptions(timeoutMillis, checksums, sink);
    }

    public long timeoutMillis() {
        return timeoutMillis;
    }

    public boolean checksums() {
        return checksums;
    }

    public CmdTrace trace() {
        return trace;
    }
}
