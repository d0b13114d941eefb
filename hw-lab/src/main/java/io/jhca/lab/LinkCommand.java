package io.jhca.lab;

import io.jhca.rxe.RxeDeviceConfig;
import io.jhca.rxe.RxeLinks;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code hwlab link add|delete|show}: rxe devices on network interfaces, as iproute2's {@code rdma link} creates
 * them in the kernel. They are kept in the user's link file ({@link RxeLinks}), which the rxe provider reads
 * whenever it lists or opens devices; refusals exit 1 with what is wrong and what to do.
 */
@Command(name = "link", mixinStandardHelpOptions = true,
        description = "rxe devices on network interfaces, as rdma link: add NAME netdev IFACE, delete NAME, show.",
        subcommands = {LinkCommand.AddCommand.class, LinkCommand.DeleteCommand.class, LinkCommand.ShowCommand.class})
public final class LinkCommand implements Runnable {
    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "Missing required subcommand (add, delete or show)");
    }

    /** Runs {@code body}; a refusal is printed as "hwlab link NAME: message" and exits 1. */
    static int refusing(CommandSpec spec, Callable<Integer> body) throws Exception {
        try {
            return body.call();
        } catch (IllegalArgumentException | IllegalStateException e) {
            PrintWriter err = spec.commandLine().getErr();
            err.println("hwlab link " + spec.name() + ": " + e.getMessage());
            err.flush();
            return HwLab.EXIT_FAILURE;
        }
    }

    @Command(name = "add", mixinStandardHelpOptions = true,
            description = {"Create rxe device NAME on network interface IFACE (rdma link add NAME type rxe netdev IFACE).",
                    "It receives on every address of IFACE; its GID table lists them as Linux does."})
    static final class AddCommand implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Parameters(arity = "3..5", paramLabel = "NAME [type rxe] netdev IFACE")
        List<String> words;

        @Override
        public Integer call() throws Exception {
            String name = words.get(0);
            List<String> rest = words.subList(1, words.size());
            if (rest.size() == 4 && rest.get(0).equals("type")) {
                if (!rest.get(1).equals("rxe")) {
                    throw new ParameterException(spec.commandLine(), "type must be rxe, not " + rest.get(1));
                }
                rest = rest.subList(2, 4);
            }
            if (rest.size() != 2 || !rest.get(0).equals("netdev")) {
                throw new ParameterException(spec.commandLine(), "usage: hwlab link add NAME [type rxe] netdev IFACE");
            }
            String netdev = rest.get(1);
            return refusing(spec, () -> {
                RxeLinks links = RxeLinks.fromEnvironment();
                links.add(name, netdev, RxeDeviceConfig.configured());
                PrintWriter out = spec.commandLine().getOut();
                out.printf("%s: rxe device on %s (%s)%n", name, netdev, links.file());
                out.flush();
                return 0;
            });
        }
    }

    @Command(name = "delete", aliases = "del", mixinStandardHelpOptions = true,
            description = "Delete rxe device NAME from the link file (rdma link delete NAME).")
    static final class DeleteCommand implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Parameters(index = "0", paramLabel = "NAME")
        String name;

        @Override
        public Integer call() throws Exception {
            return refusing(spec, () -> {
                RxeLinks.fromEnvironment().delete(name, RxeDeviceConfig.configured());
                return 0;
            });
        }
    }

    @Command(name = "show", aliases = "list", mixinStandardHelpOptions = true,
            description = {"Every rxe device as rdma link show prints it: link NAME/1 state ... netdev IFACE",
                    "(a device on one address shows that address instead of a netdev)."})
    static final class ShowCommand implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Parameters(arity = "0..1", paramLabel = "NAME")
        String only;

        @Override
        public Integer call() throws Exception {
            return refusing(spec, () -> {
                PrintWriter out = spec.commandLine().getOut();
                boolean found = false;
                for (RxeDeviceConfig c : RxeDeviceConfig.fromEnvironment()) {
                    String n = c.name();
                    if (only != null && !only.equals(n) && !only.equals(n + "/1")) {
                        continue;
                    }
                    found = true;
                    out.println(line(c));
                }
                out.flush();
                if (only != null && !found) {
                    throw new IllegalArgumentException("no rxe device " + only);
                }
                return 0;
            });
        }

        /** iproute2 rdma/link.c: "link %s/%u state %s physical_state %s netdev %s". */
        static String line(RxeDeviceConfig c) {
            if (c.netdev() == null) {
                return String.format("link %s/1 state ACTIVE physical_state LINK_UP address %s", c.name(),
                        c.address().getHostAddress());
            }
            boolean up;
            try {
                NetworkInterface nif = NetworkInterface.getByName(c.netdev());
                up = nif != null && nif.isUp();
            } catch (SocketException e) {
                up = false;
            }
            return String.format("link %s/1 state %s physical_state %s netdev %s", c.name(), up ? "ACTIVE" : "DOWN",
                    up ? "LINK_UP" : "DISABLED", c.netdev());
        }
    }
}
