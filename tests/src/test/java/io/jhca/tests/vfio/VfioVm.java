package io.jhca.tests.vfio;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import io.jhca.tests.vfio.guest.VfioChecks;

/**
 * Runs {@code scripts/vfio-vm} from the tests: checks its prerequisites, boots the guest with a Java main of this
 * module's test class path and hands back what it printed. The guest tests share one boot ({@link #shared()}):
 * under TCG the boot and the guest JVM's start cost more than the checks.
 */
final class VfioVm {

    /** Off switch for the guest tests: {@code -Djhca.vfio.vm=false}. */
    static final String SWITCH = "jhca.vfio.vm";
    static final String EDU = "1234:11e8";
    static final String NVME = "1b36:0010";
    static final String IVSHMEM = "1af4:1110";

    /** The script bounds boot (300 s) and the job (VFIO_VM_TIMEOUT); this is the outer limit of one run. */
    private static final long RUN_LIMIT_SECONDS = 420;
    private static final int JOB_TIMEOUT_SECONDS = 240;

    private static Shared shared;

    private VfioVm() {
    }

    /** What one guest run printed, and the JVM's exit status (or the script's, 124/125 for timeout/no boot). */
    record Run(int exitStatus, String output) {

        /** The output's lines that start with {@code prefix + " "}, without it. */
        List<String> lines(final String prefix) {
            List<String> found = new ArrayList<>();
            for (String line : output.split("\n")) {
                if (line.startsWith(prefix + " ")) {
                    found.add(line.substring(prefix.length() + 1));
                }
            }
            return found;
        }

        String tail() {
            return output.length() <= 8000 ? output : "..." + output.substring(output.length() - 8000);
        }
    }

    /**
     * The shared run: why it was skipped (null if it ran), its output, and what the host side of the ivshmem checks
     * saw (the word the host wrote, the guest's answer, requests served, an error of the host side).
     */
    record Shared(String skip, Run run, long seed, long hostWord, long guestWord, int served, String hostError) {
    }

    /**
     * Boots the guest once for all guest tests: edu, nvme and ivshmem bound to vfio-pci, {@link VfioChecks} with the
     * PCI listing and every check, ivshmem's BAR2 and the guest's RAM files served by a {@link HostBarServer}.
     */
    static synchronized Shared shared() throws IOException, InterruptedException {
        if (shared != null) {
            return shared;
        }
        Path out = Path.of("target", "vfio-vm-test").toAbsolutePath();
        String skip = prepared(out);
        if (skip != null) {
            System.out.println("vfio guest tests skipped: " + skip);
            shared = new Shared(skip, null, 0, 0, 0, 0, null);
            return shared;
        }
        long seed = Long.getLong("jhca.vfio.seed", new Random().nextLong());
        System.out.println("vfio guest tests: seed " + seed + " (replay with -Djhca.vfio.seed=" + seed + ")");
        long hostWord = new Random(seed).nextLong();
        // named like scripts/vfio-vm's own files (tag-PID-...), so that its clean removes them after a crash
        String prefix = "/dev/shm/jhca-vfio-vm-" + ProcessHandle.current().pid() + "-test";
        Path barFile = Path.of(prefix + "bar");
        Path ramFile = Path.of(prefix + "ram");
        Files.deleteIfExists(barFile);
        Files.deleteIfExists(ramFile);
        try (HostBarServer server = new HostBarServer(barFile, ramFile, hostWord)) {
            Run run = runJava(out, Map.of("VFIO_VM_BAR_FILE", barFile.toString(), "VFIO_VM_RAM_FILE",
                    ramFile.toString()), List.of(EDU, NVME, IVSHMEM), VfioChecks.class.getName(), "pci", "edu",
                    "nvme", "ivshmem", "--seed=" + seed, "--host-word=" + Long.toHexString(hostWord));
            shared = new Shared(null, run, seed, hostWord, server.guestWord(), server.served(), server.error());
        }
        return shared;
    }

    /**
     * Why the guest cannot run here, or null when it can: the switch, root (QEMU exports / over 9p and the guest
     * job runs as root) and QEMU on the PATH (scripts/test installs it).
     */
    static String skipReason() {
        if (!Boolean.parseBoolean(System.getProperty(SWITCH, "true"))) {
            return "vfio guest tests switched off with -D" + SWITCH + "=false";
        }
        try {
            Object uid = Files.getAttribute(Path.of("/proc/self"), "unix:uid");
            if (!Integer.valueOf(0).equals(uid)) {
                return "vfio guest tests need root (uid " + uid + ")";
            }
        } catch (IOException | UnsupportedOperationException e) {
            return "vfio guest tests: cannot tell the uid (" + e + ")";
        }
        if (!onPath("qemu-system-x86_64")) {
            return "vfio guest tests need qemu-system-x86_64 (Debian qemu-system-x86; scripts/test installs it)";
        }
        return null;
    }

    /**
     * Why the guest cannot run here ({@link #skipReason()}, or a failed {@code scripts/vfio-vm prepare}, which needs
     * the Debian archive once), or null once the guest kernel and initramfs are ready.
     */
    static String prepared(final Path out) throws IOException, InterruptedException {
        String skip = skipReason();
        if (skip == null) {
            Run prepare = run(out.resolve("prepare"), Map.of(), List.of("bash", script().toString(), "prepare"));
            if (prepare.exitStatus() != 0) {
                skip = "vfio guest tests: scripts/vfio-vm prepare failed (exit " + prepare.exitStatus() + "):\n"
                        + prepare.tail();
            }
        }
        return skip;
    }

    /**
     * Boots the guest, binds {@code binds} to vfio-pci and runs {@code mainClass} with this JVM's test class path;
     * the run's files go to {@code out}; {@code env} adds scripts/vfio-vm options (VFIO_VM_BAR_FILE, ...).
     */
    static Run runJava(final Path out, final Map<String, String> env, final List<String> binds,
                       final String mainClass, final String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("bash", script().toString(), "run-java"));
        for (String b : binds) {
            cmd.add("--bind");
            cmd.add(b);
        }
        cmd.add("-cp");
        cmd.add(System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")));
        cmd.add(mainClass);
        cmd.addAll(List.of(args));
        return run(out, env, cmd);
    }

    private static Run run(final Path out, final Map<String, String> env, final List<String> cmd)
            throws IOException, InterruptedException {
        Files.createDirectories(out);
        Path log = out.resolve("vfio-vm.log");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("VFIO_VM_OUT", out.resolve("run").toString());
        pb.environment().put("VFIO_VM_TIMEOUT", Integer.toString(JOB_TIMEOUT_SECONDS));
        pb.environment().putAll(env);
        Process p = pb.start();
        int status;
        if (p.waitFor(RUN_LIMIT_SECONDS, TimeUnit.SECONDS)) {
            status = p.exitValue();
        } else {
            p.destroy(); // SIGTERM: the script's trap kills QEMU and removes its files
            if (!p.waitFor(20, TimeUnit.SECONDS)) {
                p.destroyForcibly();
            }
            status = -1;
        }
        String output = Files.readString(log, StandardCharsets.UTF_8);
        System.out.println(output);
        return new Run(status, output);
    }

    private static boolean onPath(final String program) {
        for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) {
                return true;
            }
        }
        return false;
    }

    /** scripts/vfio-vm of the checkout: the nearest directory upwards from the working directory holding it. */
    private static Path script() {
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            Path s = d.resolve("scripts/vfio-vm");
            if (Files.isRegularFile(s)) {
                return s;
            }
        }
        throw new IllegalStateException("scripts/vfio-vm not found above " + Path.of("").toAbsolutePath());
    }
}
