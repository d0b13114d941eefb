package io.jhca.lab;

import java.lang.reflect.Method;
import java.nio.channels.SocketChannel;

import jnr.ffi.byref.IntByReference;

/**
 * TCP_USER_TIMEOUT (Linux tcp.h, RFC 5482) on a TCP channel: how long bytes this side sent may stay unacknowledged
 * before the kernel fails the connection. Keepalive does not probe while such bytes are in flight, and TCP's own
 * retransmissions give up only after about 15 minutes (tcp_retries2), so a peer whose host vanished just after we
 * wrote would otherwise hold the next read that long. The JDK has no option for it; it is set through the channel's
 * file descriptor.
 */
final class TcpUserTimeout {
    /** netinet/in.h IPPROTO_TCP, linux/tcp.h TCP_USER_TIMEOUT. */
    private static final int IPPROTO_TCP = 6;
    private static final int TCP_USER_TIMEOUT = 18;

    private TcpUserTimeout() {
    }

    /**
     * Sets the timeout to {@code millis}; false, changing nothing, where it cannot be set (not Linux, or the JVM was
     * started without {@code --add-opens java.base/sun.nio.ch=ALL-UNNAMED}, which the file descriptor needs).
     */
    static boolean set(SocketChannel ch, int millis) {
        if (!System.getProperty("os.name", "").startsWith("Linux")) {
            return false;
        }
        try {
            Method getFdVal = Class.forName("sun.nio.ch.SelChImpl").getMethod("getFDVal");
            getFdVal.setAccessible(true);
            int fd = (Integer) getFdVal.invoke(ch);
            return Libc.get().setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, new IntByReference(millis), 4) == 0;
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return false;
        }
    }
}
