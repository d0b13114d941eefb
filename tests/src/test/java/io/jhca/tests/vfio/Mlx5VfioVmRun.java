package io.jhca.tests.vfio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.RandomAccessFile;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import io.jhca.rxe.RxeContext;
import io.jhca.rxe.RxeDeviceConfig;
import io.jhca.rxe.RxeProvider;
import io.jhca.tests.vfio.guest.Exchange;
import io.jhca.tests.vfio.guest.Mlx5VfioGuestCheck;
import io.jhca.tests.vfio.guest.RcSide;
import io.jhca.tests.vfio.guest.TrafficPlan;
import io.jhca.testkit.ThreadPerTask;

/**
 * mlx5 over vfio end to end through the real kernel stack: the ConnectX model runs on the host as its own process
 * ({@code io.jhca.connectx.ModelProcess}) serving BAR0 from a shared-memory file that the VM's ivshmem function shows
 * the guest as its BAR2 and reaching the guest's RAM through the VM's RAM file (IOVA = guest-physical address). In
 * the guest, {@link Mlx5VfioGuestCheck} opens that function with the mlx5 provider through vfio-pci under the emulated
 * Intel IOMMU (test mode: ivshmem's IDs, BAR2, physical IOVAs), brings it up through the command queue, creates its
 * objects and runs every RC opcode both ways against an rxe device in this JVM, with content checks on both sides.
 * The two sides meet through files in the harness's job directory; the RoCE traffic runs on this host's loopback
 * between the model process and this JVM.
 *
 * <p>Two ways to present the function: ivshmem-plain (the BAR0 file as a memdev; no interrupts, the driver polls,
 * {@link Mlx5VfioVmTest}) and ivshmem-doorbell with the model process as its ivshmem server (the BAR0 file passed
 * over the server's socket; the model raises MSI-X vectors through eventfds, {@link Mlx5VfioDoorbellVmTest}). This
 * class is one boot of either, with the checks both share; the subclasses check what differs.
 *
 * <p>Skipped, with the reason, when not root or without qemu-system-x86_64; {@code -Djhca.vfio.vm=false} switches
 * it off with the other guest tests.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class Mlx5VfioVmRun {

    /** MSI-X vectors of ivshmem-doorbell: the driver uses vector 0 (the async EQ's). */
    static final int VECTORS = 4;
    private static final int GUEST_MIB = 1024;
    private static final long BAR_BYTES = 32L << 20;
    /** Boot, the guest JVM's start and the bring-up under TCG come before the first step. */
    private static final long STEP_MILLIS = 400_000;

    private Path out;

    private final boolean doorbell;
    private final String modelIp;
    private final String peerIp;
    private final String name;
    private String skip;
    private Path ramFile;
    private Path barFile;
    private Path socket;
    private Process model;
    private BufferedReader modelOut;
    /** What the model process printed after "ready", up to its exit (its ivshmem server's counts). */
    private final List<String> modelTail = new ArrayList<>();
    private RxeContext rxe;
    private DmaRegion rxeMem;
    private RcSide host;
    VfioVm.Run run;
    private Throwable hostFailure;
    long seed;
    private long millis;

    /** One boot with ivshmem-doorbell ({@code doorbell}) or ivshmem-plain, the model's port at modelIp. */
    Mlx5VfioVmRun(boolean doorbell, String modelIp, String peerIp, String name) {
        this.doorbell = doorbell;
        this.modelIp = modelIp;
        this.peerIp = peerIp;
        this.name = name;
    }

    @BeforeAll
    @Timeout(value = 900, unit = TimeUnit.SECONDS)
    void runBothSides(@TempDir Path dir) throws Exception {
        out = dir;
        skip = VfioVm.prepared(out);
        if (skip != null) {
            System.out.println(getClass().getSimpleName() + " skipped: " + skip);
            return;
        }
        long t0 = System.nanoTime();
        String tag = "jhca-mlx5-vm-" + ProcessHandle.current().pid() + "-" + name;
        ramFile = Path.of("/dev/shm", tag + "-ram");
        barFile = Path.of("/dev/shm", tag + "-bar");
        socket = out.resolve("cx.sock");
        size(ramFile, (long) GUEST_MIB << 20);
        size(barFile, BAR_BYTES);
        model = startModel();
        rxe = RxeProvider.open(RxeDeviceConfig.builder("rxe_" + name + "_peer").address(peerIp).build());
        rxeMem = DmaMemory.allocate(TrafficPlan.BUFFER);
        host = new RcSide(rxe, rxeMem, 0x654321);

        Map<String, String> env = new HashMap<>(Map.of("VFIO_VM_RAM_FILE", ramFile.toString(),
                "VFIO_VM_MEM", Integer.toString(GUEST_MIB), "VFIO_VM_TIMEOUT", "400"));
        if (doorbell) {
            env.put("VFIO_VM_IVSHMEM_SOCKET", socket.toString()); // the model serves BAR0's file there
            env.put("VFIO_VM_IVSHMEM_VECTORS", Integer.toString(VECTORS));
        } else {
            env.put("VFIO_VM_BAR_FILE", barFile.toString());
        }
        CompletableFuture<VfioVm.Run> vm = CompletableFuture.supplyAsync(() -> {
            try {
                return VfioVm.runJava(out, env, List.of(VfioVm.IVSHMEM), Mlx5VfioGuestCheck.class.getName(), "/tmp/job",
                        modelIp);
            } catch (IOException | InterruptedException e) {
                return new VfioVm.Run(-2, "run failed: " + e);
            }
        }, ThreadPerTask.EXECUTOR);
        try {
            hostSide(new Exchange(out.resolve("run/job"), STEP_MILLIS), vm);
        } catch (Throwable t) {
            hostFailure = t;
        }
        run = vm.get(900, TimeUnit.SECONDS);
        stopModel();
        millis = (System.nanoTime() - t0) / 1_000_000;
        System.out.println(getClass().getSimpleName() + ": whole run " + millis + " ms, seed " + seed);
    }

    /** Ends the model process (end of its stdin) and keeps what it printed after "ready". */
    private void stopModel() throws Exception {
        model.getOutputStream().close();
        CompletableFuture<Void> rest = CompletableFuture.runAsync(() -> {
            try {
                for (String l = modelOut.readLine(); l != null; l = modelOut.readLine()) {
                    modelTail.add(l);
                }
            } catch (IOException e) {
                modelTail.add("read failed: " + e);
            }
        }, ThreadPerTask.EXECUTOR);
        if (!model.waitFor(20, TimeUnit.SECONDS)) {
            model.destroyForcibly();
        }
        rest.get(20, TimeUnit.SECONDS);
    }

    /** What the model process printed after "ready", in order. */
    List<String> modelTail() {
        return modelTail;
    }

    /** The host's half: rxe as the guest's peer, first responder, then requester. */
    private void hostSide(Exchange x, CompletableFuture<VfioVm.Run> vm) throws Exception {
        seed = System.nanoTime();
        TrafficPlan plan = new TrafficPlan(seed);
        Properties guest = x.await("guest", vm::isDone);
        Map<String, Object> me = new HashMap<>(host.describe());
        me.put("seed", seed);
        x.put("host", me);
        x.await("guest-rts", vm::isDone);
        host.connect(guest);
        host.prepareResponder(plan, "guest");
        x.put("host-ready1", Map.of());
        x.await("guest-ready2", vm::isDone);
        host.checkResponder(plan, "guest");
        host.runRequester(plan, "host", guest);
        x.put("host-done2", Map.of());
        x.await("guest-done", vm::isDone);
    }

    private static void size(Path file, long bytes) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(bytes);
        }
    }

    /**
     * The model process on the two files, its port at modelIp, with doorbell the ivshmem server on the socket;
     * returns once it said "ready" (listening already).
     */
    private Process startModel() throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.startsWith("--add-opens") || a.startsWith("-Dagrona")) {
                cmd.add(a);
            }
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), "io.jhca.connectx.ModelProcess",
                "--name", "mlx5_vm0", "--bar", barFile.toString(), "--ram", ramFile.toString(), "--address", modelIp));
        if (doorbell) {
            cmd.addAll(List.of("--ivshmem-socket", socket.toString(), "--vectors", Integer.toString(VECTORS)));
        }
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        modelOut = r;
        String ready = CompletableFuture.supplyAsync(() -> {
            try {
                return r.readLine();
            } catch (IOException e) {
                return "read failed: " + e;
            }
        }, ThreadPerTask.EXECUTOR).get(60, TimeUnit.SECONDS);
        if (ready == null || !ready.startsWith("ready mlx5_vm0 ")) {
            p.destroyForcibly();
            throw new IllegalStateException("the model process said: " + ready);
        }
        return p;
    }

    @AfterAll
    void stop() throws Exception {
        if (host != null) {
            host.close();
        }
        if (rxe != null) {
            rxe.close();
        }
        if (rxeMem != null) {
            rxeMem.close();
        }
        if (model != null && model.isAlive()) {
            model.getOutputStream().close(); // end of stdin: the model stops
            if (!model.waitFor(20, TimeUnit.SECONDS)) {
                model.destroyForcibly();
            }
        }
        if (ramFile != null) {
            Files.deleteIfExists(ramFile);
            Files.deleteIfExists(barFile);
        }
    }

    @BeforeEach
    void prerequisites() {
        assumeTrue(skip == null, skip);
    }

    @Test
    void guestOpenedTheModelThroughVfioAndEveryCheckPassed() {
        assertEquals(0, run.exitStatus(), "guest run failed (seed " + seed + "):\n" + run.tail());
        List<String> checks = run.lines("check");
        assertTrue(checks.contains("listed ok"), run.tail());
        for (String c : checks) {
            assertTrue(c.endsWith(" ok"), "guest check: " + c + " (seed " + seed + ")");
        }
        // refused without the test mode, listed with it, 7 requester opcodes, 9 responder checks, the armed CQ's
        // event, teardown
        assertEquals(1 + 1 + 7 + 9 + 1 + 1, checks.size(), run.tail());
        assertTrue(checks.contains("cq-event guest ok"), run.tail());
        assertTrue(checks.contains("refused-without-test-mode ok"), run.tail());
        assertTrue(checks.contains("teardown ok"), run.tail());
    }

    /** The guest's {@code irq eq=N cmd=M} line as {eq, cmd}: its event thread's interrupt wake-ups. */
    long[] guestInterrupts() {
        List<String> irq = run.lines("irq");
        assertEquals(1, irq.size(), run.tail());
        String[] f = irq.get(0).split(" ");
        assertTrue(f.length == 3 && f[0].startsWith("eq=") && f[1].startsWith("cmd=") && f[2].startsWith("comp="),
                irq.get(0));
        return new long[] {Long.parseLong(f[0].substring(3)), Long.parseLong(f[1].substring(4)),
                Long.parseLong(f[2].substring(5))};
    }

    @Test
    void hwlabListsTheVfioFunctionBesideTheOthersAndDevinfoOpensIt() {
        String name = "mlx5_" + run.lines("vfio-bind:").stream().map(l -> l.split(" ")[0]).findFirst().orElse("?");
        List<String> devices = run.lines("hwlab-devices");
        assertTrue(devices.stream().anyMatch(l -> l.trim().startsWith(name + "\t") && !l.trim().endsWith("0000000000000000")),
                "hwlab devices lists " + name + " with its node GUID (known since bring-up):\n" + devices);
        assertTrue(devices.stream().anyMatch(l -> l.trim().startsWith("rxe0")), "and the other providers' devices: " + devices);
        List<String> devinfo = run.lines("hwlab-devinfo");
        assertTrue(devinfo.contains("hca_id:\t" + name), devinfo.toString());
        assertTrue(devinfo.contains("\tfw_ver:\t\t\t\t16.35.2000"), devinfo.toString());
    }

    /**
     * The model process's counters at its exit: none of the driver mistakes and model faults the in-process suite
     * never allows (ModelCounterChecks.NEVER).
     */
    @Test
    void theModelSawNoDriverMistakeAndNoFaultOfItsOwn() {
        String line = modelTail.stream().filter(l -> l.startsWith("counters ")).findFirst().orElse(null);
        assertTrue(line != null, "model process said: " + modelTail);
        Map<String, Long> c = new HashMap<>();
        for (String kv : line.substring("counters ".length()).split(" ")) {
            c.put(kv.substring(0, kv.indexOf('=')), Long.parseLong(kv.substring(kv.indexOf('=') + 1)));
        }
        assertTrue(c.get("commands") > 0, line);
        // cmd_doorbells_recovered is not among them: the event thread's page-request commands may meet the main
        // thread's in cmd_dbell (see ModelCounterChecks); stale queue pages are no longer scanned at all
        for (String never : List.of("sq_doorbell_mismatches", "model_errors", "eqes_dropped", "dma_faults")) {
            assertEquals(0L, c.get(never), never + " in " + line);
        }
    }

    @Test
    void hostRxePeerSawEveryOpcodeFromTheGuestAndGotEveryAnswer() {
        assertFalse(hostFailure != null, () -> "host side failed (seed " + seed + "): " + hostFailure + "\n" + run.tail());
        for (String r : host.results()) {
            assertTrue(r.endsWith(" ok"), "host check: " + r + " (seed " + seed + ")");
        }
        assertEquals(9 + 7, host.results().size(), host.results().toString());
    }
}
