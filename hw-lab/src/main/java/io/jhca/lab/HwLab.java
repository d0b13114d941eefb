package io.jhca.lab;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;

/**
 * {@code hwlab}: jhca's counterparts of rdma-core's and perftest's tools, on every device of every provider.
 * Exit codes: 0 success, 1 a runtime failure (with a one-line message), 2 a usage error (with the usage).
 */
@Command(name = "hwlab", mixinStandardHelpOptions = true, version = "hwlab (jhca) 0.1.0",
        description = "jhca lab tools: devices, devinfo, rc-pingpong, perftest-style benchmarks, counters, PCI (vfio) binding and a multicast feed.",
        subcommands = {CommandLine.HelpCommand.class, DevicesCommand.class, DevinfoCommand.class,
                RcPingpongCommand.class, PerfCommand.class, StatsCommand.class, PciCommand.class,
                LinkCommand.class, RpingCommand.class, CmMessagesCommand.class,
                SrqPingpongCommand.class, McastCommand.class})
public final class HwLab implements Runnable {
    public static final int EXIT_FAILURE = 1;
    public static final int EXIT_USAGE = 2;

    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "Missing required subcommand");
    }

    public static void main(String[] args) {
        System.exit(execute(args, new PrintWriter(System.out, true), new PrintWriter(System.err, true)));
    }

    /** Runs a command line with the given streams; returns the exit code. */
    public static int execute(String[] args, PrintWriter out, PrintWriter err) {
        CommandLine cl = new CommandLine(new HwLab());
        cl.setOut(out);
        cl.setErr(err);
        cl.setExecutionExceptionHandler((ex, cmd, parseResult) -> {
            cmd.getErr().println("hwlab " + cmd.getCommandName() + ": " + describe(ex));
            if (Boolean.getBoolean("hwlab.trace")) {
                ex.printStackTrace(cmd.getErr());
            }
            cmd.getErr().flush();
            return EXIT_FAILURE;
        });
        int rc = cl.execute(args);
        out.flush();
        err.flush();
        return rc;
    }

    /** The message of an exception and of its causes, without stack traces. */
    static String describe(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            String m = c.getMessage();
            String text = m == null ? c.getClass().getSimpleName() : m;
            if (sb.indexOf(text) < 0) {
                sb.append(sb.length() == 0 ? "" : ": ").append(text);
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return sb.toString();
    }
}
