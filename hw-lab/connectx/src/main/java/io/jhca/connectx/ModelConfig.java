package io.jhca.connectx;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.jhca.rxe.AdaptiveIdleStrategy;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

/**
 * Which simulated ConnectX functions exist and how their firmware thread idles. Devices come from the system
 * property {@value #DEVICES_PROPERTY}, else the environment variable {@value #DEVICES_ENV}, else
 * {@value #DEFAULT_DEVICES}; {@code none} means no devices. Syntax: {@code name=ipv4-or-ipv6-literal, ...}.
 */
public final class ModelConfig {

    public static final String DEVICES_PROPERTY = "jhca.mlx5.sim";
    public static final String DEVICES_ENV = "JHCA_MLX5_SIM";
    public static final String DEFAULT_DEVICES = "mlx5_0=127.0.0.3,mlx5_1=127.0.0.4";
    /** {@code adaptive}, {@code backoff} or {@code busy}: how the firmware thread waits when there is nothing to do. */
    public static final String IDLE_PROPERTY = "jhca.mlx5.sim.idle";

    private ModelConfig() {
    }

    /** The configured devices, name to port address, in the order given. */
    public static Map<String, InetAddress> devices() {
        String spec = System.getProperty(DEVICES_PROPERTY);
        if (spec == null || spec.isBlank()) {
            spec = System.getenv(DEVICES_ENV);
        }
        if (spec == null || spec.isBlank()) {
            spec = DEFAULT_DEVICES;
        }
        return parse(spec);
    }

    /** Parses {@code mlx5_0=127.0.0.3,mlx5_1=127.0.0.4} (or {@code none}). */
    public static Map<String, InetAddress> parse(String spec) {
        Map<String, InetAddress> out = new LinkedHashMap<>();
        if (spec.trim().equalsIgnoreCase("none")) {
            return Collections.unmodifiableMap(out);
        }
        for (String item : spec.split(",")) {
            String it = item.trim();
            if (it.isEmpty()) {
                continue;
            }
            int eq = it.indexOf('=');
            if (eq <= 0 || eq == it.length() - 1) {
                throw new IllegalArgumentException("simulated mlx5 device '" + it + "' is not name=address");
            }
            String name = it.substring(0, eq).trim();
            if (out.containsKey(name)) {
                throw new IllegalArgumentException("simulated mlx5 device '" + name + "' configured twice");
            }
            out.put(name, literal(it.substring(eq + 1).trim()));
        }
        return Collections.unmodifiableMap(out);
    }

    private static InetAddress literal(String s) {
        String t = s.startsWith("[") && s.endsWith("]") ? s.substring(1, s.length() - 1) : s;
        if (!t.matches("[0-9.]+") && !t.contains(":")) {
            throw new IllegalArgumentException("'" + s + "' is not an IPv4 or IPv6 literal");
        }
        try {
            return InetAddress.getByName(t); // a literal: never a name lookup
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("'" + s + "' is not an IP address", e);
        }
    }

    /** Names in configuration order. */
    public static List<String> names() {
        return Collections.unmodifiableList(new ArrayList<>(devices().keySet()));
    }

    /**
     * A fresh idle strategy for a firmware thread, from {@value #IDLE_PROPERTY}; by default {@code adaptive}: yield
     * until 2 ms after the last work, then park 50 us doubling to 100 us. The firmware notices a doorbell only by
     * looking, and a parked thread wakes late (a park lasts at least the timer slack, 50 us): with {@code backoff},
     * which parks after about a hundred idle spins, an in-process write-lat between mlx5_0 and rxe0 took 90-110 us per
     * half round trip, with {@code adaptive} 31-35.
     */
    public static IdleStrategy idleStrategy() {
        return idleStrategy("adaptive");
    }

    /**
     * As {@link #idleStrategy()} with another default: a model process serving a VM keeps {@code backoff}, since a
     * yielding firmware thread there takes the CPU that QEMU's emulated vCPUs need (the mlx5 VM tests took 43 s with
     * backoff, 63 s with adaptive, on two cores).
     */
    public static IdleStrategy idleStrategy(String defaultKind) {
        return idleStrategy(defaultKind, null);
    }

    /**
     * The idle strategy of an in-process function's firmware thread: {@code adaptive} by default, whose park phase is
     * {@code sleeper}'s (a sleep until a doorbell, a datagram or the model's next timer), so it may last up to 1 s:
     * the model's timers (the health tick every {@value InitSegmentDevice#HEALTH_TICK_MS} ms) keep it shorter.
     */
    static IdleStrategy idleStrategy(AdaptiveIdleStrategy.Sleeper sleeper) {
        return idleStrategy("adaptive", sleeper);
    }

    private static IdleStrategy idleStrategy(String defaultKind, AdaptiveIdleStrategy.Sleeper sleeper) {
        String v = System.getProperty(IDLE_PROPERTY, defaultKind).trim().toLowerCase(Locale.ROOT);
        switch (v) {
            case "busy":
                return new BusySpinIdleStrategy();
            case "backoff":
                // spin, yield, then park from 1 us up to 100 us: a doorbell is noticed within ~0.1 ms when idle
                return new BackoffIdleStrategy(100, 10, 1_000L, 100_000L);
            case "adaptive":
                // a plain park looks again within 100 us; a sleeper's park ends on a wake or the model's next timer
                return new AdaptiveIdleStrategy(0, AdaptiveIdleStrategy.DEFAULT_YIELD_NANOS,
                        AdaptiveIdleStrategy.DEFAULT_MIN_PARK_NANOS, sleeper == null ? 100_000L : 1_000_000_000L,
                        sleeper == null ? AdaptiveIdleStrategy.PARK : sleeper);
            default:
                throw new IllegalArgumentException(IDLE_PROPERTY + " must be adaptive, busy or backoff, not '" + v + "'");
        }
    }
}
