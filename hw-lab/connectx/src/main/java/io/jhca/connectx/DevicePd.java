package io.jhca.connectx;

import io.jhca.verbs.ProtectionDomain;

/** A protection domain: its 24-bit number and the rxe PD that mirrors it (same PD = same rxe PD object). */
final class DevicePd {

    final int pdn;
    final ProtectionDomain rxePd;
    /** mkeys and QPs created in this PD. */
    int users;

    DevicePd(int pdn, ProtectionDomain rxePd) {
        this.pdn = pdn;
        this.rxePd = rxePd;
    }
}
