package io.jhca.tests.vfio.guest;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Stream;

import io.jhca.lab.HwLab;
import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.Mlx5Context;
import io.jhca.mlx5.spi.InterruptLine;
import io.jhca.mlx5.vfio.VfioFunction;
import io.jhca.mlx5.vfio.VfioFunctionSource;
import io.jhca.mlx5.vfio.VfioSettings;
import io.jhca.verbs.Context;
import io.jhca.verbs.DeviceInfo;
import io.jhca.verbs.Verbs;

/**
 * Runs in the vfio guest (scripts/vfio-vm run-java): opens the ConnectX model, which the host serves through an
 * ivshmem function, with jhca's mlx5 provider through vfio-pci in the test mode (ivshmem's IDs, BAR2 as BAR0, IOVA =
 * guest-physical address so the model outside the VM can follow DMA), brings it up through the command queue,
 * creates PD, MR, CQ and an RC QP, and runs every RC opcode both ways against the host test's rxe device, meeting it
 * through {@link Exchange} files in the job directory.
 *
 * Then {@code hwlab devices} and {@code hwlab devinfo -d NAME} run against it (devinfo brings it up a second time).
 *
 * <p>Arguments: EXCHANGE_DIR MODEL_IP. Output, one fact a line: {@code device ...}, {@code mode ...},
 * {@code irq eq=WAKEUPS cmd=WAKEUPS_WITH_COMMAND_COMPLETIONS} (both 0 when polling), {@code wake none} when polling,
 * else {@code wake asked=ended-await|not-seen woken=N} (whether a wake-up from this thread ended an await of the
 * event thread; N the awaits a wake-up ended so far) and, after the close, {@code wake woken=N} (the stop's included
 * when it met the thread in an await),
 * {@code check NAME ok|FAIL: why}, {@code hwlab-devices LINE}, {@code hwlab-devinfo LINE}; exit status 0 when every
 * check passed.
 */
public final class Mlx5VfioGuestCheck {

    private static final String IVSHMEM = "1af4:1110";
    private static final long STEP_MILLIS = 240_000;

    private Mlx5VfioGuestCheck() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        String modelIp = args[1];
        Exchange x = new Exchange(dir, STEP_MILLIS);
        int status = 1;
        try {
            status = run(x, modelIp) ? 0 : 1;
        } catch (Throwable t) {
            System.out.println("check guest FAIL: " + t);
            t.printStackTrace(System.out);
            x.put("guest-failed", Map.of("error", String.valueOf(t)));
        }
        System.out.flush();
        System.exit(status);
    }

    private static boolean run(Exchange x, String modelIp) throws Exception {
        String bdf = ivshmem();
        System.setProperty("jhca.mlx5.sim", "none"); // only the function under test
        String name = VfioFunctionSource.nameOf(io.jhca.pci.PciAddress.parse(bdf));
        // without the test mode ivshmem is no ConnectX: not listed, and opening it is refused by name
        VfioFunctionSource plain = new VfioFunctionSource(io.jhca.pci.PciSysfs::system, () -> VfioSettings.NONE);
        String refusal;
        try {
            plain.open(name).close();
            refusal = "opened";
        } catch (IllegalArgumentException e) {
            refusal = e.getMessage();
        }
        boolean refused = plain.names().isEmpty() && refusal.contains("not a ConnectX-4 or later function");
        System.out.println("check refused-without-test-mode " + (refused ? "ok" : "FAIL: listed " + plain.names()
                + ", open: " + refusal));
        System.setProperty(VfioSettings.TEST_PROPERTY, IVSHMEM + ",bar=2,iova=physical");
        System.setProperty(VfioSettings.ADDRESSES_PROPERTY, bdf + "=" + modelIp);
        boolean listed = false;
        for (DeviceInfo d : Verbs.devices()) {
            System.out.println("device " + d.name() + " provider=" + d.provider());
            listed |= d.name().equals(name);
        }
        System.out.println("check listed " + (listed ? "ok" : "FAIL: " + name + " not among the devices"));
        long t0 = System.nanoTime();
        boolean ok;
        VfioFunction fn;
        try (Context ctx = Verbs.open(name)) {
            fn = (VfioFunction) ((Mlx5Context) ctx).function();
            System.out.printf("mode events=%s iova=%s bring-up %d ms fw=%s%n", fn.eventMode(), fn.iovaPolicy(),
                    (System.nanoTime() - t0) / 1_000_000, ctx.queryDevice().fwVer());
            try (DmaRegion mem = DmaMemory.allocate(TrafficPlan.BUFFER); RcSide guest = new RcSide(ctx, mem, 0x123456)) {
                x.put("guest", guest.describe());
                Properties host = x.await("host");
                TrafficPlan plan = new TrafficPlan(Long.parseLong(host.getProperty("seed")));
                System.out.println("seed " + plan.seed());
                guest.connect(host);
                x.put("guest-rts", Map.of());
                x.await("host-ready1"); // the host posted its receives and filled its buffer
                guest.runRequester(plan, "guest", host);
                guest.prepareResponder(plan, "host");
                x.put("guest-ready2", Map.of());
                x.await("host-done2");
                guest.checkResponder(plan, "host");
                guest.armedRead("guest", host); // a CQ event, by MSI-X vector 0 when the function has it
                Map<String, Object> done = new HashMap<>();
                done.put("ok", guest.allOk());
                x.put("guest-done", done);
                for (String r : guest.results()) {
                    System.out.println("check " + r);
                }
                // with MSI-X the event thread sleeps on vector 0: its wake-ups, those that found command
                // completions (every command since bring-up completes with a CMD entry on the async EQ), and those
                // that found completion events (the armed read's COMP entry)
                Mlx5Context m = (Mlx5Context) ctx;
                System.out.printf("irq eq=%d cmd=%d comp=%d%n", m.eqInterrupts(), m.commandInterrupts(),
                        m.completionInterrupts());
                wakeTheEventThread(fn);
                ok = refused && listed && guest.allOk();
            }
        }
        // closing the context tore the HCA down (TEARDOWN_HCA, pages reclaimed) and closed the function
        boolean clean = fn.isClosed() && fn.leakedMappingsAtClose() == 0;
        if (fn.eqInterrupt() != null) {
            System.out.println("wake woken=" + fn.eqWakeUps());
        }
        System.out.println("check teardown " + (clean ? "ok" : "FAIL: function closed " + fn.isClosed() + ", "
                + fn.leakedMappingsAtClose() + " DMA mappings of driver memory left at close"));
        return ok && clean & hwlab("devices") & hwlab("devinfo", "-d", name);
    }

    /**
     * With MSI-X the driver's event thread sleeps on the line (up to its health poll period at a time): a wake-up from
     * this thread must end its current or next await by the line's wake eventfd, which the line counts. The thread
     * is the line's only waiter, so this one only wakes it and watches the count.
     */
    private static void wakeTheEventThread(VfioFunction fn) throws InterruptedException {
        InterruptLine line = fn.eqInterrupt();
        if (line == null) {
            System.out.println("wake none");
            return;
        }
        long before = fn.eqWakeUps();
        line.wakeUp();
        long deadline = System.nanoTime() + 30_000_000_000L; // a bound against a hang, not a measure
        while (fn.eqWakeUps() == before && System.nanoTime() - deadline < 0) {
            Thread.sleep(1);
        }
        long woken = fn.eqWakeUps();
        System.out.println("wake asked=" + (woken > before ? "ended-await" : "not-seen") + " woken=" + woken);
    }

    /** Runs an hwlab command in this JVM and prints its lines as "hwlab-CMD LINE" (devinfo opens the function again). */
    private static boolean hwlab(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int rc = HwLab.execute(args, new PrintWriter(out, true), new PrintWriter(err, true));
        for (String line : out.toString().split("\n")) {
            System.out.println("hwlab-" + args[0] + " " + line);
        }
        if (rc != 0) {
            System.out.println("check hwlab " + args[0] + " FAIL: exit " + rc + ": " + err);
        }
        return rc == 0;
    }

    /** The ivshmem function bound to vfio-pci (the harness binds it). */
    private static String ivshmem() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/sys/bus/pci/devices"))) {
            List<Path> all = s.sorted().toList();
            for (Path d : all) {
                String id = Files.readString(d.resolve("vendor")).trim().replace("0x", "") + ":"
                        + Files.readString(d.resolve("device")).trim().replace("0x", "");
                if (id.equals(IVSHMEM)) {
                    return d.getFileName().toString();
                }
            }
        }
        throw new IllegalStateException("no " + IVSHMEM + " function in the guest");
    }
}
