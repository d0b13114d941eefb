package io.jhca.mlx5;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * Asks HotSpot's JIT to compile postSend's chain loop ({@code Mlx5Qp.driverPostCommonChain}) as a method of its own,
 * never inlined into its callers, as {@code -XX:CompileCommand=dontinline,...} would, but without a flag the
 * application has to know about.
 *
 * <p>Why: inlined into an application's posting loop (postSend, then the chain loop), C2 keeps more values live than
 * there are registers and spills in the loop; a chain of 8 WRs then takes 1.5-1.65x rdma-core's C time against
 * 1.15-1.27x compiled apart ({@code Mlx5PairedRun postSend/rdma-core 8}, tests/benchmarks/HISTORY.md). Java has no
 * portable way for a library to keep one of its methods out of its callers, so this uses HotSpot's own: a compiler
 * directive added at run time through the DiagnosticCommand MBean ({@code jcmd <pid> Compiler.directives_add} does
 * the same), read by every compilation that starts after it.
 *
 * <p>It is a hint and never an error: on a JVM without the MBean or the command, nothing happens. An application
 * that already has compiler directives of its own ({@code -XX:CompilerDirectivesFile}, {@code jcmd}) keeps them
 * alone: a directive matching every method, added on top, would take their place. Such an application can add the
 * line of {@link #DIRECTIVE} to its own. {@code -Djhca.mlx5.compileChainApart=false} turns it off.
 */
final class CompiledApart {

    /** The method kept apart, in the directive's pattern syntax. */
    static final String METHOD = "io/jhca/mlx5/Mlx5Qp.driverPostCommonChain";

    /** The directive: in the compilation of any method, do not inline {@link #METHOD}. */
    static final String DIRECTIVE = "[{ match: \"*.*\", inline: \"-" + METHOD + "\" }]";

    static final String PROPERTY = "jhca.mlx5.compileChainApart";

    /** What {@link #request} found or did, for tools to report. */
    enum Outcome {
        ADDED("yes"),
        TURNED_OFF("no: -D" + PROPERTY + "=false"),
        OTHER_DIRECTIVES("no: the JVM has compiler directives of its own"),
        UNAVAILABLE("no: this JVM takes no compiler directives at run time");

        private final String text;

        Outcome(String text) {
            this.text = text;
        }

        String describe() {
            return text;
        }
    }

    private static final Pattern DIRECTIVE_HEADER = Pattern.compile("^Directive:(.*)$", Pattern.MULTILINE);
    private static final String DIAGNOSTIC_COMMAND = "com.sun.management:type=DiagnosticCommand";
    private static final String[] SIGNATURE = {String[].class.getName()};

    private static Outcome outcome;
    private static boolean starting;

    private CompiledApart() {
    }

    /** Adds the directive once per JVM (later calls return the first call's outcome; a call waits for one running). */
    static synchronized Outcome request() {
        if (outcome == null) {
            outcome = add();
        }
        return outcome;
    }

    /**
     * Starts {@link #request} on a daemon thread, so that its cost (the platform MBean server's start, 250-350 ms in a
     * fresh JVM) overlaps a device's bring-up; the first QP's class initialization then waits for it, if it is
     * still running, before any caller of the chain loop can be compiled.
     */
    static void requestSoon() {
        synchronized (CompiledApart.class) {
            if (outcome != null || starting) {
                return;
            }
            starting = true;
        }
        Thread t = new Thread(CompiledApart::request, "jhca-mlx5-compile-apart");
        t.setDaemon(true);
        t.start();
    }

    private static Outcome add() {
        if (!Boolean.parseBoolean(System.getProperty(PROPERTY, "true"))) {
            return Outcome.TURNED_OFF;
        }
        try {
            MBeanServer server = ManagementFactory.getPlatformMBeanServer();
            ObjectName dcmd = new ObjectName(DIAGNOSTIC_COMMAND);
            String stack = String.valueOf(server.invoke(dcmd, "compilerDirectivesPrint", new Object[] {new String[0]},
                    SIGNATURE));
            if (stack.contains(METHOD)) {
                return Outcome.ADDED;   // another class loader's copy of this class added it already
            }
            if (!onlyDefault(stack)) {
                return Outcome.OTHER_DIRECTIVES;
            }
            Path file = Files.createTempFile("jhca-compile-", ".json");
            try {
                Files.write(file, DIRECTIVE.getBytes(StandardCharsets.US_ASCII));
                String reply = String.valueOf(server.invoke(dcmd, "compilerDirectivesAdd",
                        new Object[] {new String[] {file.toString()}}, SIGNATURE));
                return reply.contains("1 compiler directives added") ? Outcome.ADDED : Outcome.UNAVAILABLE;
            } finally {
                Files.deleteIfExists(file);
            }
        } catch (JMException | RuntimeException | LinkageError | java.io.IOException e) {
            return Outcome.UNAVAILABLE;   // not HotSpot, no java.management, no temp directory: compiled as the JIT likes
        }
    }

    /**
     * Whether the printed directive stack ({@code Compiler.directives_print}) holds HotSpot's default directive and
     * nothing else.
     */
    static boolean onlyDefault(String printedStack) {
        Matcher m = DIRECTIVE_HEADER.matcher(printedStack);
        int directives = 0;
        boolean sawDefault = false;
        while (m.find()) {
            directives++;
            sawDefault |= m.group(1).trim().equals("(default)");
        }
        return directives == 1 && sawDefault;
    }
}
