package io.jhca.tests.vfio.guest;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The guest kernel's log, read with dmesg(1), for the faults the IOMMU reports. */
final class KernelLog {

    private KernelLog() {
    }

    static List<String> lines() throws IOException, InterruptedException {
        Process p = new ProcessBuilder("dmesg").redirectErrorStream(true).start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(10, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException("dmesg did not finish");
        }
        return List.of(new String(out, StandardCharsets.UTF_8).split("\n"));
    }

    /**
     * Waits up to {@code timeoutMillis} for a log line, after the first {@code skip} lines, that contains every one
     * of {@code parts}; returns it, or null. (The IOMMU's fault interrupt is handled asynchronously.)
     */
    static String await(final int skip, final long timeoutMillis, final String... parts)
            throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (true) {
            List<String> all = lines();
            for (String line : all.subList(Math.min(skip, all.size()), all.size())) {
                boolean match = true;
                for (String part : parts) {
                    match &= line.contains(part);
                }
                if (match) {
                    return line.trim();
                }
            }
            if (System.nanoTime() > deadline) {
                return null;
            }
            Thread.sleep(100);
        }
    }
}
