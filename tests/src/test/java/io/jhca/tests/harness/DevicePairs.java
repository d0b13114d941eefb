package io.jhca.tests.harness;

import io.jhca.verbs.DeviceInfo;
import io.jhca.verbs.Verbs;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.params.provider.Arguments;

/**
 * The parameter source of the conformance suite: every pair of devices to run traffic between.
 * <ul>
 * <li>rxe0 &lt;-&gt; rxe1, opened by name through {@link Verbs#open(String)} (the provider's default devices on
 *     127.0.0.1 and 127.0.0.2), with the provider's own progress thread;</li>
 * <li>an rxe pair in CALLER progress mode on its own loopback addresses (127.0.0.21/22), driven by
 *     {@code Context.progress()} from the test's polling loops;</li>
 * <li>mlx5 pairs (the ConnectX device model, real hardware when found); listed as absent, with the reason,
 *     when the provider offers fewer than two devices, as rdma-core's tests say "No mlx5 device present".</li>
 * </ul>
 * Use with {@code @MethodSource("io.jhca.tests.harness.DevicePairs#all")}.
 */
public final class DevicePairs {

    private DevicePairs() {
    }

    /** Every pair, present or not (absent ones skip with their reason). */
    public static Stream<DevicePair> all() {
        List<DevicePair> pairs = new ArrayList<>();
        pairs.add(rxeDefault());
        pairs.add(RxeDevices.callerPair("rxe-caller-a", "rxe-caller-b", "127.0.0.21", "127.0.0.22"));
        pairs.addAll(mlx5());
        pairs.add(mlx5WithRxe());
        return pairs.stream();
    }

    /** Each pair combined with each of {@code values}: arguments (pair, value). */
    public static Stream<Arguments> cross(Object... values) {
        return all().flatMap(p -> Stream.of(values).map(v -> Arguments.of(p, v)));
    }

    /** rxe0 and rxe1 by name, as any application would open them. */
    public static DevicePair rxeDefault() {
        String label = "rxe0<->rxe1 (THREAD)";
        if (!has("rxe0") || !has("rxe1")) {
            return DevicePair.absent(label, "rxe", "No rxe0/rxe1 devices: provider 'rxe' is not on the class path"
                    + " or is configured otherwise (devices: " + names() + ")");
        }
        return DevicePair.present(label, "rxe", DevicePair.Progress.THREAD,
                side -> Verbs.open(side == 0 ? "rxe0" : "rxe1"), ip("127.0.0.1"), ip("127.0.0.2"));
    }

    /** Pairs of mlx5 devices (device model or hardware), or one absent entry saying why there are none. */
    static List<DevicePair> mlx5() {
        List<String> found = new ArrayList<>();
        for (DeviceInfo d : Verbs.devices()) {
            if ("mlx5".equals(d.provider())) {
                found.add(d.name());
            }
        }
        List<DevicePair> out = new ArrayList<>();
        if (found.size() < 2) {
            out.add(DevicePair.absent("mlx5 pair", "mlx5", "No mlx5 device model present (provider 'mlx5' lists "
                    + found.size() + " device(s): " + found + "; a pair needs two)"));
            return out;
        }
        for (int i = 0; i + 1 < found.size(); i += 2) {
            String a = found.get(i);
            String b = found.get(i + 1);
            out.add(DevicePair.present(a + "<->" + b, "mlx5", DevicePair.Progress.THREAD,
                    side -> Verbs.open(side == 0 ? a : b), null, null));
        }
        return out;
    }

    /**
     * A simulated ConnectX against an rxe device: two different drivers (WQE rings and doorbells on one side,
     * the software HCA's rings on the other) meeting on the wire. Provider label "mlx5+rxe": side 0, side 1.
     */
    static DevicePair mlx5WithRxe() {
        String label = "mlx5<->rxe1 (mixed)";
        String mlx5 = null;
        for (DeviceInfo d : Verbs.devices()) {
            if ("mlx5".equals(d.provider())) {
                mlx5 = d.name();
                break;
            }
        }
        if (mlx5 == null || !has("rxe1")) {
            return DevicePair.absent(label, "mlx5+rxe", "No mlx5 device and rxe1 to pair (devices: " + names() + ")");
        }
        String a = mlx5;
        return DevicePair.present(a + "<->rxe1 (mixed)", "mlx5+rxe", DevicePair.Progress.THREAD,
                side -> Verbs.open(side == 0 ? a : "rxe1"), null, ip("127.0.0.2"));
    }

    private static boolean has(String name) {
        for (DeviceInfo d : Verbs.devices()) {
            if (d.name().equals(name)) {
                return true;
            }
        }
        return false;
    }

    private static List<String> names() {
        List<String> n = new ArrayList<>();
        for (DeviceInfo d : Verbs.devices()) {
            n.add(d.name() + "(" + d.provider() + ")");
        }
        return n;
    }

    static InetAddress ip(String literal) {
        try {
            return InetAddress.getByName(literal);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(literal, e);
        }
    }
}
