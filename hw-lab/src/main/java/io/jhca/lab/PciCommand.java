package io.jhca.lab;

import io.jhca.pci.PciAddress;
import io.jhca.pci.PciBinder;
import io.jhca.pci.PciException;
import io.jhca.pci.PciFunction;
import io.jhca.pci.PciSysfs;
import io.jhca.vfio.Syscalls;
import io.jhca.vfio.VfioContainer;
import io.jhca.vfio.VfioDevice;
import io.jhca.vfio.VfioException;
import io.jhca.vfio.VfioReport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code hwlab pci list|bind|unbind}: PCI functions from sysfs, and binding them to vfio-pci (or back) as
 * dpdk-devbind and SPDK's setup.sh do. Refusals exit 1 with what is wrong and what to do.
 */
@Command(name = "pci", mixinStandardHelpOptions = true,
        description = "PCI functions: list them, bind them to vfio-pci, unbind them, show what VFIO reports.",
        subcommands = {PciCommand.ListCommand.class, PciCommand.BindCommand.class, PciCommand.UnbindCommand.class,
                PciCommand.InfoCommand.class})
public final class PciCommand implements Runnable {
    /** Replaces the sysfs writes of bind and unbind (tests run them on fixture trees with a fake kernel). */
    static volatile PciBinder.SysfsWriter writerForTests;

    @Spec
    CommandSpec spec;

    @Override
    public void run() {
        throw new ParameterException(spec.commandLine(), "Missing required subcommand (list, bind, unbind or info)");
    }

    /** The hidden option that points every path at a fixture tree (DIR/sys, DIR/dev, DIR/proc). */
    static final class Roots {
        @Option(names = "--sysfs-root", hidden = true, paramLabel = "DIR",
                description = "read DIR/sys, DIR/dev and DIR/proc instead of /sys, /dev and /proc")
        Path root;

        PciSysfs sysfs() {
            return root != null ? PciSysfs.underRoot(root) : PciSysfs.system();
        }

        PciBinder binder() {
            PciBinder.SysfsWriter w = writerForTests;
            return w != null ? new PciBinder(sysfs(), w) : new PciBinder(sysfs());
        }
    }

    /** Runs {@code body}; a refusal is printed as "hwlab pci NAME: message" and exits 1. */
    static int refusing(CommandSpec spec, Callable<Integer> body) throws Exception {
        try {
            return body.call();
        } catch (PciException | VfioException | IllegalArgumentException e) {
            PrintWriter err = spec.commandLine().getErr();
            err.println("hwlab pci " + spec.name() + ": " + e.getMessage());
            err.flush();
            return HwLab.EXIT_FAILURE;
        }
    }

    @Command(name = "list", mixinStandardHelpOptions = true,
            description = {"Every PCI function, as lspci -nn prints it, with its driver, IOMMU group and NUMA node."})
    static final class ListCommand implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        Roots roots;
        @Option(names = "-d", paramLabel = "VENDOR:DEVICE", description = "only functions with this id (hex), as lspci -d")
        String id;

        @Override
        public Integer call() throws Exception {
            return refusing(spec, () -> {
                int vendor = -1;
                int device = -1;
                if (id != null) {
                    String[] v = id.split(":", -1);
                    if (v.length != 2) {
                        throw new IllegalArgumentException("-d wants VENDOR:DEVICE in hex, e.g. 15b3:1017, not '" + id + "'");
                    }
                    vendor = v[0].isEmpty() ? -1 : Integer.parseInt(v[0], 16);
                    device = v[1].isEmpty() ? -1 : Integer.parseInt(v[1], 16);
                }
                PrintWriter out = spec.commandLine().getOut();
                for (PciFunction f : roots.sysfs().list()) {
                    if ((vendor < 0 || f.vendor() == vendor) && (device < 0 || f.device() == device)) {
                        out.println(f.describe());
                    }
                }
                out.flush();
                return 0;
            });
        }
    }

    @Command(name = "bind", mixinStandardHelpOptions = true,
            description = {"Bind functions to a driver (driver_override, unbind, drivers_probe).",
                    "All functions of an IOMMU group must be bound to vfio-pci together."})
    static final class BindCommand implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        Roots roots;
        @Parameters(arity = "2..*", paramLabel = "BDF... DRIVER",
                description = "PCI addresses (0000:00:03.0), then the driver (e.g. vfio-pci)")
        List<String> args;

        @Override
        public Integer call() throws Exception {
            return refusing(spec, () -> {
                List<PciAddress> addresses = new ArrayList<>();
                for (String a : args.subList(0, args.size() - 1)) {
                    addresses.add(PciAddress.parse(a));
                }
                PrintWriter out = spec.commandLine().getOut();
                for (String line : roots.binder().bind(addresses, args.get(args.size() - 1))) {
                    out.println(line);
                }
                out.flush();
                return 0;
            });
        }
    }

    @Command(name = "unbind", mixinStandardHelpOptions = true,
            description = "Unbind functions from their drivers and clear their driver_override.")
    static final class UnbindCommand implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        Roots roots;
        @Parameters(arity = "1..*", paramLabel = "BDF", description = "PCI addresses (0000:00:03.0)")
        List<String> args;

        @Override
        public Integer call() throws Exception {
            return refusing(spec, () -> {
                List<PciAddress> addresses = new ArrayList<>();
                for (String a : args) {
                    addresses.add(PciAddress.parse(a));
                }
                PciBinder binder = roots.binder();
                PrintWriter out = spec.commandLine().getOut();
                for (PciAddress a : addresses) {
                    out.println(binder.unbind(a));
                }
                out.flush();
                return 0;
            });
        }
    }

    @Command(name = "info", mixinStandardHelpOptions = true,
            description = {"Open a function bound to vfio-pci and print what VFIO reports: IOMMU, regions, IRQs."})
    static final class InfoCommand implements Callable<Integer> {
        @Spec
        CommandSpec spec;
        @Mixin
        Roots roots;
        @Option(names = "--unsafe-noiommu", description = "accept vfio's no-IOMMU mode (no DMA isolation)")
        boolean noIommu;
        @Parameters(arity = "1", paramLabel = "BDF", description = "PCI address (0000:00:03.0)")
        String bdf;

        @Override
        public Integer call() throws Exception {
            return refusing(spec, () -> {
                PciSysfs sysfs = roots.sysfs();
                PciFunction f = sysfs.function(PciAddress.parse(bdf));
                if (!f.boundTo(PciBinder.VFIO_PCI)) {
                    throw new PciException(f.address() + ": bound to " + (f.driver() == null ? "no driver" : f.driver())
                            + ", not vfio-pci: hwlab pci bind " + f.address() + " vfio-pci first");
                }
                PrintWriter out = spec.commandLine().getOut();
                out.println(f.describe());
                try (VfioContainer c = VfioContainer.open(Syscalls.linux(), sysfs.devRoot(), noIommu);
                     VfioDevice d = c.openDevice(f)) {
                    for (String line : VfioReport.describe(c, d)) {
                        out.println("  " + line);
                    }
                }
                out.flush();
                return 0;
            });
        }
    }
}
