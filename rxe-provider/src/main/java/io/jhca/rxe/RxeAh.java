package io.jhca.rxe;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

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
        this.peer = peerOf(pd.rxe(), attributes, "create AH");
    }

    Peer peer() {
        return peer;
    }

    /**
     * rdma_gid2ip: ::ffff:a.b.c.d is IPv4, anything else IPv6; it must be of the family of the source address the
     * AV's sgid_index names. A link-local destination is reached through the source address's interface.
     */
    static Peer peerOf(final RxeContext ctx, final AhAttributes av, final String what) {
        final Gid dgid = av.dgid();
        final int via = ctx.sourceFor(av.sgidIndex(), what);
        final InetSocketAddress from = ctx.link().localAddresses().get(via);
        final boolean v4 = dgid.isIpv4Mapped();
        if (v4 != from.getAddress() instanceof Inet4Address) {
            throw new VerbsException(VerbsException.EINVAL, what + ": destination GID " + dgid + " is "
                    + (v4 ? "IPv4" : "IPv6") + " but device " + ctx.name() + " sends over "
                    + (v4 ? "IPv6" : "IPv4") + " from GID index " + av.sgidIndex()
                    + " (pick a source GID of the destination's family)");
        }
        InetAddress to = dgid.toInetAddress();
        if (!v4 && to.isLinkLocalAddress() && from.getAddress() instanceof Inet6Address src
                && src.getScopeId() != 0) {
            try {
                to = Inet6Address.getByAddress(null, to.getAddress(), src.getScopeId());
            } catch (final UnknownHostException e) {
                throw new VerbsException(VerbsException.EINVAL, what + ": " + dgid + ": " + e.getMessage(), e);
            }
        }
        return Peer.of(to, UdpLink.ROCE_V2_PORT, via);
    }

    @Override
    protected void destroy() {
        // WQEs already posted keep their own reference to the peer
    }
}
