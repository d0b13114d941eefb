package io.jhca.mlx5.cmd;

/**
 * Settings of a {@link CmdQueue}. Defaults follow mlx5_core: 60 s command timeout (lib/tout.c
 * {@code MLX5_TO_CMD_MS}; rdma-core mlx5_vfio.c {@code MLX5_CMD_TIMEOUT_MSEC} is the same), mailbox checksums off
 * (cmd.c sets {@code checksum_disabled = 1}; the entry signature is written regardless), no trace, and a device
 * whose health counter does not move for 6 s is stuck (health.c: a poll every 2 s, {@code MAX_MISSES} 3).
 */
public final class CmdQueueOptions {

    public static final long DEFAULT_TIMEOUT_MILLIS = 60_000;
    public static final long DEFAULT_HEALTH_STALL_MILLIS = 6_000;

    private final long timeoutMillis;
    private final boolean checksums;
    private final CmdTrace trace;
    private final long healthStallMillis;

    private CmdQueueOptions(long timeoutMillis, boolean checksums, CmdTrace trace, long healthStallMillis) {
        this.timeoutMillis = timeoutMillis;
        this.checksums = checksums;
        this.trace = trace;
        this.healthStallMillis = healthStallMillis;
    }

    public static CmdQueueOptions defaults() {
        return new CmdQueueOptions(DEFAULT_TIMEOUT_MILLIS, false, null, DEFAULT_HEALTH_STALL_MILLIS);
    }

    /**
     * How long the health counter may stand still while a command waits before the device counts as stuck
     * ({@link DeviceHealthException}); the command timeout still bounds the wait when it is shorter.
     */
    public CmdQueueOptions healthStallMillis(long millis) {
        if (millis <= 0) {
            throw new IllegalArgumentException("health stall time must be positive: " + millis);
        }
        return new CmdQueueOptions(timeoutMillis, checksums, trace, millis);
    }

    public long healthStallMillis() {
        return healthStallMillis;
    }

    /** How long to wait for the device to return an entry (and for a free slot). */
    public CmdQueueOptions timeoutMillis(long millis) {
        if (millis <= 0) {
            throw new IllegalArgumentException("timeout must be positive: " + millis);
        }
        return new CmdQueueOptions(millis, checksums, trace, healthStallMillis);
    }

    /**
     * Sign every mailbox and verify output signatures: only when the firmware runs with
     * {@code cmd_hca_cap.cmdif_checksum} enabled.
     */
    public CmdQueueOptions checksums(boolean on) {
        return new CmdQueueOptions(timeoutMillis, on, trace, healthStallMillis);
    }

    /** Initial trace sink (null = off); it can be changed later with {@link CmdQueue#trace(CmdTrace)}. */
    public CmdQueueOptions trace(CmdTrace sink) {
        return new CmdQueueOptions(timeoutMillis, checksums, sink, healthStallMillis);
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
