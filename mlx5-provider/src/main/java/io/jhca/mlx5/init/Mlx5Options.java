package io.jhca.mlx5.init;

import io.jhca.mlx5.cmd.CmdTrace;

/**
 * How the mlx5 provider brings a function up and rings doorbells. From system properties by default:
 * <ul>
 * <li>{@code jhca.mlx5.trace}: {@code true} or {@code full} dumps every command to stderr in mlx5_core's format,
 *     {@code data} only the data words; off by default. It can be switched at run time per device with
 *     {@code Mlx5Context.traceCommands}.</li>
 * <li>{@code jhca.mlx5.cmdTimeoutMs} (60000, mlx5_core's command timeout), {@code jhca.mlx5.preInitTimeoutMs}
 *     (120000, FW_PRE_INIT_TIMEOUT), {@code jhca.mlx5.initTimeoutMs} (10000; the kernel allows 2000 after the
 *     command queue is programmed, a device model may need longer to start), {@code jhca.mlx5.healthStallMs}
 *     (6000: how long the health counter may stand still while a command waits before the device counts as
 *     stuck; a device whose BAR0 reads all ones counts as gone at once).</li>
 * <li>{@code jhca.mlx5.blueflame}: {@code auto} (a single inline WQE goes by BlueFlame when the device has it, as
 *     rdma-core does), {@code prefer} (any single WQE, rdma-core's MLX5_POST_SEND_PREFER_BF), {@code off}.</li>
 * <li>{@code jhca.mlx5.perQpCounters}: {@code true} gives every QP a Q counter set of its own
 *     ({@link #withPerQpCounters}); off by default, as the kernel counts every QP in its port's set.</li>
 * </ul>
 */
public record Mlx5Options(long preInitTimeoutMillis, long initTimeoutMillis, long commandTimeoutMillis, CmdTrace trace,
                          BlueFlameMode blueFlame, boolean perQpCounters) {

    /** When a doorbell carries the whole WQE. */
    public enum BlueFlameMode { OFF, AUTO, PREFER }

    public static Mlx5Options defaults() {
        return new Mlx5Options(120_000, 10_000, 60_000, null, BlueFlameMode.AUTO, false);
    }

    /** The defaults, overridden by the {@code jhca.mlx5.*} system properties. */
    public static Mlx5Options fromSystemProperties() {
        Mlx5Options d = defaults();
        return new Mlx5Options(
                Long.getLong("jhca.mlx5.preInitTimeoutMs", d.preInitTimeoutMillis),
                Long.getLong("jhca.mlx5.initTimeoutMs", d.initTimeoutMillis),
                Long.getLong("jhca.mlx5.cmdTimeoutMs", d.commandTimeoutMillis),
                traceOf(System.getProperty("jhca.mlx5.trace", "false")),
                BlueFlameMode.valueOf(System.getProperty("jhca.mlx5.blueflame", "auto").trim().toUpperCase(java.util.Locale.ROOT)),
                Boolean.getBoolean("jhca.mlx5.perQpCounters"));
    }

    /** {@code true}/{@code full}: full dumps to stderr; {@code data}: data words only; anything else: off. */
    public static CmdTrace traceOf(String setting) {
        switch (setting.trim().toLowerCase(java.util.Locale.ROOT)) {
            case "true":
            case "full":
                return CmdTrace.to(System.err);
            case "data":
                return CmdTrace.of(System.err::println, CmdTrace.Mode.DATA);
            default:
                return null;
        }
    }

    public Mlx5Options withTrace(CmdTrace t) {
        return new Mlx5Options(preInitTimeoutMillis, initTimeoutMillis, commandTimeoutMillis, t, blueFlame, perQpCounters);
    }

    public Mlx5Options withCommandTimeout(long millis) {
        return new Mlx5Options(preInitTimeoutMillis, initTimeoutMillis, millis, trace, blueFlame, perQpCounters);
    }

    public Mlx5Options withInitTimeouts(long preInit, long init) {
        return new Mlx5Options(preInit, init, commandTimeoutMillis, trace, blueFlame, perQpCounters);
    }

    public Mlx5Options withBlueFlame(BlueFlameMode mode) {
        return new Mlx5Options(preInitTimeoutMillis, initTimeoutMillis, commandTimeoutMillis, trace, mode, perQpCounters);
    }

    /**
     * Each QP gets a Q counter set of its own at RST2INIT (as {@code rdma statistic qp set link DEV/1 auto type on}
     * has mlx5_ib do), so {@code QueuePair.statistics()} reports it; the device's statistics still count every QP.
     */
    public Mlx5Options withPerQpCounters(boolean on) {
        return new Mlx5Options(preInitTimeoutMillis, initTimeoutMillis, commandTimeoutMillis, trace, blueFlame, on);
    }
}
