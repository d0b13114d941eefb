package io.jhca.tests.wire;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.fail;

/** The outside oracles: tshark and /usr/bin/python3 with scapy, failing clearly (naming the package) when absent. */
final class Tools {
    /** Debian's python with scapy; a pyenv python on PATH may lack it. */
    static final String PYTHON = "/usr/bin/python3";

    private Tools() {
    }

    /** The tshark binary, or a failure naming the Debian package. */
    static String tshark() {
        String path = System.getenv().getOrDefault("PATH", "/usr/bin:/bin");
        for (String dir : path.split(File.pathSeparator)) {
            File f = new File(dir, "tshark");
            if (f.canExecute()) {
                return f.getPath();
            }
        }
        fail("tshark is not installed (needed to capture and decode RoCEv2 traffic): install the Debian package 'tshark'");
        return null;
    }

    /** Fails naming the Debian packages unless /usr/bin/python3 can import scapy.contrib.roce. */
    static void requireScapy() {
        if (!new File(PYTHON).canExecute()) {
            fail(PYTHON + " is missing: install the Debian packages 'python3' and 'python3-scapy'");
        }
        Result r = run(List.of(PYTHON, "-c", "import scapy.contrib.roce"), 30);
        if (r.exit != 0) {
            fail("scapy (scapy.contrib.roce) is not importable by " + PYTHON + ": install the Debian package 'python3-scapy'\n" + r.output);
        }
    }

    record Result(int exit, String output) {
    }

    /** Runs a command to completion (stdout and stderr merged), failing if it takes longer than {@code seconds}. */
    static Result run(List<String> cmd, int seconds) {
        try {
            Path out = Files.createTempFile("jhca-tool", ".out");
            try {
                Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(out.toFile()).start();
                if (!p.waitFor(seconds, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                    fail(cmd + " did not finish within " + seconds + " s");
                }
                return new Result(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
            } finally {
                Files.deleteIfExists(out);
            }
        } catch (IOException e) {
            throw new AssertionError("cannot run " + cmd + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** The non-empty lines of a text. */
    static List<String> lines(String text) {
        List<String> out = new ArrayList<>();
        for (String l : text.split("\n")) {
            // keep trailing tabs: tshark -T fields ends a line with empty fields
            String t = l.endsWith("\r") ? l.substring(0, l.length() - 1) : l;
            if (!t.isBlank()) {
                out.add(t.stripLeading());
            }
        }
        return out;
    }
}
