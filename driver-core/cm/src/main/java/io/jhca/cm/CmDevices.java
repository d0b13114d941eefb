package io.jhca.cm;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.jhca.verbs.Context;
import io.jhca.verbs.Gid;

/**
 * The devices connection management may use, each with its {@link CmAgent}: an application attaches the contexts
 * it opened ({@link #attach}); address resolution then finds the device whose GID table holds the source address
 * (rdma_cm's cma_acquire_dev by GID). A device is attached once; {@link #detach} stops its agent (before the
 * context closes).
 */
public final class CmDevices {
    private static final Map<Context, CmAgent> AGENTS = new ConcurrentHashMap<>();

    private CmDevices() {
    }

    private static final Map<Context, Integer> USERS = new ConcurrentHashMap<>();

    /**
     * Lets connection management use this device (creates its QP1 and CM thread on the first call); every attach
     * is paired with a {@link #detach}.
     */
    public static synchronized void attach(Context context) {
        if (!context.supportsGsi()) {
            throw new CmException(context.name() + " has no GSI QP (QP1): connection management cannot use it");
        }
        AGENTS.computeIfAbsent(context, CmAgent::new);
        USERS.merge(context, 1, Integer::sum);
    }

    /**
     * Undoes one {@link #attach}; the last stops connection management on the device (its QP1 and thread), so the
     * context can close. Connections still on it are abandoned.
     */
    public static synchronized void detach(Context context) {
        Integer left = USERS.computeIfPresent(context, (c, n) -> n > 1 ? n - 1 : null);
        if (left == null) {
            CmAgent a = AGENTS.remove(context);
            if (a != null) {
                a.close();
            }
        }
    }

    /** MADs the device's connection manager has sent again after a response timeout (diagnostics, tests). */
    public static long retries(Context context) {
        CmAgent a = agent(context);
        a.lock();
        try {
            return a.cm().retries();
        } finally {
            a.unlock();
        }
    }

    static CmAgent agent(Context context) {
        CmAgent a = AGENTS.get(context);
        if (a == null) {
            throw new CmException(context.name() + " is not attached to connection management (CmDevices.attach)");
        }
        return a;
    }

    static List<CmAgent> agents() {
        return new ArrayList<>(AGENTS.values());
    }

    /** The attached device and GID index whose GID is {@code address} (IPv4 as ::ffff:a.b.c.d), or null. */
    static Located locate(InetAddress address) {
        Gid want = Gid.of(address);
        for (CmAgent a : AGENTS.values()) {
            int i = gidIndex(a.context(), want);
            if (i >= 0) {
                return new Located(a, i);
            }
        }
        return null;
    }

    record Located(CmAgent agent, int gidIndex) {
    }

    /** The index of {@code gid} in port 1's GID table, or -1. */
    static int gidIndex(Context context, Gid gid) {
        int n = context.queryPort(1).gidTblLen();
        for (int i = 0; i < n; i++) {
            Gid g;
            try {
                g = context.queryGid(1, i);
            } catch (RuntimeException e) {
                continue;
            }
            if (gid.equals(g)) {
                return i;
            }
        }
        return -1;
    }
}
