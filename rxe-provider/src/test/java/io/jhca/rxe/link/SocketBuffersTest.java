package io.jhca.rxe.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.channels.DatagramChannel;
import java.nio.file.Files;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Socket buffers past net.core.rmem_max / wmem_max for a privileged process; what was granted, as asked. */
@Timeout(30)
class SocketBuffersTest {

    private static int sysctl(final String name) throws IOException {
        return Integer.parseInt(Files.readString(Path.of("/proc/sys/net/core/" + name)).trim());
    }

    @Test
    void aPrivilegedProcessGetsMoreThanTheCap() throws IOException {
        assumeTrue("root".equals(System.getProperty("user.name")), "SO_RCVBUFFORCE needs CAP_NET_ADMIN");
        final int asked = Math.max(sysctl("rmem_max"), sysctl("wmem_max")) + (1 << 20); // past both caps
        try (DatagramChannel ch = DatagramChannel.open(StandardProtocolFamily.INET)) {
            assertEquals(asked, SocketBuffers.apply(ch, asked));
            assertEquals(asked, ch.getOption(StandardSocketOptions.SO_RCVBUF));
            assertEquals(asked, ch.getOption(StandardSocketOptions.SO_SNDBUF));
        }
    }

    @Test
    void aSizeUnderTheCapIsGrantedExactly() throws IOException {
        try (DatagramChannel ch = DatagramChannel.open(StandardProtocolFamily.INET)) {
            assertEquals(64 * 1024, SocketBuffers.apply(ch, 64 * 1024));
            assertEquals(64 * 1024, ch.getOption(StandardSocketOptions.SO_SNDBUF));
        }
    }
}
