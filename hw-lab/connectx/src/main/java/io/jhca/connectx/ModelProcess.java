package io.jhca.connectx;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The ConnectX model in a process of its own, serving one function the way a PCI device serves a machine:
 * <ul>
 *   <li>BAR0 is the start of a shared-memory file ({@code --bar}, e.g. {@code /dev/shm/cx-bar}: what QEMU's
 *       ivshmem-plain shows a guest as BAR2, at least {@value #BAR0_BYTES} bytes; 32 MiB is fine). The model zeroes
 *       its BAR0 range, powers on (firmware version, command interface revision, {@code initializing}) and from
 *       then on polls it for register writes and doorbells as the in-process model does; the health counter
 *       advances every 10 ms, as firmware's does, so the driver's health polling sees a live device.</li>
 *   <li>DMA reaches the driver machine's memory through a shared mapping of its RAM file ({@code --ram}, QEMU's
 *       {@code memory-backend-file,share=on}), IOVA = guest-physical address: file offset for the low part
 *       ({@code --low-ram BYTES}, default q35's: all of RAM below 0xB0000000, else 2 GiB), the rest at 4 GiB.
 *       Every DMA is checked against the file: a range outside it is a DMA fault (a command error or an error
 *       CQE), never an access outside the mapping.</li>
 *   <li>The RoCE port is {@code --address IP}: the model's rxe transport sends and receives RoCEv2 there.</li>
 *   <li>{@code --ram-address ADDR} maps the RAM file at that virtual address (optional). Peers name this function's
 *       memory by the driver's virtual addresses (RETH.VA); the model resolves them through the memory key's own
 *       translation (start address and MTT pages, IOVA, RAM-file offset) as hardware does, so a guest's virtual
 *       addresses work wherever RAM is mapped here.</li>
 *   <li>{@code --ivshmem-socket SOCK} (optional, with {@code --vectors N}, default {@value #DEFAULT_VECTORS}) makes
 *       the process the server of QEMU's ivshmem-doorbell ({@link IvshmemServer}): it listens on SOCK before it says
 *       ready, hands each connecting QEMU the BAR0 file as the guest's BAR2 and one eventfd per MSI-X vector, and
 *       raises vector eqc.intr of an armed EQ through that eventfd, so the guest's driver gets its EQ interrupts.
 *       Without it the function has no interrupts (ivshmem-plain: the driver polls).</li>
 * </ul>
 * When it serves, it prints one line {@code ready NAME ...} on standard output (and, as the ivshmem server, at the
 * end {@code ivshmem served=N connected=M raised=R0,R1,...}: clients served, still connected, interrupts raised
 * per vector). It runs until
 * standard input closes (the parent went away) or it is terminated; either stops the firmware thread and unmaps both
 * files.
 *
 * <pre>
 * java -cp ... io.jhca.connectx.ModelProcess --name mlx5_0 --bar /dev/shm/cx-bar --ram /dev/shm/cx-ram \
 *     --address 10.88.0.2 [--low-ram 0x80000000] [--ram-address 0x3f0000000000] \
 *     [--ivshmem-socket /run/cx.sock --vectors 8]
 * </pre>
 */
public final class ModelProcess implements AutoCloseable {

    /** Bytes of BAR0 the model serves (initialization segment and UAR pages). */
    public static final int BAR0_BYTES = ModelCaps.BAR0_PAGES * 4096;
    /** MSI-X vectors per ivshmem-doorbell client unless {@code --vectors} says otherwise. */
    public static final int DEFAULT_VECTORS = 8;

    private final String name;
    private final SharedMapping bar;
    private final GuestRam ram;
    private final ConnectXModel model;
    private final AgentRunner runner;
    private IvshmemServer ivshmem;
    private boolean closed;

    /** Maps both files and powers the function on (its firmware thread starts). */
    public ModelProcess(String name, Path barFile, Path ramFile, long lowRam, long ramAddress, InetAddress address) {
        this.name = name;
        this.bar = SharedMapping.map(barFile, BAR0_BYTES);
        GuestRam r = null;
        try {
            r = GuestRam.map(ramFile, lowRam > 0 ? lowRam : GuestRam.q35LowSize(java.nio.file.Files.size(ramFile)),
                    ramAddress);
            UnsafeBuffer barBuffer = new UnsafeBuffer(bar.address(), BAR0_BYTES);
            barBuffer.setMemory(0, BAR0_BYTES, (byte) 0); // what a previous run left there is not this power-on
            Iommu iommu = new Iommu();
            iommu.mapWindow(0, r.lowSize(), r.address());
            if (r.size() > r.lowSize()) {
                iommu.mapWindow(GuestRam.HIGH_BASE, r.size() - r.lowSize(), r.address() + r.lowSize());
            }
            this.ram = r;
            this.model = new ConnectXModel(name, address, barBuffer, iommu, InitSegmentDevice.DEFAULT_PRE_INIT_NANOS,
                    java.util.function.UnaryOperator.identity());
            this.runner = new AgentRunner(ModelConfig.idleStrategy("backoff"), this::failed, null, model);
        } catch (java.io.IOException e) {
            bar.close();
            throw new IllegalArgumentException("cannot map " + ramFile + ": " + e.getMessage(), e);
        } catch (RuntimeException e) {
            if (r != null) {
                r.close();
            }
            bar.close();
            throw e;
        }
        AgentRunner.startOnThread(runner, t -> {
            Thread th = new Thread(t, model.roleName());
            th.setDaemon(true);
            return th;
        });
    }

    private void failed(Throwable t) {
        model.counters().incrementAtomic(ModelCounters.Counter.MODEL_ERRORS);
        System.err.println("jhca connectx " + name + ": firmware thread error " + t);
    }

    public ConnectXModel model() {
        return model;
    }

    public GuestRam ram() {
        return ram;
    }

    /**
     * Serves BAR0's file to QEMU's ivshmem-doorbell on {@code socket} with {@code vectors} MSI-X vectors and sends
     * the model's interrupts there from now on. Call once, before QEMU starts.
     */
    public synchronized IvshmemServer serveIvshmem(Path socket, int vectors) {
        if (closed || ivshmem != null) {
            throw new IllegalStateException(closed ? "model process closed" : "already serving " + ivshmem.socket());
        }
        ivshmem = new IvshmemServer(socket, bar.file(), vectors);
        model.interrupts(ivshmem::raise);
        return ivshmem;
    }

    /** Stops the firmware thread (destroying every object and the wire), then unmaps BAR0 and RAM. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        runner.close();
        if (ivshmem != null) {
            ivshmem.close(); // after the firmware thread: nothing raises an interrupt any more
        }
        ram.close();
        bar.close();
    }

    public static void main(String[] args) throws IOException {
        Map<String, String> opts;
        try {
            opts = parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("ModelProcess: " + e.getMessage());
            System.err.println("usage: ModelProcess --name NAME --bar FILE --ram FILE --address IP [--low-ram BYTES]"
                    + " [--ram-address ADDR] [--ivshmem-socket SOCK [--vectors N]]");
            System.exit(2);
            return;
        }
        String name = opts.get("name");
        InetAddress address = ModelConfig.parse(name + "=" + opts.get("address")).get(name);
        long lowRam = opts.containsKey("low-ram") ? Long.decode(opts.get("low-ram")) : 0;
        long ramAddress = opts.containsKey("ram-address") ? Long.decode(opts.get("ram-address")) : 0;
        ModelProcess p = new ModelProcess(name, Path.of(opts.get("bar")), Path.of(opts.get("ram")), lowRam, ramAddress,
                address);
        Runtime.getRuntime().addShutdownHook(new Thread(p::close, "jhca-connectx-shutdown"));
        String irq = "";
        if (opts.containsKey("ivshmem-socket")) {
            int vectors = opts.containsKey("vectors") ? Integer.parseInt(opts.get("vectors")) : DEFAULT_VECTORS;
            IvshmemServer s = p.serveIvshmem(Path.of(opts.get("ivshmem-socket")), vectors);
            irq = " ivshmem-socket=" + s.socket() + " vectors=" + vectors;
        }
        PrintStream out = System.out;
        out.printf("ready %s bar=%s ram=%s (%d bytes, low part %d, mapped at 0x%x) port=%s%s%n", name, opts.get("bar"),
                opts.get("ram"), p.ram.size(), p.ram.lowSize(), p.ram.address(), address.getHostAddress(), irq);
        out.flush();
        InputStream in = System.in;
        byte[] sink = new byte[256];
        while (in.read(sink) >= 0) {
            // nothing is said on stdin: its end means the parent is gone
        }
        IvshmemServer s = p.ivshmem;
        if (s != null) {
            StringBuilder raised = new StringBuilder();
            for (int v = 0; v < s.vectors(); v++) {
                raised.append(v == 0 ? "" : ",").append(s.raised(v));
            }
            out.printf("ivshmem served=%d connected=%d raised=%s%s%n", s.served(), s.clients(), raised,
                    s.error() == null ? "" : " error=" + s.error());
            out.flush();
        }
        // every counter, zeros included, so that a parent can check the ones that must stay 0
        StringBuilder counters = new StringBuilder("counters");
        p.model.counters().snapshot().forEach((c, v) -> counters.append(' ').append(c.name().toLowerCase())
                .append('=').append(v));
        out.println(counters);
        out.flush();
        p.close();
        System.exit(0);
    }

    private static Map<String, String> parse(String[] args) {
        Map<String, String> m = new LinkedHashMap<>();
        for (int i = 0; i < args.length; i += 2) {
            if (!args[i].startsWith("--") || i + 1 >= args.length) {
                throw new IllegalArgumentException("expected --option value, got '" + args[i] + "'");
            }
            String key = args[i].substring(2);
            if (!key.matches("name|bar|ram|address|low-ram|ram-address|ivshmem-socket|vectors")) {
                throw new IllegalArgumentException("unknown option --" + key);
            }
            m.put(key, args[i + 1]);
        }
        for (String required : new String[] {"name", "bar", "ram", "address"}) {
            if (!m.containsKey(required)) {
                throw new IllegalArgumentException("--" + required + " is required");
            }
        }
        if (m.containsKey("vectors") && !m.containsKey("ivshmem-socket")) {
            throw new IllegalArgumentException("--vectors needs --ivshmem-socket");
        }
        return m;
    }
}
