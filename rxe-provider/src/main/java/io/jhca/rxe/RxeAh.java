package io.jhca.rxe;

import io.jhca.rxe.link.UdpLink;
import io.jhca.rxe.transport.Peer;
import io.jhca.verbs.AddressHandle;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.Gid;
import io.jhca.verbs.VerbsException;

/** A UD address handle: the destination GID decoded once into the IP endpoint (port 4791) sends go to. */
final class RxeAh extends AddressHandle {

    private final Peer peer;

    RxeAh(final RxePd pd, final AhAttributes attributes) {
        super(pd, attributes);
        this.peer = peerOf(pd.rxe(), attributes.dgid(), "create AH");
    }

    Peer peer() {
        return peer;
    }

    /** rdma_gid2ip: ::ffff:a.b.c.d is IPv4, anything else IPv6; it must be of the device's address family. */
    static Peer peerOf(final RxeContext ctx, final Gid dgid, final String what) {
        final boolean v4 = dgid.isIpv4Mapped();
        if (v4 != ctx.engine().local().isIpv4()) {
            throw new VerbsException(VerbsException.EINVAL, what + ": destination GID " + dgid + " is "
                    + (v4 ? "IPv4" : "IPv6") + " but device " + ctx.name() + " sends over "
                    + (v4 ? "IPv6" : "IPv4"));
        }
        return Peer.of(dgid.toInetAddress(), UdpLink.ROCE_V2_PORT);
    }

    @Override
    protected void destroy() {
        // WQEs already posted keep their own reference to the peer
    }
}
