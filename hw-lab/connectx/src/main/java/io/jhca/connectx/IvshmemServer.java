package io.jhca.connectx;

import java.lang.ref.Reference;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLongArray;

import jnr.ffi.Memory;
import jnr.ffi.Pointer;

/**
 * The server side of QEMU's ivshmem-doorbell ({@code -chardev socket,path=SOCK -device
 * ivshmem-doorbell,chardev=...,vectors=N}), so that the function's BAR0 file becomes the guest's BAR2 and the model
 * can raise the guest's MSI-X vectors. Protocol (QEMU docs/specs/ivshmem-spec.rst): for each client that connects,
 * 8-byte little-endian integers, some with one file descriptor passed alongside (SCM_RIGHTS): the protocol version
 * 0; the client's ID; -1 with the shared-memory fd; then the client's own ID once per vector, each with that
 * vector's eventfd. A write to a client's vector-N eventfd makes QEMU raise its MSI-X vector N.
 *
 * <p>Clients are not told of each other: the model is the only one that interrupts them, and a guest's doorbell
 * register has no peer to ring. The server listens from construction on (QEMU connects while it creates the
 * device, so it must be listening before QEMU starts) and answers each client on an accept thread, which also drops
 * a client whose connection ended (QEMU exited); {@link #close} stops it, closes every fd it made and removes the
 * socket.
 */
public final class IvshmemServer implements AutoCloseable {

    /** Vectors per client at most: a bound on the eventfds one client costs, far above the EQs the model has. */
    public static final int MAX_VECTORS = 64;
    /** Clients connected at once at most (one QEMU is the usual; a rebooted one replaces the first). */
    public static final int MAX_CLIENTS = 16;
    private static final long PROTOCOL_VERSION = 0;

    private static final SocketLibC C = SocketLibC.INSTANCE;
    private static final jnr.ffi.Runtime RT = SocketLibC.runtime();

    private final Path socket;
    private final int vectors;
    private final int listenFd;
    private final int shmFd;
    private final List<Client> clients = new CopyOnWriteArrayList<>();
    private final AtomicLongArray raised;
    private final Pointer one = Memory.allocateDirect(RT, 8, true);
    private final Thread acceptor;
    private volatile boolean running = true;
    private volatile String error;
    /** Clients served so far; the next one's ID (IDs are 16 bits in the doorbell register: they wrap there). */
    private volatile int served;
    /** Held while a client's eventfds are written or closed: a closed fd number can be reused at once. */
    private final Object fdLock = new Object();

    private record Client(int id, int socketFd, int[] eventfds) {
    }

    /**
     * Listens on {@code socket} (a stale socket file there is replaced) and serves {@code sharedMemory} (opened
     * read-write) with {@code vectors} interrupt vectors per client.
     */
    public IvshmemServer(Path socket, Path sharedMemory, int vectors) {
        if (vectors < 1 || vectors > MAX_VECTORS) {
            throw new IllegalArgumentException("ivshmem vectors must be 1.." + MAX_VECTORS + ", not " + vectors);
        }
        byte[] path = socket.toString().getBytes(StandardCharsets.UTF_8);
        if (path.length >= SocketLibC.SUN_PATH_BYTES) {
            throw new IllegalArgumentException("socket path " + socket + " is longer than a unix socket address ("
                    + (SocketLibC.SUN_PATH_BYTES - 1) + " bytes)");
        }
        this.socket = socket;
        this.vectors = vectors;
        this.raised = new AtomicLongArray(vectors);
        one.putLong(0, 1);
        this.shmFd = C.open(sharedMemory.toString(), SocketLibC.O_RDWR | SocketLibC.O_CLOEXEC, 0);
        if (shmFd < 0) {
            throw new IllegalArgumentException("cannot open " + sharedMemory + ": " + SocketLibC.describe(
                    SocketLibC.errno()));
        }
        int fd = C.socket(SocketLibC.AF_UNIX, SocketLibC.SOCK_STREAM | SocketLibC.SOCK_CLOEXEC, 0);
        if (fd < 0) {
            C.close(shmFd);
            throw new IllegalStateException("socket(AF_UNIX): " + SocketLibC.describe(SocketLibC.errno()));
        }
        this.listenFd = fd;
        C.unlink(socket.toString()); // a socket left by an earlier run: bind would fail with EADDRINUSE
        Pointer addr = sockaddr(path);
        if (C.bind(fd, addr, (int) addr.size()) < 0 || C.listen(fd, 4) < 0) {
            int errno = SocketLibC.errno();
            C.close(fd);
            C.close(shmFd);
            throw new IllegalStateException("cannot listen on " + socket + ": " + SocketLibC.describe(errno));
        }
        this.acceptor = new Thread(this::acceptLoop, "jhca-ivshmem-server");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** struct sockaddr_un (sys/un.h): sa_family_t sun_family, char sun_path[108]. */
    static Pointer sockaddr(byte[] path) {
        Pointer a = Memory.allocateDirect(RT, 2 + SocketLibC.SUN_PATH_BYTES, true);
        a.putShort(0, (short) SocketLibC.AF_UNIX);
        a.put(2, path, 0, path.length);
        return a;
    }

    /**
     * Accepts clients and watches the connected ones: a client whose socket reaches end of file or fails (QEMU
     * exited) is dropped and its eventfds closed. QEMU never sends anything to the server.
     */
    private void acceptLoop() {
        Pointer pfds = Memory.allocateDirect(RT, 8L * (1 + MAX_CLIENTS), true); // struct pollfd {int; short; short}
        Pointer sink = Memory.allocateDirect(RT, 64, true);
        while (running) {
            List<Client> watched = List.copyOf(clients);
            pfds.putInt(0, listenFd);
            pfds.putShort(4, SocketLibC.POLLIN);
            pfds.putShort(6, (short) 0);
            for (int i = 0; i < watched.size(); i++) {
                pfds.putInt(8L * (i + 1), watched.get(i).socketFd());
                pfds.putShort(8L * (i + 1) + 4, SocketLibC.POLLIN);
                pfds.putShort(8L * (i + 1) + 6, (short) 0);
            }
            // poll with a timeout: close() cannot wake a thread blocked in accept on every kernel
            int n = C.poll(pfds, 1 + watched.size(), 100);
            if (n <= 0 || !running) {
                continue;
            }
            for (int i = 0; i < watched.size(); i++) {
                if (pfds.getShort(8L * (i + 1) + 6) != 0 && C.read(watched.get(i).socketFd(), sink, 64) <= 0) {
                    drop(watched.get(i));
                }
            }
            if (pfds.getShort(6) == 0) {
                continue;
            }
            int fd = C.accept4(listenFd, null, null, SocketLibC.SOCK_CLOEXEC);
            if (fd < 0) {
                continue;
            }
            if (clients.size() >= MAX_CLIENTS) {
                error = "more than " + MAX_CLIENTS + " clients at once: refused one";
                C.close(fd);
                continue;
            }
            try {
                serve(fd);
            } catch (RuntimeException e) {
                error = "client " + (served - 1) + ": " + e.getMessage();
                System.err.println("jhca ivshmem server " + socket + ": " + error);
            }
        }
    }

    /** The setup messages for a new client; its eventfds are kept (and written to) until {@link #close}. */
    private void serve(int fd) {
        int id = served++ & 0xffff;
        int[] eventfds = new int[vectors];
        java.util.Arrays.fill(eventfds, -1);
        try {
            for (int v = 0; v < vectors; v++) {
                eventfds[v] = C.eventfd(0, SocketLibC.EFD_CLOEXEC);
                if (eventfds[v] < 0) {
                    throw new IllegalStateException("eventfd: " + SocketLibC.describe(SocketLibC.errno()));
                }
            }
            send(fd, PROTOCOL_VERSION, -1);
            send(fd, id, -1);
            send(fd, -1, shmFd);
            for (int v = 0; v < vectors; v++) {
                send(fd, id, eventfds[v]); // the client's own ID: vector v of its own, in order
            }
        } catch (RuntimeException e) {
            C.close(fd);
            for (int e2 : eventfds) {
                if (e2 >= 0) {
                    C.close(e2);
                }
            }
            throw e;
        }
        clients.add(new Client(id, fd, eventfds));
        if (!running) {
            closeClients(); // close() ran while this client was being set up
        }
    }

    /** One message: {@code value} as 8 bytes little-endian, with {@code passFd} alongside unless it is -1. */
    static void send(int socketFd, long value, int passFd) {
        // struct iovec {void *base; size_t len}; struct msghdr (x86-64): name 0, namelen 8, iov 16, iovlen 24,
        // control 32, controllen 40, flags 48; struct cmsghdr {size_t len; int level; int type} + data at 16
        Pointer data = Memory.allocateDirect(RT, 8, true);
        data.putLong(0, value); // native order, which on x86-64 is the protocol's little-endian
        Pointer iov = Memory.allocateDirect(RT, 16, true);
        iov.putAddress(0, data.address());
        iov.putLong(8, 8);
        Pointer msg = Memory.allocateDirect(RT, 56, true);
        msg.putAddress(16, iov.address());
        msg.putLong(24, 1);
        Pointer control = null;
        if (passFd >= 0) {
            control = Memory.allocateDirect(RT, 24, true); // CMSG_SPACE(sizeof(int))
            control.putLong(0, 20); // CMSG_LEN(sizeof(int))
            control.putInt(8, SocketLibC.SOL_SOCKET);
            control.putInt(12, SocketLibC.SCM_RIGHTS);
            control.putInt(16, passFd);
            msg.putAddress(32, control.address());
            msg.putLong(40, 24);
        }
        long n;
        do {
            n = C.sendmsg(socketFd, msg, SocketLibC.MSG_NOSIGNAL);
        } while (n < 0 && SocketLibC.errno() == SocketLibC.EINTR);
        if (n != 8) {
            throw new IllegalStateException("sendmsg of " + value + (passFd >= 0 ? " with fd " + passFd : "")
                    + (n < 0 ? " failed: " + SocketLibC.describe(SocketLibC.errno()) : " sent " + n + " bytes"));
        }
        // msg names the others by address only: keep them from being freed before sendmsg returned
        Reference.reachabilityFence(data);
        Reference.reachabilityFence(iov);
        Reference.reachabilityFence(control);
    }

    /**
     * Raises MSI-X vector {@code vector} of every client (the model's interrupt hook): one eventfd write each. A
     * vector beyond those the clients have is counted nowhere and ignored, as an MSI-X message to a vector the
     * function does not have would be.
     */
    public void raise(int vector) {
        if (vector < 0 || vector >= vectors) {
            return;
        }
        raised.incrementAndGet(vector);
        synchronized (fdLock) {
            for (Client c : clients) {
                C.write(c.eventfds[vector], one, 8); // a full counter (EAGAIN) still has a raise pending
            }
        }
    }

    /** Times {@link #raise} was called for {@code vector}. */
    public long raised(int vector) {
        return vector >= 0 && vector < vectors ? raised.get(vector) : 0;
    }

    /** Clients connected now (QEMU instances that have not gone away). */
    public int clients() {
        return clients.size();
    }

    /** Clients served since the start, gone or not. */
    public int served() {
        return served;
    }

    /** The last client setup that failed, or null. */
    public String error() {
        return error;
    }

    public Path socket() {
        return socket;
    }

    public int vectors() {
        return vectors;
    }

    private void drop(Client c) {
        synchronized (fdLock) {
            if (clients.remove(c)) {
                C.close(c.socketFd);
                for (int e : c.eventfds) {
                    C.close(e);
                }
            }
        }
    }

    private void closeClients() {
        for (Client c : clients) {
            drop(c);
        }
    }

    /**
     * Stops accepting, closes every client's socket and eventfds and the shared-memory fd, removes the socket. Whoever
     * calls {@link #raise} must have stopped before (the model process stops its firmware thread first).
     */
    @Override
    public void close() {
        if (!running) {
            return;
        }
        running = false;
        try {
            acceptor.join(5_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        closeClients();
        C.close(listenFd);
        C.close(shmFd);
        C.unlink(socket.toString());
    }
}
