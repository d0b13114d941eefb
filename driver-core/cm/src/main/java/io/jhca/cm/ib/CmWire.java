package io.jhca.cm.ib;

import io.jhca.cm.mad.Mad;
import io.jhca.verbs.Gid;

/** Where a connection manager's MADs go: QP1 of the peer with that GID (a {@link GsiPort}, or a test's wire). */
@FunctionalInterface
public interface CmWire {
    /** Sends; a MAD that cannot be sent now counts as lost (the sender's timers retry). */
    void send(Mad mad, Gid dest, int sgidIndex);
}
