package io.jhca.tests.wire;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * A live capture of RoCEv2 traffic of one host on the loopback interface with tshark
 * ({@code tshark -i lo -f <filter> -P -l -w <file>}), written as classic pcap so both tshark and scapy read it.
 * <p>
 * tshark's "Capturing on" does not mean the kernel already hands packets to the capture: on a loaded machine the
 * first packets after it were missing. So {@link #start} returns only once the capture has seen one of its own
 * probe datagrams, sent from {@link #PROBE_HOST} (which the filter matches) until tshark prints it. {@link #stop}
 * does the same from {@link #CLOSING_PROBE_HOST}: an opening probe that tshark prints late (one sent before the
 * capture was live, or several sent on a loaded machine) must not pass for the closing one, which would stop the
 * capture while the test's packets still wait in the kernel's buffer for dumpcap. Whoever reads the file leaves the
 * probes out ({@link #PROBE_HOSTS}: {@link Packet#tsharkArgs}, icrc_check.py --exclude-host). Stops with SIGTERM,
 * on which tshark flushes and closes the file.
 */
final class Capture implements AutoCloseable {
    /** Source of the opening probes; no device of the tests uses it. */
    static final String PROBE_HOST = "127.0.0.43";
    /** Source of the closing probes; no device of the tests uses it. */
    static final String CLOSING_PROBE_HOST = "127.0.0.143";
    /** Both probe sources, for whoever reads the file. */
    static final List<String> PROBE_HOSTS = List.of(PROBE_HOST, CLOSING_PROBE_HOST);
    /** The probe's ports: from 4791 so the filter matches it, to discard (9) where nothing listens. */
    private static final int PROBE_SRC_PORT = 4791;
    private static final int PROBE_DST_PORT = 9;
    private static final long PROBE_INTERVAL_MS = 20;
    private static final int WAIT_SECONDS = 20;

    private final Process process;
    private final StringBuffer log = new StringBuffer();
    private final CountDownLatch capturing = new CountDownLatch(1);
    /** Probe lines tshark printed so far, by source (its reader thread counts, the test thread waits on this object). */
    private int probesSeen;
    private int closingProbesSeen;
    private final Path file;
    private String host;

    private Capture(Path file, String filter) throws IOException {
        this.file = file;
        // -P -l: a summary line per packet, flushed at once, while writing the file; the probe shows up there.
        List<String> cmd = List.of(Tools.tshark(), "-i", "lo", "-f", filter, "-P", "-l", "-F", "pcap", "-w", file.toString());
        process = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    log.append(line).append('\n');
                    if (line.contains("Capturing on")) {
                        capturing.countDown();
                    } else if (line.contains(CLOSING_PROBE_HOST)) {
                        synchronized (this) {
                            closingProbesSeen++;
                            notifyAll();
                        }
                    } else if (line.contains(PROBE_HOST)) {
                        synchronized (this) {
                            probesSeen++;
                            notifyAll();
                        }
                    }
                }
            } catch (IOException ignored) {
                // the process ended
            }
        }, "tshark-output");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Starts capturing UDP to or from port 4791 of {@code host} and returns once the capture provably sees packets;
     * fails clearly if tshark cannot capture or never sees a probe.
     */
    static Capture start(Path file, String host) throws IOException, InterruptedException {
        Capture c = new Capture(file, "udp port 4791 and host " + host);
        try {
            if (!c.capturing.await(WAIT_SECONDS, TimeUnit.SECONDS)) {
                fail("tshark did not start capturing on lo within " + WAIT_SECONDS + " s (needs CAP_NET_RAW/CAP_NET_ADMIN"
                        + " or membership of the 'wireshark' group); its output:\n" + c.log);
            }
            c.host = host;
            int sent = c.probeUntilSeen(false);
            System.out.println("capture live after " + sent + " probe(s) from " + PROBE_HOST);
            return c;
        } catch (Throwable e) {
            c.close();
            throw e;
        }
    }

    /**
     * Sends opening or closing probes until tshark prints one more of that kind than it had printed before; returns
     * how many were sent.
     */
    private int probeUntilSeen(boolean closing) throws IOException, InterruptedException {
        int before;
        synchronized (this) {
            before = seen(closing);
        }
        String from = closing ? CLOSING_PROBE_HOST : PROBE_HOST;
        ByteBuffer probe = ByteBuffer.wrap("jhca capture probe".getBytes(StandardCharsets.US_ASCII));
        InetSocketAddress to = new InetSocketAddress(host, PROBE_DST_PORT);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        int sent = 0;
        try (DatagramChannel ch = DatagramChannel.open()) {
            try {
                ch.bind(new InetSocketAddress(from, PROBE_SRC_PORT));
            } catch (BindException e) {
                fail("cannot bind the capture probe to " + from + ":" + PROBE_SRC_PORT + " (" + e.getMessage()
                        + "); something else uses that address");
            }
            while (true) {
                ch.send(probe.rewind(), to);
                sent++;
                if (awaitProbes(closing, before + 1, PROBE_INTERVAL_MS)) {
                    return sent;
                }
                if (!process.isAlive()) {
                    fail("tshark ended while waiting for a probe from " + from + " (" + sent + " sent); its output:\n"
                            + log);
                }
                if (System.nanoTime() - deadline > 0) {
                    fail("the capture did not see any of " + sent + " probes from " + from + " to " + host + ":"
                            + PROBE_DST_PORT + " within " + WAIT_SECONDS + " s; tshark's output:\n" + log);
                }
            }
        }
    }

    private int seen(boolean closing) {
        return closing ? closingProbesSeen : probesSeen;
    }

    private synchronized boolean awaitProbes(boolean closing, int count, long millis) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (seen(closing) < count) {
            long left = end - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        return true;
    }

    Path file() {
        return file;
    }

    /** Stops the capture and waits until the file is complete. */
    void stop() throws InterruptedException {
        if (!process.isAlive()) {
            fail("tshark ended before it was stopped; its output:\n" + log);
        }
        // a closing probe: lo hands a sent packet to the capture before sendto returns, so once tshark prints a probe
        // sent after the test's packets, every one of them is in the file (no guess at what is still in flight)
        try {
            int sent = probeUntilSeen(true);
            synchronized (this) {
                System.out.println("capture closed after " + sent + " probe(s) from " + CLOSING_PROBE_HOST
                        + "; tshark printed " + probesSeen + " from " + PROBE_HOST);
            }
        } catch (IOException e) {
            fail("closing probe: " + e.getMessage());
        }
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
