package io.jhca.tests.harness;

import io.jhca.connectx.ModelFunction;
import io.jhca.mlx5.Mlx5Provider;
import io.jhca.mlx5.init.Mlx5Options;
import io.jhca.rxe.ProgressMode;
import io.jhca.rxe.RxeDeviceConfig;
import io.jhca.rxe.RxeProvider;
import io.jhca.rxe.link.LinkFaults;
import io.jhca.verbs.Context;
import io.jhca.verbs.DeviceInfo;

import java.util.stream.Stream;

/**
 * Every kind of device pair of the suite, with links that misbehave: rxe with engine threads, rxe in CALLER mode, two
 * ConnectX models, a ConnectX model and an rxe device with an engine thread, and one in CALLER mode. Every device's
 * transmit side applies the faults (the model's too: its wire is an rxe link), each with its own seed, so both
 * directions of every pair see them. Own names and addresses (127.0.0.70-79), so these pairs never collide with the
 * default devices or with each other.
 */
public final class FaultyPairs {
    private FaultyPairs() {
    }

    public static Stream<DevicePair> all(LinkFaults f, long seed) {
        return Stream.of(
                rxe("fault-a", "fault-b", "127.0.0.70", "127.0.0.71", ProgressMode.THREAD, f, seed),
                rxe("fault-ca", "fault-cb", "127.0.0.72", "127.0.0.73", ProgressMode.CALLER, f, seed),
                DevicePair.present("mlx5_f0<->mlx5_f1 (faults " + f + ")", "mlx5", DevicePair.Progress.THREAD,
                        side -> side == 0 ? mlx5("mlx5_f0", "127.0.0.74", f, seed) : mlx5("mlx5_f1", "127.0.0.75", f, seed + 1),
                        DevicePairs.ip("127.0.0.74"), DevicePairs.ip("127.0.0.75")),
                mixed("mlx5_f2", "fault-mb", "127.0.0.76", "127.0.0.77", ProgressMode.THREAD, f, seed),
                mixed("mlx5_f3", "fault-mcb", "127.0.0.78", "127.0.0.79", ProgressMode.CALLER, f, seed));
    }

    private static DevicePair rxe(String a, String b, String ipA, String ipB, ProgressMode mode, LinkFaults f, long seed) {
        return DevicePair.present(a + "<->" + b + " (" + mode + ", faults " + f + ")", "rxe", progress(mode),
                side -> side == 0 ? rxeDevice(a, ipA, mode, f, seed) : rxeDevice(b, ipB, mode, f, seed + 1),
                DevicePairs.ip(ipA), DevicePairs.ip(ipB));
    }

    private static DevicePair mixed(String a, String b, String ipA, String ipB, ProgressMode mode, LinkFaults f, long seed) {
        return DevicePair.present(a + "<->" + b + " (mixed, rxe " + mode + ", faults " + f + ")", "mlx5+rxe", progress(mode),
                side -> side == 0 ? mlx5(a, ipA, f, seed) : rxeDevice(b, ipB, mode, f, seed + 1),
                DevicePairs.ip(ipA), DevicePairs.ip(ipB));
    }

    private static DevicePair.Progress progress(ProgressMode mode) {
        return mode == ProgressMode.CALLER ? DevicePair.Progress.CALLER : DevicePair.Progress.THREAD;
    }

    private static Context rxeDevice(String name, String ip, ProgressMode mode, LinkFaults f, long seed) {
        return RxeProvider.open(RxeDeviceConfig.builder(name).address(ip).progressMode(mode).txFaults(f).faultSeed(seed).build());
    }

    /** A ConnectX model whose port transmits through the faults, driven by the mlx5 provider as any other. */
    private static Context mlx5(String name, String ip, LinkFaults f, long seed) {
        ModelFunction fn = ModelFunction.open(name, DevicePairs.ip(ip), b -> b.txFaults(f).faultSeed(seed));
        try {
            return Mlx5Provider.open(new DeviceInfo(name, "mlx5", 0, "InfiniBand"), fn, Mlx5Options.fromSystemProperties());
        } catch (RuntimeException e) {
            fn.close();
            throw e;
        }
    }
}
