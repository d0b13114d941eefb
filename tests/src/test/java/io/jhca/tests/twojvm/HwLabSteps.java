package io.jhca.tests.twojvm;

import io.jhca.lab.HwLab;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Several {@code hwlab} command lines, one after the other, in one JVM (a JVM per command would cost seconds each
 * on a small machine). Arguments: command lines separated by {@code --}; each runs with {@link HwLab#execute} and
 * is followed by a line {@code == exit RC: ARGS}. Two step forms coordinate with another process:
 * {@code await FILE} waits (up to 60 s) until FILE exists, and {@code flag-on-listen FILE ARGS...} runs ARGS and
 * creates FILE as soon as the command reports that it is listening (a server ready for its client).
 */
public final class HwLabSteps {
    /** The flag file of the step running now, or null. */
    private static volatile Path flag;

    private HwLabSteps() {
    }

    /**
     * A child JVM in network namespace {@code ns}, with its own link file {@code links}, running {@code steps} (command
     * lines) one after the other; its output goes to {@code log}.
     */
    static Process start(String ns, Path links, Path log, List<List<String>> steps) throws IOException {
        List<String> args = new ArrayList<>();
        for (List<String> s : steps) {
            if (!args.isEmpty()) {
                args.add("--");
            }
            args.addAll(s);
        }
        return Shell.childJvm(ns, links, log, HwLabSteps.class, args);
    }

    /** How many times {@code what} occurs in {@code log}. */
    static int count(String log, String what) {
        int n = 0;
        for (int i = log.indexOf(what); i >= 0; i = log.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }

    public static void main(String[] args) throws Exception {
        List<List<String>> steps = new ArrayList<>();
        List<String> cur = new ArrayList<>();
        for (String a : args) {
            if (a.equals("--")) {
                steps.add(cur);
                cur = new ArrayList<>();
            } else {
                cur.add(a);
            }
        }
        steps.add(cur);
        PrintStream stdout = System.out;
        System.setErr(new PrintStream(new ListeningTee(stdout), true, StandardCharsets.UTF_8));
        // a perf server says it listens on its output, rc-pingpong on stderr: both are watched
        PrintWriter out = new PrintWriter(new PrintStream(new ListeningTee(stdout), true, StandardCharsets.UTF_8), true);
        for (List<String> step : steps) {
            if (step.size() == 2 && step.get(0).equals("await")) {
                Path f = Path.of(step.get(1));
                long end = System.nanoTime() + 60_000_000_000L;
                while (!Files.exists(f) && System.nanoTime() < end) {
                    Thread.sleep(20);
                }
                out.println("== exit " + (Files.exists(f) ? 0 : 1) + ": " + String.join(" ", step));
                continue;
            }
            List<String> cmd = step;
            if (step.size() > 2 && step.get(0).equals("flag-on-listen")) {
                flag = Path.of(step.get(1));
                cmd = step.subList(2, step.size());
            }
            int rc = HwLab.execute(cmd.toArray(new String[0]), out, out);
            flag = null;
            out.println("== exit " + rc + ": " + String.join(" ", cmd));
        }
        out.flush();
        System.exit(0);
    }

    /** Passes its bytes on to stdout (one log) and creates the step's flag file once a line says "listening". */
    private static final class ListeningTee extends OutputStream {
        private final PrintStream out;
        private final ByteArrayOutputStream line = new ByteArrayOutputStream();

        ListeningTee(PrintStream out) {
            this.out = out;
        }

        @Override
        public synchronized void write(int b) {
            out.write(b);
            if (b != '\n') {
                line.write(b);
                return;
            }
            out.flush();
            Path f = flag;
            if (f != null && line.toString(StandardCharsets.UTF_8).contains("listening") && !Files.exists(f)) {
                try {
                    Files.createFile(f);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
            line.reset();
        }

        @Override
        public void flush() {
            out.flush();
        }
    }
}
