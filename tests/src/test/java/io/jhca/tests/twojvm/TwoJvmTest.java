package io.jhca.tests.twojvm;

import io.jhca.tests.harness.Payloads;
import io.jhca.verbs.Context;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.Verbs;
import io.jhca.verbs.WcFlags;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * RDMA between two JVMs: this one opens rxe0 (127.0.0.1); a child JVM, started with the same java binary, class
 * path and --add-opens flags, opens its own device on 127.0.0.52. They exchange QPN, PSN, GID, rkey and address
 * over TCP on 127.0.0.1, then the child SENDs 100 messages and RDMA WRITEs 1 MiB, and this side RDMA WRITEs
 * 256 KiB back. Every byte is checked on the side that receives it.
 */
class TwoJvmTest {
    private static final String CHILD_DEVICE = "jvm2";
    private static final String CHILD_ADDRESS = "127.0.0.52";

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES) // safety net only
    void sendAndWriteBetweenTwoJvms(@TempDir Path dir) throws Exception {
        exchangeWithChild(dir, TwoJvmTest::open, InetAddress.getLoopbackAddress(), List.of(), CHILD_DEVICE, CHILD_ADDRESS);
    }

    /**
     * The whole exchange with a child JVM started as {@code prefix + java ...} (a prefix such as
     * {@code ip netns exec NS} runs it in another network namespace); the parent listens for it on
     * {@code controlHost} and runs its side on the context {@code parent} opens.
     */
    static void exchangeWithChild(Path dir, Supplier<Context> parent, InetAddress controlHost, List<String> prefix,
                                  String childDevice, String childAddress) throws Exception {
        Path childLog = dir.resolve("child.log");
        try (ServerSocket server = new ServerSocket()) {
            server.bind(new InetSocketAddress(controlHost, 0));
            server.setSoTimeout(30_000);
            Process child = startChild(prefix, server.getLocalPort(), controlHost, childDevice, childAddress, childLog);
            try (Socket s = server.accept(); Side side = new Side(parent.get())) {
                s.setSoTimeout(60_000);
                BufferedReader in = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.US_ASCII));
                PrintWriter out = new PrintWriter(s.getOutputStream(), true, StandardCharsets.US_ASCII);
                Endpoint remote = Endpoint.parse(in.readLine());
                for (int i = 0; i < Side.MESSAGES; i++) {
                    side.postRecv(i, (long) i * Side.MAX_MESSAGE, Side.MAX_MESSAGE);
                }
                side.postRecv(Side.MESSAGES, 0, 0);
                side.connect(remote);
                out.println(side.endpoint().line());

                for (int i = 0; i < Side.MESSAGES; i++) {
                    WorkCompletion wc = side.await("receive " + i + " from the child", 30_000);
                    assertEquals(WcOpcode.RECV, wc.opcode(), wc.toString());
                    assertEquals(i, wc.wrId(), "receives complete in order: " + wc);
                    assertEquals(Side.size(i), wc.byteLen(), "byte_len of message " + i + ": " + wc);
                    assertEquals(side.qp.qpn(), wc.qpNum());
                    Payloads.assertPayload(side.mem.buffer(), i * Side.MAX_MESSAGE, Side.size(i), i, "message " + i + " from the child");
                }
                WorkCompletion imm = side.await("the child's SEND_WITH_IMM after its WRITE", 30_000);
                assertEquals(Side.MESSAGES, imm.wrId(), imm.toString());
                assertTrue((imm.wcFlags() & WcFlags.WITH_IMM) != 0, imm.toString());
                assertEquals(Side.IMM_WRITE_DONE, imm.immData(), imm.toString());
                assertEquals(0, imm.byteLen(), imm.toString());
                // RC ordering: the WRITE before the SEND has landed when the SEND's receive completes.
                Payloads.assertCrc(side.mem.buffer(), Side.WRITE_OFF, Side.WRITE_LEN, 4242, "the child's 1 MiB RDMA WRITE");

                int len = 256 << 10;
                Payloads.fill(side.mem.buffer(), 3 << 20, len, 777);
                side.post(new SendWr().wrId(2000).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                        .sge(side.mr, 3 << 20, len).rdma(remote.addr() + (1 << 20), remote.rkey()));
                WorkCompletion w = side.await("this side's RDMA WRITE to the child", 30_000);
                assertEquals(WcOpcode.RDMA_WRITE, w.opcode(), w.toString());
                out.println("WROTE " + Long.toHexString(Payloads.crcOf(777, len)));
                String done = in.readLine();
                assertEquals("DONE ok", done, "the child's verdict on the 256 KiB WRITE");
            } catch (Throwable t) {
                child.destroyForcibly();
                throw new AssertionError(t.getMessage() + "\n--- child JVM output ---\n" + readLog(childLog), t);
            }
            if (!child.waitFor(30, TimeUnit.SECONDS)) {
                child.destroyForcibly();
                fail("the child JVM did not exit\n--- child JVM output ---\n" + readLog(childLog));
            }
            assertEquals(0, child.exitValue(), "child JVM exit status\n--- child JVM output ---\n" + readLog(childLog));
        }
    }

    private static Context open() {
        return Verbs.open("rxe0");
    }

    /** The same java, class path and --add-opens flags as this JVM; the child's device from a system property. */
    private static Process startChild(List<String> prefix, int port, InetAddress controlHost, String device,
                                      String address, Path log) throws IOException {
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(prefix);
        cmd.add(java);
        cmd.addAll(opens());
        cmd.add("-Djhca.rxe.devices=" + device + "=" + address);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(RemotePeerMain.class.getName());
        cmd.add(Integer.toString(port));
        cmd.add(device);
        cmd.add(controlHost.getHostAddress());
        return new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    /**
     * The --add-opens flags this JVM was started with (the parent pom's jhca.jvm.opens, passed by surefire's
     * argLine), in either spelling the JVM reports them: "--add-opens=x" or "--add-opens" "x".
     */
    static List<String> opens() {
        List<String> in = ManagementFactory.getRuntimeMXBean().getInputArguments();
        List<String> out = new ArrayList<>();
        for (int i = 0; i < in.size(); i++) {
            String a = in.get(i);
            if (a.startsWith("--add-opens=")) {
                out.add(a);
            } else if (a.equals("--add-opens") && i + 1 < in.size()) {
                out.add(a);
                out.add(in.get(++i));
            }
        }
        if (out.isEmpty()) {
            fail("this JVM was started without --add-opens flags (jhca.jvm.opens of the parent pom); arguments: " + in);
        }
        return out;
    }

    private static String readLog(Path log) {
        try {
            return new File(log.toString()).exists() ? Files.readString(log) : "(no output)";
        } catch (IOException e) {
            return "(cannot read " + log + ": " + e + ")";
        }
    }
}
