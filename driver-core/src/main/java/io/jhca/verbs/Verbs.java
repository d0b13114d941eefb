package io.jhca.verbs;

import io.jhca.verbs.spi.Provider;

import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/** Entry point: lists devices across every provider on the class path and opens them. */
public final class Verbs {
    private static volatile List<Provider> providers;

    private Verbs() {
    }

    /** The providers found by ServiceLoader, in class-path order. */
    public static List<Provider> providers() {
        List<Provider> p = providers;
        if (p == null) {
            synchronized (Verbs.class) {
                p = providers;
                if (p == null) {
                    List<Provider> found = new ArrayList<>();
                    ServiceLoader.load(Provider.class, Verbs.class.getClassLoader()).forEach(found::add);
                    providers = p = List.copyOf(found);
                }
            }
        }
        return p;
    }

    /** Every device of every provider ({@code ibv_get_device_list}). */
    public static List<DeviceInfo> devices() {
        List<DeviceInfo> all = new ArrayList<>();
        for (Provider p : providers()) {
            all.addAll(p.devices());
        }
        return all;
    }

    /** Opens a device by name ({@code ibv_open_device}). */
    public static Context open(String name) {
        for (Provider p : providers()) {
            for (DeviceInfo d : p.devices()) {
                if (d.name().equals(name)) {
                    return p.open(d);
                }
            }
        }
        List<String> names = new ArrayList<>();
        for (DeviceInfo d : devices()) {
            names.add(d.name());
        }
        throw new VerbsException(VerbsException.ENOENT, "no RDMA device named '" + name + "'; devices: " + names);
    }
}
