package io.jhca.tests.twojvm;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** What the namespace tests run outside the JVM: iproute2 commands, and child JVMs inside a namespace. */
final class Shell {
    private Shell() {
    }

    static boolean isRoot() throws IOException, InterruptedException {
        Process p = new ProcessBuilder("id", "-u").start();
        String uid = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII).trim();
        p.waitFor();
        return "0".equals(uid);
    }

    /** Runs {@code cmd}; fails the test, naming it, unless it exits 0. */
    static void must(String... cmd) throws Exception {
        assertEquals(0, run(cmd), "command failed: " + String.join(" ", cmd));
    }

    /** Runs {@code cmd} for at most 30 s; its exit status (-1 if it did not end), its output printed on a failure. */
    static int run(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return -1;
        }
        if (p.exitValue() != 0) {
            System.err.println(String.join(" ", cmd) + ": " + out.trim());
        }
        return p.exitValue();
    }

    /** Runs {@code cmd} for at most 30 s and returns its output ("" if it failed or did not end). */
    static String output(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return "";
        }
        return p.exitValue() == 0 ? out : "";
    }

    /**
     * {@code main} with {@code args} in a child JVM on this JVM's class path, inside namespace {@code ns}, with its
     * own rxe link file {@code links} (and no JHCA_RXE_DEVICES); its output to {@code log}.
     */
    static Process childJvm(String ns, Path links, Path log, Class<?> main, List<String> args) throws IOException {
        return childJvm(ns, links, log, List.of(), main, args);
    }

    /** {@link #childJvm(String, Path, Path, Class, List)} with {@code jvmOptions} (e.g. system properties). */
    static Process childJvm(String ns, Path links, Path log, List<String> jvmOptions, Class<?> main, List<String> args)
            throws IOException {
        return childJvm(ns, List.of(), links, log, jvmOptions, main, args);
    }

    /** {@link #childJvm(String, Path, Path, List, Class, List)} started through {@code wrapper} (e.g. setpriv). */
    static Process childJvm(String ns, List<String> wrapper, Path links, Path log, List<String> jvmOptions,
            Class<?> main, List<String> args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", ns));
        cmd.addAll(wrapper);
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(TwoJvmTest.opens());
        cmd.addAll(jvmOptions);
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(main.getName());
        cmd.addAll(args);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().remove("JHCA_RXE_DEVICES");
        pb.environment().put("JHCA_RXE_LINKS", links.toString());
        return pb.start();
    }
}
