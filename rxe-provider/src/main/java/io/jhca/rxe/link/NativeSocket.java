package io.jhca.rxe.link;

import java.lang.reflect.Method;
import java.nio.channels.DatagramChannel;

import jnr.ffi.LastError;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.IgnoreError;
import jnr.ffi.annotations.In;
import jnr.ffi.annotations.SaveError;
import jnr.ffi.byref.IntByReference;

/**
 * The socket options the JDK 17 API lacks, set with setsockopt(2) through jnr-ffi on a channel's file
 * descriptor. The descriptor comes from {@code sun.nio.ch.SelChImpl#getFDVal}, which needs
 * {@code --add-opens java.base/sun.nio.ch=ALL-UNNAMED}. Control path, except {@link #recvmmsg} and {@link #recvmsg},
 * the calls of the receive path, {@link #sendmmsg} and {@link #sendmsg}, which send a held ACK with the request that
 * releases it, and the calls of {@link KernelWait} (primitive arguments only: jnr-ffi calls them without allocating).
 */
final class NativeSocket {

    /** IPPROTO_IP (netinet/in.h). */
    static final int IPPROTO_IP = 0;
    /** IP_MTU_DISCOVER (linux/in.h). */
    static final int IP_MTU_DISCOVER = 10;
    /** IP_PMTUDISC_DO: always set DF; with an unconnected socket Linux then sends IPv4 ID 0 (rocev2.md §2.4). */
    static final int IP_PMTUDISC_DO = 2;
    /** SOL_UDP (= IPPROTO_UDP). */
    static final int SOL_UDP = 17;
    /** UDP_NO_CHECK6_RX (linux/udp.h): accept UDPv6 datagrams with checksum 0, as rxe sends them. */
    static final int UDP_NO_CHECK6_RX = 102;
    /** UDP_SEGMENT (linux/udp.h, Linux 4.18): a cmsg giving the segment size of a GSO send (u16). */
    static final int UDP_SEGMENT = 103;
    /** UDP_GRO (linux/udp.h, Linux 5.0): receive a GSO datagram whole, with its segment size as a cmsg (int). */
    static final int UDP_GRO = 104;
    /** struct cmsghdr (bits/socket.h, LP64): cmsg_len (size_t) at 0, cmsg_level at 8, cmsg_type at 12, data at 16. */
    static final int CMSG_LEVEL = 8;
    static final int CMSG_TYPE = 12;
    static final int CMSG_DATA = 16;

    /** SOL_SOCKET (asm-generic/socket.h). */
    static final int SOL_SOCKET = 1;
    /** SO_SNDBUFFORCE, SO_RCVBUFFORCE (asm-generic/socket.h): SO_SNDBUF/SO_RCVBUF past wmem_max/rmem_max, with CAP_NET_ADMIN. */
    static final int SO_SNDBUFFORCE = 32;
    static final int SO_RCVBUFFORCE = 33;

    /** IP_MULTICAST_ALL (linux/in.h): 0 = a socket takes only the groups it joined itself. */
    static final int IP_MULTICAST_ALL = 49;
    /** IPPROTO_IPV6 (netinet/in.h). */
    static final int IPPROTO_IPV6 = 41;
    /** IPV6_MULTICAST_ALL (linux/in6.h), IPv6's IP_MULTICAST_ALL. */
    static final int IPV6_MULTICAST_ALL = 29;

    /**
     * The libc binding; public only because jnr-ffi generates its implementation in another class loader. Its
     * methods take at most five arguments: a six-argument one (recvfrom) crashed a test JVM with SIGSEGV inside
     * jnr-ffi 2.2.17's stub on its first, interpreted call (not reproduced in isolation).
     */
    public interface LibC {
        @SaveError
        int setsockopt(int fd, int level, int optname, @In IntByReference optval, int optlen);

        String strerror(int errnum);

        /** recvmmsg(2); the pointers are native addresses, the timeout pointer is 0 (none). */
        @IgnoreError
        int recvmmsg(int fd, long msgvec, int vlen, int flags, long timeout);

        /** recvmsg(2); {@code msg} is the native address of a struct msghdr. */
        @IgnoreError
        long recvmsg(int fd, long msg, int flags);

        /** sendmsg(2); {@code msg} is the native address of a struct msghdr. */
        @IgnoreError
        long sendmsg(int fd, long msg, int flags);

        /** sendmmsg(2); {@code msgvec} is a native address. */
        @IgnoreError
        int sendmmsg(int fd, long msgvec, int vlen, int flags);

        /** eventfd(2): a counter a thread can wait on with poll and another can bump with write. */
        @SaveError
        int eventfd(int initval, int flags);

        /** ppoll(2); {@code fds} and {@code timeout} are native addresses, {@code sigmask} 0 (unchanged). */
        @IgnoreError
        int ppoll(long fds, long nfds, long timeout, long sigmask);

        @IgnoreError
        long read(int fd, long buf, long count);

        @IgnoreError
        long write(int fd, long buf, long count);

        @IgnoreError
        int close(int fd);
    }

    private static volatile LibC libc;

    private NativeSocket() {
    }

    static LibC libc() {
        LibC l = libc;
        if (l == null) {
            synchronized (NativeSocket.class) {
                l = libc;
                if (l == null) {
                    libc = l = LibraryLoader.create(LibC.class).load("c");
                }
            }
        }
        return l;
    }

    /**
     * recvmmsg(fd, msgvec, vlen, flags, NULL): the datagrams received, or -1 (errno not kept: EAGAIN when none was
     * waiting; any other error is the transport's loss, as a failed receive always was).
     */
    static int recvmmsg(final int fd, final long msgvec, final int vlen, final int flags) {
        return libc().recvmmsg(fd, msgvec, vlen, flags, 0L);
    }

    /**
     * recvmsg(fd, msg, flags): the bytes received, or -1 (errno not kept, as {@link #recvmmsg}).
     */
    static long recvmsg(final int fd, final long msg, final int flags) {
        return libc().recvmsg(fd, msg, flags);
    }

    /** sendmsg(fd, msg, flags): the bytes handed to the network, or -1 (errno not kept, as {@link #sendmmsg}). */
    static long sendmsg(final int fd, final long msg, final int flags) {
        return libc().sendmsg(fd, msg, flags);
    }

    /**
     * sendmmsg(fd, msgvec, vlen, flags): the datagrams handed to the network, counted from the first, or -1 if the
     * first was refused (errno not kept: EAGAIN when the socket buffer is full, or a routing error).
     */
    static int sendmmsg(final int fd, final long msgvec, final int vlen, final int flags) {
        return libc().sendmmsg(fd, msgvec, vlen, flags);
    }

    /** The kernel file descriptor of a channel. */
    static int fd(final DatagramChannel channel) {
        try {
            final Class<?> selChImpl = Class.forName("sun.nio.ch.SelChImpl");
            final Method getFdVal = selChImpl.getMethod("getFDVal");
            getFdVal.setAccessible(true);
            return (Integer) getFdVal.invoke(channel);
        } catch (final ReflectiveOperationException | RuntimeException e) {
            throw new IllegalStateException("cannot read the socket's file descriptor (sun.nio.ch.SelChImpl#getFDVal);"
                    + " run the JVM with --add-opens java.base/sun.nio.ch=ALL-UNNAMED", e);
        }
    }

    /** setsockopt(fd, level, name, &value, 4); 0, or the errno it failed with (EPERM: not privileged). */
    static int trySetInt(final int fd, final int level, final int name, final int value) {
        final LibC c = libc();
        return c.setsockopt(fd, level, name, new IntByReference(value), 4) == 0 ? 0
                : LastError.getLastError(Runtime.getRuntime(c));
    }

    /** setsockopt(fd, level, name, &value, 4); throws with errno on failure. */
    static void setInt(final int fd, final int level, final int name, final int value, final String what) {
        final LibC c = libc();
        final int rc = c.setsockopt(fd, level, name, new IntByReference(value), 4);
        if (rc != 0) {
            final int errno = LastError.getLastError(Runtime.getRuntime(c));
            throw new IllegalStateException("setsockopt(" + what + ") failed: errno " + errno + " (" + c.strerror(errno) + ")");
        }
    }
}
