package io.jhca.rxe.link;

import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.channels.DatagramChannel;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Socket buffers a RoCE link can stream through. A bandwidth test keeps up to 128 packets of 4 KiB in flight per
 * QP (rxe's RXE_MAX_UNACKED_PSNS), and a receiver that falls behind for a moment must hold them: with
 * SO_RCVBUF capped by net.core.rmem_max at the 208 KiB many kernels default to, a write-bw run between two devices of
 * this host lost and resent 88000 packets and the plain UDP stream beside it stalled. So the size is asked for with
 * SO_RCVBUFFORCE / SO_SNDBUFFORCE, which pass the cap for a process with CAP_NET_ADMIN (socket(7)), and with
 * SO_RCVBUF / SO_SNDBUF otherwise; what the kernel granted is read back, and a cap is reported once per process.
 */
public final class SocketBuffers {

    private static final AtomicBoolean WARNED = new AtomicBoolean();

    private SocketBuffers() {
    }

    /**
     * Asks for {@code bytes} of receive and send buffer on {@code ch} and returns the receive buffer granted, in the
     * units it was asked for (the kernel books twice that, socket(7); the JDK reports half of what it books).
     */
    public static int apply(final DatagramChannel ch, final int bytes) throws IOException {
        final int fd = NativeSocket.fd(ch);
        if (NativeSocket.trySetInt(fd, NativeSocket.SOL_SOCKET, NativeSocket.SO_RCVBUFFORCE, bytes) != 0) {
            ch.setOption(StandardSocketOptions.SO_RCVBUF, bytes);
        }
        if (NativeSocket.trySetInt(fd, NativeSocket.SOL_SOCKET, NativeSocket.SO_SNDBUFFORCE, bytes) != 0) {
            ch.setOption(StandardSocketOptions.SO_SNDBUF, bytes);
        }
        final int granted = ch.getOption(StandardSocketOptions.SO_RCVBUF);
        if (granted < bytes && WARNED.compareAndSet(false, true)) {
            System.err.println("jhca: a UDP receive buffer of " + granted / 1024 + " KiB, not the " + bytes / 1024
                    + " KiB asked for (net.core.rmem_max caps it for a process without CAP_NET_ADMIN); bursts larger"
                    + " than that are lost and resent. Raise it: sysctl -w net.core.rmem_max=" + bytes
                    + " net.core.wmem_max=" + bytes);
        }
        return granted;
    }
}
