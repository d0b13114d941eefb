package io.jhca.lab;

import io.jhca.verbs.Context;
import io.jhca.verbs.DeviceInfo;
import io.jhca.verbs.Verbs;
import io.jhca.verbs.VerbsException;

import java.util.List;

/** Device lookup with the tools' defaults. */
public final class Devices {
    private Devices() {
    }

    /** Opens {@code name}, or the first device found when null, as the rdma-core tools do. */
    public static Context open(String name) {
        return Verbs.open(name != null ? name : first());
    }

    /** The first device of every provider, or an error naming the remedy. */
    public static String first() {
        List<DeviceInfo> all = Verbs.devices();
        if (all.isEmpty()) {
            throw new VerbsException(VerbsException.ENOENT, "No IB devices found (no jhca provider lists a device; "
                    + "the rxe provider's devices are configured with -Djhca.rxe.devices or JHCA_RXE_DEVICES)");
        }
        return all.get(0).name();
    }

    /**
     * The two devices an in-process run uses: {@code server} and {@code client} if given; else rxe0 and rxe1 when
     * present (the rxe provider's defaults, on 127.0.0.1 and 127.0.0.2); else the first two devices; a single
     * device talks to itself.
     */
    public static String[] pair(String server, String client) {
        List<DeviceInfo> all = Verbs.devices();
        if (all.isEmpty()) {
            first(); // throws with the message
        }
        String s = server != null ? server : has(all, "rxe0") ? "rxe0" : all.get(0).name();
        String c = client;
        if (c == null) {
            if (s.equals("rxe0") && has(all, "rxe1")) {
                c = "rxe1";
            } else {
                c = s;
                for (DeviceInfo d : all) {
                    if (!d.name().equals(s)) {
                        c = d.name();
                        break;
                    }
                }
            }
        }
        return new String[] {s, c};
    }

    private static boolean has(List<DeviceInfo> all, String name) {
        for (DeviceInfo d : all) {
            if (d.name().equals(name)) {
                return true;
            }
        }
        return false;
    }
}
