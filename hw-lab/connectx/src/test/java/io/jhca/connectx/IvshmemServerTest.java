package io.jhca.connectx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import jnr.ffi.Memory;
import jnr.ffi.Pointer;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The ivshmem server speaks QEMU's protocol (docs/specs/ivshmem-spec.rst) to a client made here with recvmsg, as
 * QEMU's ivshmem-doorbell would receive it: version 0, its ID, -1 with the shared-memory fd, its ID once per vector
 * with that vector's eventfd; a raise of vector N signals exactly eventfd N.
 */
class IvshmemServerTest {

    private static final SocketLibC C = SocketLibC.INSTANCE;

    @TempDir
    Path dir;

    private final List<Integer> fds = new ArrayList<>();

    /** One received message: the 8-byte value and the fd passed alongside, or -1. */
    private record Msg(long value, int fd) {
    }

    @AfterEach
    void closeFds() {
        for (int fd : fds) {
            C.close(fd);
        }
    }

    @Test
    void aClientGetsTheProtocolTheSharedMemoryAndOneEventfdPerVector() throws Exception {
        long seed = new Random().nextLong();
        long word = new Random(seed).nextLong();
        Path shm = sharedFile(word);
        try (IvshmemServer server = new IvshmemServer(dir.resolve("cx.sock"), shm, 3)) {
            int sock = connect(server.socket());
            assertEquals(new Msg(0, -1), receive(sock), "protocol version");
            Msg id = receive(sock);
            assertEquals(-1, id.fd());
            assertTrue(id.value() >= 0 && id.value() <= 0xffff, "client ID " + id.value());
            Msg shmMsg = receive(sock);
            assertEquals(-1, shmMsg.value());
            assertTrue(shmMsg.fd() >= 0, "the shared-memory fd comes with -1");
            Pointer buf = Memory.allocateDirect(SocketLibC.runtime(), 8, true);
            assertEquals(8, C.pread(shmMsg.fd(), buf, 8, 4096));
            assertEquals(word, buf.getLong(0), "the fd is the shared-memory file (seed " + seed + ")");
            int[] vectors = new int[3];
            for (int v = 0; v < 3; v++) {
                Msg m = receive(sock);
                assertEquals(id.value(), m.value(), "vector " + v + " comes with the client's own ID");
                assertTrue(m.fd() >= 0, "vector " + v + " comes with an eventfd");
                vectors[v] = m.fd();
            }
            waitForClients(server, 1);

            server.raise(1);
            server.raise(1);
            server.raise(7); // a vector the clients do not have: ignored
            assertEquals(2, server.raised(1));
            assertEquals(0, server.raised(0));
            assertTrue(!readable(vectors[0]) && !readable(vectors[2]), "only vector 1 was raised");
            assertTrue(readable(vectors[1]));
            assertEquals(8, C.read(vectors[1], buf, 8));
            assertEquals(2, buf.getLong(0), "two raises before the read are one wake-up of count 2");
            assertTrue(!readable(vectors[1]));
        }
        assertTrue(!Files.exists(dir.resolve("cx.sock")), "close removes the socket");
    }

    @Test
    void aClientThatHangsUpIsDroppedAndANewOneGetsTheNextId() throws Exception {
        try (IvshmemServer server = new IvshmemServer(dir.resolve("cx.sock"), sharedFile(1), 2)) {
            int first = connect(server.socket());
            List<Msg> setup = new ArrayList<>();
            for (int i = 0; i < 5; i++) {
                setup.add(receive(first));
            }
            waitForClients(server, 1);
            C.close(first); // QEMU exits
            fds.remove(Integer.valueOf(first));
            waitForClients(server, 0);
            server.raise(0); // nobody to signal, and no write to a closed fd
            int second = connect(server.socket());
            assertEquals(new Msg(0, -1), receive(second));
            assertEquals(setup.get(1).value() + 1, receive(second).value(), "IDs are not reused");
            waitForClients(server, 1);
            assertEquals(2, server.served());
        }
    }

    @Test
    void badArgumentsAreRefusedByName() throws Exception {
        Path shm = sharedFile(0);
        assertThrows(IllegalArgumentException.class, () -> new IvshmemServer(dir.resolve("s"), shm, 0));
        String longName = "x".repeat(120);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new IvshmemServer(dir.resolve(longName), shm, 1));
        assertTrue(e.getMessage().contains("longer than a unix socket address"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> new IvshmemServer(dir.resolve("s"), dir.resolve("missing"), 1));
        assertTrue(e.getMessage().contains("missing"), e.getMessage());
    }

    private Path sharedFile(long word) throws IOException {
        Path shm = dir.resolve("bar");
        try (RandomAccessFile f = new RandomAccessFile(shm.toFile(), "rw")) {
            f.setLength(1 << 16);
            f.seek(4096);
            f.writeLong(Long.reverseBytes(word)); // little-endian, as the pread above reads it on x86-64
        }
        return shm;
    }

    private static void waitForClients(IvshmemServer server, int n) throws InterruptedException {
        // the server registers a client right after its last message and drops one at its next poll: ms at most
        for (int i = 0; i < 500 && server.clients() != n; i++) {
            Thread.sleep(10);
        }
        assertEquals(n, server.clients());
    }

    private int connect(Path socket) {
        int fd = C.socket(SocketLibC.AF_UNIX, SocketLibC.SOCK_STREAM | SocketLibC.SOCK_CLOEXEC, 0);
        assertTrue(fd >= 0);
        fds.add(fd);
        Pointer addr = IvshmemServer.sockaddr(socket.toString().getBytes(StandardCharsets.UTF_8));
        assertEquals(0, C.connect(fd, addr, (int) addr.size()), () -> SocketLibC.describe(SocketLibC.errno()));
        return fd;
    }

    /** recvmsg of one 8-byte message with room for one passed fd (CMSG_SPACE(sizeof(int)) = 24). */
    private Msg receive(int sock) {
        jnr.ffi.Runtime rt = SocketLibC.runtime();
        Pointer data = Memory.allocateDirect(rt, 8, true);
        Pointer iov = Memory.allocateDirect(rt, 16, true);
        iov.putAddress(0, data.address());
        iov.putLong(8, 8);
        Pointer control = Memory.allocateDirect(rt, 24, true);
        Pointer msg = Memory.allocateDirect(rt, 56, true);
        msg.putAddress(16, iov.address());
        msg.putLong(24, 1);
        msg.putAddress(32, control.address());
        msg.putLong(40, 24);
        long n = C.recvmsg(sock, msg, 0);
        java.lang.ref.Reference.reachabilityFence(iov); // named by address only
        assertEquals(8, n, () -> "recvmsg: " + SocketLibC.describe(SocketLibC.errno()));
        int fd = -1;
        if (msg.getLong(40) >= 20) {
            assertEquals(SocketLibC.SOL_SOCKET, control.getInt(8));
            assertEquals(SocketLibC.SCM_RIGHTS, control.getInt(12));
            fd = control.getInt(16);
            fds.add(fd);
        }
        return new Msg(data.getLong(0), fd);
    }

    private static boolean readable(int fd) {
        Pointer pfd = Memory.allocateDirect(SocketLibC.runtime(), 8, true);
        pfd.putInt(0, fd);
        pfd.putShort(4, SocketLibC.POLLIN);
        return C.poll(pfd, 1, 0) == 1;
    }
}
