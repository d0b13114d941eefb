package io.jhca.rxe.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Helpers shared by the wire tests: hex, external tools, a minimal pcap reader. */
final class TestSupport {

    /** Debian's python with scapy; the pyenv python on PATH has none (project conventions). */
    static final String PYTHON = "/usr/bin/python3";

    private TestSupport() {
    }

    static byte[] hex(final String text) {
        return HexFormat.of().parseHex(text.replaceAll("[\\s_]", ""));
    }

    static String hex(final byte[] bytes, final int offset, final int length) {
        return HexFormat.of().formatHex(bytes, offset, offset + length);
    }

    static int ipv4(final int a, final int b, final int c, final int d) {
        return a << 24 | b << 16 | c << 8 | d;
    }

    record Result(int exitCode, String stdout, String stderr) {
    }

    /** Runs a command, failing the test with the named package if the program is missing. */
    static Result run(final String packageHint, final List<String> command, final long timeoutSeconds)
            throws IOException, InterruptedException {
        final Path program = Path.of(command.get(0));
        if (program.isAbsolute() ? !Files.isExecutable(program) : findOnPath(command.get(0)) == null) {
            fail(command.get(0) + " not found: install the '" + packageHint + "' package (the project's test "
                    + "command installs it)");
        }
        final Process p = new ProcessBuilder(command).start();
        final byte[][] out = new byte[2][];
        final Thread errReader = new Thread(() -> out[1] = readAll(p.getErrorStream()));
        errReader.start();
        out[0] = readAll(p.getInputStream());
        if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail(String.join(" ", command) + " did not finish in " + timeoutSeconds + " s");
        }
        errReader.join();
        return new Result(p.exitValue(), new String(out[0], StandardCharsets.UTF_8),
                new String(out[1], StandardCharsets.UTF_8));
    }

    private static byte[] readAll(final InputStream in) {
        try (in) {
            return in.readAllBytes();
        } catch (final IOException e) {
            return new byte[0];
        }
    }

    static Path findOnPath(final String name) {
        for (final String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            final Path p = Path.of(dir, name);
            if (Files.isExecutable(p)) {
                return p;
            }
        }
        return null;
    }

    /** Fails clearly unless Debian's python3 can import scapy's RoCE layer. */
    static void requireScapy() throws IOException, InterruptedException {
        final Result r = run("python3-scapy", List.of(PYTHON, "-c", "import scapy.contrib.roce"), 60);
        if (r.exitCode() != 0) {
            fail(PYTHON + " cannot import scapy.contrib.roce: install the 'python3-scapy' package\n" + r.stderr());
        }
    }

    static Path resource(final String name) {
        final URL url = TestSupport.class.getResource(name);
        if (url == null) {
            fail("test resource missing: " + name);
        }
        try {
            return Path.of(url.toURI());
        } catch (final URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Records of a classic pcap file (either byte order, micro- or nanosecond magic). */
    static List<byte[]> readPcap(final Path file, final int expectedLinkType) throws IOException {
        final ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        final int magic = b.getInt(0);
        if (magic != 0xA1B2C3D4 && magic != 0xA1B23C4D) {
            b.order(ByteOrder.BIG_ENDIAN);
            if (b.getInt(0) != 0xA1B2C3D4 && b.getInt(0) != 0xA1B23C4D) {
                fail("not a classic pcap file: " + file);
            }
        }
        assertEquals(expectedLinkType, b.getInt(20), "pcap link type");
        final List<byte[]> records = new ArrayList<>();
        int at = 24;
        while (at + 16 <= b.limit()) {
            final int incl = b.getInt(at + 8);
            final byte[] data = new byte[incl];
            b.get(at + 16, data);
            records.add(data);
            at += 16 + incl;
        }
        assertEquals(b.limit(), at, "pcap file ends inside a record");
        return records;
    }
}
