package io.jhca.tests.wire;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * A live capture on the loopback interface with tshark ({@code tshark -i lo -f <filter> -w <file>}), written as
 * classic pcap so both tshark and scapy read it. Starts only once tshark says it is capturing; stops with
 * SIGTERM, on which tshark flushes and closes the file.
 */
final class Capture implements AutoCloseable {
    private final Process process;
    private final StringBuffer log = new StringBuffer();
    private final CountDownLatch capturing = new CountDownLatch(1);
    private final Path file;

    private Capture(Path file, String filter) throws IOException {
        this.file = file;
        List<String> cmd = List.of(Tools.tshark(), "-i", "lo", "-f", filter, "-F", "pcap", "-w", file.toString());
        process = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    log.append(line).append('\n');
                    if (line.contains("Capturing on")) {
                        capturing.countDown();
                    }
                }
            } catch (IOException ignored) {
                // the process ended
            }
        }, "tshark-output");
        reader.setDaemon(true);
        reader.start();
    }

    /** Starts capturing UDP to or from port 4791 matching {@code filter}; fails clearly if tshark cannot. */
    static Capture start(Path file, String filter) throws IOException, InterruptedException {
        Capture c = new Capture(file, filter);
        if (!c.capturing.await(20, TimeUnit.SECONDS)) {
            c.process.destroyForcibly();
            fail("tshark did not start capturing on lo within 20 s (needs CAP_NET_RAW/CAP_NET_ADMIN or membership"
                    + " of the 'wireshark' group); its output:\n" + c.log);
        }
        // dumpcap has opened the interface once tshark reports it; give the kernel filter a moment to attach.
        Thread.sleep(300);
        return c;
    }

    Path file() {
        return file;
    }

    /** Stops the capture and waits until the file is complete. */
    void stop() throws InterruptedException {
        if (!process.isAlive()) {
            fail("tshark ended before it was stopped; its output:\n" + log);
        }
        Thread.sleep(300); // packets still in flight on lo
        process.destroy();
        if (!process.waitFor(20, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            fail("tshark did not stop within 20 s of SIGTERM; its output:\n" + log);
        }
    }

    String log() {
        return log.toString();
    }

    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
        }
    }
}
