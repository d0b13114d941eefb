package io.jhca.lab;

import org.junit.jupiter.api.Test;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class Inet6TextTest {
    /** Vectors printed by glibc's inet_ntop(AF_INET6) (through /usr/bin/python3 socket.inet_ntop, Debian 12). */
    private static final String[][] GLIBC = {
        {"00000000000000000000ffff7f000001", "::ffff:127.0.0.1"},
        {"00000000000000000000ffff0a140001", "::ffff:10.20.0.1"},
        {"fe800000000000000200ff00fe000001", "fe80::200:ff00:fe00:1"},
        {"00000000000000000000000000000000", "::"},
        {"00000000000000000000000000000001", "::1"},
        {"00000000000000000000000001020304", "::1.2.3.4"},
        {"20010db8000000000001000000000001", "2001:db8::1:0:0:1"},
        {"20010db8000000010000000000000000", "2001:db8:0:1::"},
        {"000000000000000000000000ffff0000", "::255.255.0.0"},
        {"0001000000000000000000000000ffff", "1::ffff"},
        {"20010db80000000000000000ffff0102", "2001:db8::ffff:102"},
        {"fe80000000000000000000000000ffff", "fe80::ffff"},
        {"00000000000000000001000000000000", "::1:0:0:0"},
        {"000000000000000000000000000a0b0c", "::0.10.11.12"},
        {"ffffffffffffffffffffffffffffffff", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
        {"0000000000000000ffff000001020304", "::ffff:0:102:304"},
    };

    @Test
    void matchesGlibcVectors() {
        for (String[] v : GLIBC) {
            assertEquals(v[1], Inet6Text.format(HexFormat.of().parseHex(v[0])), v[0]);
        }
    }

    @Test
    void rejectsWrongLength() {
        assertThrows(IllegalArgumentException.class, () -> Inet6Text.format(new byte[4]));
    }

    /** 300 random addresses with runs of zero words, formatted by the C library via python, must agree. */
    @Test
    void matchesLibcOnRandomAddresses() throws Exception {
        File py = new File("/usr/bin/python3");
        assertTrue(py.canExecute(), "this test needs /usr/bin/python3 (Debian package python3) as the inet_ntop oracle");
        Random r = new Random(42);
        List<byte[]> addrs = new ArrayList<>();
        StringBuilder input = new StringBuilder();
        for (int i = 0; i < 300; i++) {
            byte[] a = new byte[16];
            for (int w = 0; w < 8; w++) {
                int kind = r.nextInt(4);
                int v = kind == 0 ? 0 : kind == 1 ? r.nextInt(16) : kind == 2 ? 0xffff : r.nextInt(0x10000);
                a[2 * w] = (byte) (v >> 8);
                a[2 * w + 1] = (byte) v;
            }
            addrs.add(a);
            input.append(HexFormat.of().formatHex(a)).append('\n');
        }
        java.nio.file.Path in = java.nio.file.Files.createTempFile("inet6", ".txt");
        java.nio.file.Files.writeString(in, input, StandardCharsets.US_ASCII);
        Process p = new ProcessBuilder(py.getPath(), "-c",
                "import sys,socket\nfor l in sys.stdin:\n print(socket.inet_ntop(socket.AF_INET6, bytes.fromhex(l.strip())))")
                .redirectInput(in.toFile()).redirectErrorStream(true).start();
        String[] lines = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).split("\n");
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        java.nio.file.Files.delete(in);
        assertEquals(addrs.size(), lines.length, String.join("\n", lines));
        for (int i = 0; i < addrs.size(); i++) {
            assertEquals(lines[i], Inet6Text.format(addrs.get(i)), HexFormat.of().formatHex(addrs.get(i)));
        }
    }
}
