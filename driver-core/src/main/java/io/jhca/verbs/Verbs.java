package io.jhca.verbs;

import io.jhca.verbs.spi.Provider;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.ServiceConfigurationError;
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
                    Iterator<Provider> it = ServiceLoader.load(Provider.class, Verbs.class.getClassLoader()).iterator();
                    while (true) {
                        try {
                            if (!it.hasNext()) {
                                break;
                            }
                            found.add(it.next());
                        } catch (ServiceConfigurationError e) {
                            // One broken provider must not hide the others' devices; say why it is missing.
                            System.err.println("jhca: an RDMA provider failed to load and is skipped: " + e.getMessage());
                        }
                    }
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
            try {
                all.addAll(p.devices());
            } catch (RuntimeException | LinkageError e) {
                System.err.println("jhca: provider " + p.name() + " could not list its devices and is skipped: " + e);
            }
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
