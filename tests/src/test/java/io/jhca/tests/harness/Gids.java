package io.jhca.tests.harness;

import io.jhca.verbs.Context;
import io.jhca.verbs.Gid;

/** GID table look-ups. */
public final class Gids {
    private Gids() {
    }

    /**
     * The GID index a RoCEv2 application should use on port 1: the first IPv4-mapped entry (what perftest's
     * "auto" picks, index 1 on rxe), else the first non-empty one.
     */
    public static int roceIndex(Context ctx) {
        int n = ctx.queryPort(1).gidTblLen();
        int firstNonZero = -1;
        for (int i = 0; i < n; i++) {
            Gid g = ctx.queryGid(1, i);
            if (g.isZero()) {
                continue;
            }
            if (g.isIpv4Mapped()) {
                return i;
            }
            if (firstNonZero < 0) {
                firstNonZero = i;
            }
        }
        if (firstNonZero < 0) {
            throw new AssertionError(ctx.name() + " port 1 has no GID at all (table of " + n + " entries)");
        }
        return firstNonZero;
    }
}
