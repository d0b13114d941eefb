package io.jhca.testkit;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs a probe's {@code main} in a child JVM with the test's class path and the module opens the data path needs,
 * for what a test cannot do in its own JVM: a flag such as {@code -Xint} for the whole run, or a case that would
 * crash the JVM if the code under test were wrong. The output goes to a file, not a pipe, so a hung child cannot
 * block the reader; a child still running at the timeout is killed and the test fails with what it printed.
 */
public final class ChildJvm {

    /** How the child ended and everything it printed (stdout and stderr, interleaved). */
    public record Result(int exitValue, String output) {

        /** The lines that start with {@code prefix}. */
        public List<String> lines(String prefix) {
            return output.lines().filter(l -> l.startsWith(prefix)).toList();
        }

        /** The first {@code n} lines, for a failure message. */
        public String head(int n) {
            return String.join("\n", output.lines().limit(n).toList());
        }
    }

    private ChildJvm() {
    }

    /**
     * @param timeout how long the child may run
     * @param jvmArgs options before the class name, e.g. {@code -Xint}
     * @param main    the class whose {@code main} runs
     * @param args    its arguments
     */
    public static Result run(Duration timeout, List<String> jvmArgs, Class<?> main, String... args)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED", "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
                "--add-opens", "java.base/java.nio=ALL-UNNAMED"));
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.startsWith("--enable-native-access") || a.startsWith("--sun-misc-unsafe-memory-access")) {
                command.add(a);   // the test JVM's answer to newer JDKs' warnings (the parent pom's jdk23 profile)
            }
        }
        command.addAll(jvmArgs);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        command.addAll(List.of(args));
        Path log = Files.createTempFile("jhca-child-" + main.getSimpleName() + "-", ".log");
        Process p = null;
        try {
            p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            boolean exited = p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
            String out = Files.readString(log, StandardCharsets.UTF_8);
            assertTrue(exited, main.getSimpleName() + " " + String.join(" ", args) + " still running after " + timeout
                    + ":\n" + out);
            return new Result(p.exitValue(), out);
        } finally {
            if (p != null && p.isAlive()) {
                p.destroyForcibly();
            }
            Files.deleteIfExists(log);
        }
    }
}
