package io.jhca.rxe.link;

import java.net.InetSocketAddress;

/**
 * Opens the {@link Link} of an rxe device bound to {@code local} (the device's address, UDP port 4791). The default
 * is {@link UdpLink#open}; a device given another opener moves its packets through that link instead, e.g. one
 * that replays captured packets from a peer address the host does not have, without sockets or privileges.
 */
@FunctionalInterface
public interface LinkOpener {

    Link open(InetSocketAddress local);
}
