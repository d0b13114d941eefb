package io.jhca.rxe.transport;

import java.net.InetAddress;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

import io.jhca.rxe.link.Link;
import io.jhca.verbs.Gid;
import io.jhca.verbs.VerbsException;

/**
 * The multicast groups of one device (rxe_mcast.c): for each group its IP address and the QPs attached to it.
 * The first attach joins the IP group on the device's link, the last detach leaves it. Touched by the engine
 * thread only (control actions run through {@link Engine#runOnEngine}).
 */
final class McastTable {

    /** rxe_param.h RXE_MAX_MCAST_GRP. */
    static final int MAX_GROUPS = 8192;
    /** rxe_param.h RXE_MAX_MCAST_QP_ATTACH. */
    static final int MAX_QP_ATTACH = 56;
    /** rxe_param.h RXE_MAX_TOT_MCAST_QP_ATTACH. */
    static final int MAX_TOTAL_QP_ATTACH = 0x70000;

    /** One group: its address as the transport needs it and its members. */
    static final class Group {
        final Gid mgid;
        final InetAddress address;
        final Peer peer;
        TransportQp[] members = new TransportQp[0];

        Group(final Gid mgid, final InetAddress address, final Peer peer) {
            this.mgid = mgid;
            this.address = address;
            this.peer = peer;
        }
    }

    private final Link link;
    private final Map<InetAddress, Group> byAddress = new HashMap<>();
    private int totalAttached;

    McastTable(final Link link) {
        this.link = link;
    }

    /** The group a datagram came in for, or null (left since). */
    Group group(final InetAddress address) {
        return address == null ? null : byAddress.get(address);
    }

    void attach(final TransportQp qp, final Gid mgid) {
        final InetAddress address = mgid.toInetAddress();
        Group g = byAddress.get(address);
        if (g != null) {
            for (final TransportQp m : g.members) {
                if (m == qp) {
                    return; // rxe: attaching twice is no error
                }
            }
            if (g.members.length >= MAX_QP_ATTACH) {
                throw new VerbsException(VerbsException.ENOMEM, "attach QP 0x" + Integer.toHexString(qp.qpn) + " to "
                        + mgid + ": the group has max_mcast_qp_attach " + MAX_QP_ATTACH + " QPs already");
            }
        } else if (byAddress.size() >= MAX_GROUPS) {
            throw new VerbsException(VerbsException.ENOMEM, "attach QP 0x" + Integer.toHexString(qp.qpn) + " to "
                    + mgid + ": the device has max_mcast_grp " + MAX_GROUPS + " groups already");
        }
        if (totalAttached >= MAX_TOTAL_QP_ATTACH) {
            throw new VerbsException(VerbsException.ENOMEM, "attach: max_total_mcast_qp_attach "
                    + MAX_TOTAL_QP_ATTACH + " reached");
        }
        if (g == null) {
            try {
                link.joinGroup(address);
            } catch (final RuntimeException e) {
                throw new VerbsException(VerbsException.EINVAL, "attach QP 0x" + Integer.toHexString(qp.qpn) + " to "
                        + mgid + ": " + e.getMessage(), e);
            }
            g = new Group(mgid, address, Peer.of(address, link.localAddress().getPort()));
            byAddress.put(address, g);
        }
        g.members = Arrays.copyOf(g.members, g.members.length + 1);
        g.members[g.members.length - 1] = qp;
        totalAttached++;
    }

    void detach(final TransportQp qp, final Gid mgid) {
        final InetAddress address = mgid.toInetAddress();
        final Group g = byAddress.get(address);
        if (g == null) {
            return;
        }
        final TransportQp[] m = g.members;
        for (int i = 0; i < m.length; i++) {
            if (m[i] == qp) {
                final TransportQp[] rest = new TransportQp[m.length - 1];
                System.arraycopy(m, 0, rest, 0, i);
                System.arraycopy(m, i + 1, rest, i, m.length - i - 1);
                g.members = rest;
                totalAttached--;
                break;
            }
        }
        if (g.members.length == 0) {
            byAddress.remove(address);
            link.leaveGroup(address);
        }
    }
}
