package io.jhca.mlx5;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.ConcurrentHashMap;

import io.jhca.mlx5.init.Hca;
import io.jhca.mlx5.init.HcaBringUp;
import io.jhca.mlx5.init.Mlx5Options;
import io.jhca.mlx5.spi.Mlx5Function;
import io.jhca.mlx5.spi.Mlx5FunctionSource;
import io.jhca.verbs.Context;
import io.jhca.verbs.DeviceInfo;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.spi.Provider;

/**
 * The mlx5 provider: one device per ConnectX function that any {@link Mlx5FunctionSource} on the class path lists
 * (the vfio backend, the ConnectX model of module jhca-connectx). Listing opens nothing; {@link #open} brings the function up
 * ({@link Mlx5Context}). A function's node GUID is known only once it is brought up (it comes from the port's
 * address, as a NIC's comes from its vport context): a device lists with node GUID 0 until it has been opened once,
 * then with its GUID; an open context's {@code device()} always carries it.
 */
public final class Mlx5Provider implements Provider {

    /** Node GUIDs learned at bring-up, by device name. */
    private static final Map<String, Long> GUIDS = new ConcurrentHashMap<>();

    private volatile List<Mlx5FunctionSource> sources;

    @Override
    public String name() {
        return "mlx5";
    }

    private List<Mlx5FunctionSource> sources() {
        List<Mlx5FunctionSource> s = sources;
        if (s == null) {
            List<Mlx5FunctionSource> found = new ArrayList<>();
            java.util.Iterator<Mlx5FunctionSource> it =
                    ServiceLoader.load(Mlx5FunctionSource.class, Mlx5Provider.class.getClassLoader()).iterator();
            while (true) {
                try {
                    if (!it.hasNext()) {
                        break;
                    }
                    found.add(it.next());
                } catch (java.util.ServiceConfigurationError e) {
                    // one broken source (a stale registration, a missing class) must not hide the other functions
                    System.err.println("jhca mlx5: a function source failed to load and is skipped: " + e.getMessage());
                }
            }
            sources = s = List.copyOf(found);
        }
        return s;
    }

    @Override
    public List<DeviceInfo> devices() {
        List<DeviceInfo> out = new ArrayList<>();
        for (Mlx5FunctionSource src : sources()) {
            for (String n : src.names()) {
                long guid = GUIDS.getOrDefault(n, 0L);
                out.add(new DeviceInfo(n, name(), guid != 0 ? guid : src.nodeGuid(n), "InfiniBand"));
            }
        }
        return out;
    }

    @Override
    public Context open(DeviceInfo device) {
        for (Mlx5FunctionSource src : sources()) {
            if (src.names().contains(device.name())) {
                return open(device, src.open(device.name()), Mlx5Options.fromSystemProperties());
            }
        }
        throw new VerbsException(VerbsException.ENOENT, "no mlx5 function named '" + device.name() + "'");
    }

    /**
     * Whether postSend's chain loop is compiled apart from its callers in this JVM (a compiler directive the provider
     * adds while its first device comes up, at the latest when its QP class loads;
     * {@code -Djhca.mlx5.compileChainApart=false} turns it off): "yes", or "no" and why. For tools that report how
     * they measured.
     */
    public static String chainCompiledApart() {
        return CompiledApart.request().describe();
    }

    /**
     * Brings {@code function} up as a verbs device; on failure the function is closed and the cause (a command error
     * or a firmware timeout) is the exception's cause.
     */
    public static Mlx5Context open(DeviceInfo device, Mlx5Function function, Mlx5Options options) {
        CompiledApart.requestSoon();   // while the device comes up
        Hca hca = null;
        try {
            hca = HcaBringUp.bringUp(function, options);
            long guid = hca.gids().nodeGuid();
            GUIDS.put(device.name(), guid);
            return new Mlx5Context(new DeviceInfo(device.name(), device.provider(), guid, device.transport()), function, hca);
        } catch (RuntimeException e) {
            if (hca != null) {
                try {
                    hca.close();
                } catch (RuntimeException closeFailure) {
                    e.addSuppressed(closeFailure);
                }
            }
            try {
                function.close();
            } catch (RuntimeException closeFailure) {
                e.addSuppressed(closeFailure);
            }
            throw new VerbsException(Mlx5Errors.errno(e), "open " + device.name() + " (" + function.location()
                    + "): bring-up failed: " + e.getMessage(), e);
        }
    }
}
