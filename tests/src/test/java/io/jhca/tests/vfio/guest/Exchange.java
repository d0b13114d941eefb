package io.jhca.tests.vfio.guest;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.Properties;
import java.util.function.BooleanSupplier;

/**
 * A file-based rendezvous between the host test and a program in the vfio guest, through a directory both see (the
 * harness's job directory, shared with the guest over 9p): each step is a properties file that appears whole
 * (written under another name, then renamed) and is waited for by polling. No network is involved.
 */
public final class Exchange {

    private final Path dir;
    private final long timeoutMillis;

    public Exchange(Path dir, long timeoutMillis) {
        this.dir = dir;
        this.timeoutMillis = timeoutMillis;
    }

    /** Publishes step {@code name} with {@code values}. */
    public void put(String name, Map<String, ?> values) {
        Properties p = new Properties();
        values.forEach((k, v) -> p.setProperty(k, String.valueOf(v)));
        Path tmp = dir.resolve(name + ".tmp");
        try {
            try (Writer w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
                p.store(w, null);
            }
            Files.move(tmp, dir.resolve(name + ".properties"), StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot publish step " + name + " in " + dir, e);
        }
    }

    /** Waits for step {@code name}; throws after the timeout, naming the step. */
    public Properties await(String name) throws InterruptedException {
        return await(name, () -> false);
    }

    /**
     * Waits for step {@code name}; throws after the timeout or as soon as {@code abandoned} says the other side is
     * gone (or the other side published "guest-failed"), naming the step.
     */
    public Properties await(String name, BooleanSupplier abandoned) throws InterruptedException {
        Path f = dir.resolve(name + ".properties");
        Path failed = dir.resolve("guest-failed.properties");
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (!Files.exists(f)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("step '" + name + "' did not appear in " + dir + " within "
                        + timeoutMillis + " ms");
            }
            if (abandoned.getAsBoolean() || Files.exists(failed)) {
                throw new IllegalStateException("waiting for step '" + name + "': the other side stopped");
            }
            Thread.sleep(20);
        }
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(f, StandardCharsets.UTF_8)) {
            p.load(r);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read step " + name, e);
        }
        return p;
    }
}
